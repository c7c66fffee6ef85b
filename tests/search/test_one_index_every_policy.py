"""One index for every query language stays exact under every policy for languages without pairs: with the
default (filled from the corpus) and with ``missing="keep"``, one SHIFT index searched with the query-time
shift (cosine) ranks every query as its language's re-based index does (``derive_source`` to the query
language, then ``apply_to_index`` with the same policy), on a bed whose pairs lack two of the corpus's
languages. A filled language's vector is defined relative to the pivot of the pairs and re-based like the others
(mlirkit/transforms/hybrid.py), and the query-time shift follows the policy the index was built with. Each
re-based index applies what the fit step for its missing languages returned (``fill_missing_from_index``)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.io.records import Doc, Query
from mlirkit.testing.fake_encoder import FakeEncoder
from mlirkit.transforms import derive_source, save_transform

WORDS = "ferry file package library image tool night river city paper harbour bridge window garden".split()
PAIR_LANGS = ("de", "fr", "es")  # the pairs: English pivot, three target languages
CORPUS_LANGS = ("en", "de", "fr", "es", "ja", "ko")  # ja and ko have no pairs


def bed():
    rng = np.random.default_rng(5)
    enc = FakeEncoder(dim=24, lang_strength=0.8)
    from mlirkit.transforms import ShiftTransform

    texts = [" ".join(rng.choice(WORDS, size=4)) for _ in range(60)]
    x, langs, groups = [], [], []
    for g, text in enumerate(texts[:30]):  # translation pairs: the same words in each language
        for la in ("en", *PAIR_LANGS):
            x.append(enc.encode_docs([text], [la])[0])
            langs.append(la)
            groups.append(g)
    t = ShiftTransform("en").fit(np.asarray(x), langs, groups)
    t.encoder = enc.fingerprint
    docs = [Doc(f"{la}-{i}", " ".join([*rng.choice(WORDS, size=rng.integers(3, 7)), f"{la}{i}"]), la)
            for la in CORPUS_LANGS for i in range(25)]  # a word of its own: no two documents tie
    queries = [Query(f"q-{la}-{i}", " ".join(rng.choice(WORDS, size=3)), la) for la in ("en", *PAIR_LANGS)
               for i in range(12)]
    return enc, t, docs, queries


@pytest.mark.parametrize("missing", [None, "keep"])
def test_query_time_shift_ranks_as_the_rebased_index_of_each_query_language(tmp_path, missing):
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex
    from mlirkit.search.searcher import Searcher
    from mlirkit.shift import apply_to_index, fill_missing_from_index

    enc, t, docs, queries = bed()
    save_transform(t, tmp_path / "pivot.shift")
    Indexer(tmp_path / "one", enc, transform=tmp_path / "pivot.shift", alpha=0.9, save_embeddings=True,
            show_progress=False, missing=missing).index(docs)
    recorded = DenseIndex(tmp_path / "one").transform["missing_languages"]
    assert recorded["policy"] == (missing or "corpus")
    assert (set(recorded["filled"]) if missing is None else set(recorded["kept"])) == {"ja", "ko"}
    one = Searcher(tmp_path / "one", enc, query_shift="cosine").search(queries, k=30)
    Indexer(tmp_path / "plain", enc, save_embeddings=True, show_progress=False).index(docs)
    compared = 0
    for s in ("en", *PAIR_LANGS):
        rebased = t if s == "en" else derive_source(t, s)
        save_transform(rebased, tmp_path / f"{s}.shift")
        step = fill_missing_from_index(tmp_path / "plain", tmp_path / f"{s}.shift", missing=missing)  # the fit step
        apply_to_index(tmp_path / "plain", step, tmp_path / f"index-{s}", alpha=0.9, missing=missing)
        mine = [q for q in queries if q.lang == s]
        per_language = Searcher(tmp_path / f"index-{s}", enc).search(mine, k=30)
        for q in mine:
            assert [h.doc_id for h in one[q.query_id]] == [h.doc_id for h in per_language[q.query_id]], (s, q.query_id)
            np.testing.assert_allclose([h.score for h in one[q.query_id]],
                                       [h.score for h in per_language[q.query_id]], atol=2e-5)
            compared += 1
    assert compared == len(queries) == 48


def test_told_otherwise_the_query_time_shift_overrides_the_recorded_policy(tmp_path):
    from mlirkit.encode import Indexer
    from mlirkit.search.searcher import Searcher

    enc, t, docs, queries = bed()
    save_transform(t, tmp_path / "pivot.shift")
    Indexer(tmp_path / "keep", enc, transform=tmp_path / "pivot.shift", save_embeddings=True, show_progress=False,
            missing="keep").index(docs)
    kept = Searcher(tmp_path / "keep", enc, query_shift="cosine")
    filled = Searcher(tmp_path / "keep", enc, query_shift="cosine", missing="corpus")
    assert kept.search(queries, k=30) != filled.search(queries, k=30)
