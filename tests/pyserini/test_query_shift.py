"""The query-time SHIFT inside ``pyserini.search.faiss`` (issue 16): the Pyserini search wrapper with
``--query-shift`` writes the run ``mlirkit.search --query-shift`` writes, and that equals searching each
query in the index re-based for its own language. These tests share the pytest process's JVM."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc, Query

pytestmark = [pytest.mark.slow, pytest.mark.jvm]

MAX_LENGTH = 64
HITS = 12
WORDS = ["ferry", "package", "file", "river", "window", "garden", "engine", "letter"]
LANG_FORMS = (("en", "the", "is here"), ("de", "der", "ist hier"), ("fr", "le", "est ici"),
              ("und", "??", "??"), ("ja", "これは", "です"))  # und: unknown language, ja: no vector
QUERIES = [Query("q1", "ferry here", "en"), Query("q2", "Fähre hier", "de"), Query("q3", "le fichier", "fr"),
           Query("q4", "the river garden", "de"), Query("q5", "engine", "fr"), Query("q6", "window", "en"),
           Query("q7", "窓です", "ja")]


@pytest.fixture(scope="module")
def jvm():
    from mlirkit.pyserini import boot_jvm, register

    info = boot_jvm()
    register()
    return info


@pytest.fixture(scope="module")
def beds(tiny_encoder, tmp_path_factory):
    """A SHIFT transform (en pivot, de/fr vectors), its flat and HNSW indexes with embeddings.npy, the
    de/fr re-based indexes, and the mixed-language topics (TSV with a lang column, read by both tools)."""
    from mlirkit.encode import Indexer
    from mlirkit.transforms import save_transform
    from tests.helpers import fit_from_groups
    from mlirkit.transforms.parallel import ParallelGroup
    from mlirkit.transforms.shift_transform import derive_source

    d = tmp_path_factory.mktemp("pyserini-qshift")
    pairs = [ParallelGroup(str(i), {"en": f"the {w} is here", "de": f"der {w} ist hier", "fr": f"le {w} est ici"})
             for i, w in enumerate(WORDS[:5])]
    t, _ = fit_from_groups(tiny_encoder, pairs, method="shift", source_lang="en")
    save_transform(t, d / "shift.safetensors")
    docs = [Doc(f"{w}-{la}", f"{pre} {w} {post}", la) for w in WORDS for la, pre, post in LANG_FORMS]
    for name, kind in (("pivot", None), ("pivot-hnsw", "hnsw")):
        Indexer(d / name, tiny_encoder, transform=d / "shift.safetensors", alpha=0.7, save_embeddings=True,
                show_progress=False, index_type=kind).index(docs)
    Indexer(d / "plain", tiny_encoder, save_embeddings=True, show_progress=False).index(docs)
    rebased = {"en": d / "pivot", "ja": d / "pivot"}  # ja has no vector: the index as built
    for s in ("de", "fr"):
        save_transform(derive_source(t, s), d / f"shift-{s}.safetensors")
        Indexer(d / f"rebased-{s}", tiny_encoder, transform=d / f"shift-{s}.safetensors", alpha=0.7,
                show_progress=False).index(docs)
        rebased[s] = d / f"rebased-{s}"
    topics = d / "topics.tsv"
    topics.write_text("".join(f"{q.query_id}\t{q.text}\t{q.lang}\n" for q in QUERIES), encoding="utf-8")
    return d, rebased, topics


def ranked(path) -> dict[str, list[tuple[str, float]]]:
    from mlirkit.io.trec import read_run

    return {q: sorted(hits.items(), key=lambda h: (-h[1], h[0])) for q, hits in read_run(path).items()}


def assert_same(a, b, atol=1e-5):
    assert sorted(a) == sorted(b)
    for qid in a:
        assert [d for d, _ in a[qid]] == [d for d, _ in b[qid]], qid
        np.testing.assert_allclose([s for _, s in a[qid]], [s for _, s in b[qid]], atol=atol)


def pyserini_run(index, topics, out, model_dir, *extra) -> dict:
    from mlirkit.pyserini.search.cli import main

    assert main(["--encoder-option", f"max_length={MAX_LENGTH}", *extra, "--index", str(index),
                 "--topics", str(topics), "--output", str(out), "--encoder-class", "mlirkit-hf",
                 "--encoder", str(model_dir), "--hits", str(HITS), "--batch-size", "3"]) == 0
    return ranked(out)


def mlirkit_run(index, topics, out, model_dir, *extra) -> dict:
    from mlirkit.search.cli import main

    assert main(["--index", str(index), "--topics", str(topics), "--output", str(out), "--encoder", str(model_dir),
                 "--encoder-class", "hf", "--encoder-option", f"max_length={MAX_LENGTH}", "--hits", str(HITS), "--quiet",
                 *extra]) == 0
    return ranked(out)


def rebased_reference(rebased, tiny_encoder) -> dict:
    from mlirkit.search.searcher import Searcher

    return {q.query_id: [(h.doc_id, h.score) for h in Searcher(rebased[q.lang], tiny_encoder).search([q], k=HITS)[q.query_id]]
            for q in QUERIES}


def test_wrapper_query_shift_equals_mlirkit_search_and_rebased_indexes(jvm, beds, tiny_model_dir, tiny_encoder,
                                                                        tmp_path, capsys):
    import json

    d, rebased, topics = beds
    ours = pyserini_run(d / "pivot", topics, tmp_path / "p.trec", tiny_model_dir, "--query-shift", "cosine")
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["query_shift"]
    assert report["metric"] == "cosine" and report["alpha"] == 0.7 and report["candidates"] is None
    assert report["counts"] == {"pivot_fallback:ja": 1}
    assert_same(ours, mlirkit_run(d / "pivot", topics, tmp_path / "m.trec", tiny_model_dir, "--query-shift", "cosine"))
    assert_same(ours, rebased_reference(rebased, tiny_encoder))
    # the test has teeth: Pyserini's own scores of the pivot index differ for the de/fr queries
    plain = pyserini_run(d / "pivot", topics, tmp_path / "plain.trec", tiny_model_dir)
    assert any(abs(a[1] - b[1]) > 1e-3 for q in QUERIES if q.lang in ("de", "fr")
               for a, b in zip(plain[q.query_id], ours[q.query_id]))
    for q in QUERIES:
        if q.lang in ("en", "ja"):
            np.testing.assert_allclose([s for _, s in plain[q.query_id]], [s for _, s in ours[q.query_id]], atol=1e-5)


@pytest.mark.parametrize("extra", [("--query-shift", "ip", "--alpha", "0.4"),
                                   ("--alpha", "0.5,de=1.0"),
                                   ("--query-shift", "cosine", "--transform", "SHIFT", "--alpha", "0.9")])
def test_wrapper_alpha_metric_and_transform_at_query_time(jvm, beds, tiny_model_dir, tmp_path, extra):
    d, _, topics = beds
    index = d / "pivot"
    if "SHIFT" in extra:  # a plain index with saved embeddings + a transform given at search time
        index, extra = d / "plain", tuple(str(d / "shift.safetensors") if x == "SHIFT" else x for x in extra)
    ours = pyserini_run(index, topics, tmp_path / "p.trec", tiny_model_dir, *extra)
    assert_same(ours, mlirkit_run(index, topics, tmp_path / "m.trec", tiny_model_dir, *extra))


def test_wrapper_hnsw_candidates_rescored_as_mlirkit_search(jvm, beds, tiny_model_dir, tmp_path):
    d, _, topics = beds
    for candidates in ("20", "40"):
        extra = ("--query-shift", "cosine", "--candidates", candidates)
        ours = pyserini_run(d / "pivot-hnsw", topics, tmp_path / f"p{candidates}.trec", tiny_model_dir, *extra)
        assert_same(ours, mlirkit_run(d / "pivot-hnsw", topics, tmp_path / f"m{candidates}.trec", tiny_model_dir, *extra))
    # 40 candidates = every document: exact, the flat index's exhaustive ranking
    exact = mlirkit_run(d / "pivot", topics, tmp_path / "flat.trec", tiny_model_dir, "--query-shift", "cosine")
    assert_same(ours, exact)


def test_searcher_single_and_batch_agree_and_prf_is_refused(jvm, beds, tiny_encoder):
    from mlirkit.index import DenseIndex
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.pyserini.query_shift import QueryShiftFaissSearcher
    from mlirkit.search.query_shift import plan_for_index

    d, rebased, _ = beds
    plan = plan_for_index(DenseIndex(d / "pivot"))
    langs = {q.text: q.lang for q in QUERIES}
    searcher = QueryShiftFaissSearcher(str(d / "pivot"), MlirkitQueryEncoder(encoder=tiny_encoder, query_langs=langs),
                                       plan=plan, query_langs=langs)
    want = rebased_reference(rebased, tiny_encoder)
    batch = searcher.batch_search([q.text for q in QUERIES], [q.query_id for q in QUERIES], k=HITS)
    for q in QUERIES:
        single = [(h.docid, h.score) for h in searcher.search(q.text, k=HITS)]
        assert [x for x, _ in single] == [h.docid for h in batch[q.query_id]]  # scores: batch-size rounding only
        np.testing.assert_allclose([s for _, s in single], [h.score for h in batch[q.query_id]], atol=1e-6)
        assert [x for x, _ in single] == [x for x, _ in want[q.query_id]]
        np.testing.assert_allclose([s for _, s in single], [s for _, s in want[q.query_id]], atol=1e-5)
    with pytest.raises(MlirkitError, match="PRF"):
        searcher.search(QUERIES[0].text, k=3, return_vector=True)
    with pytest.raises(MlirkitError, match="query dicts"):
        searcher.batch_search([{"text": "x"}], ["q"], k=3)


def test_searcher_batches_warn_once_about_the_pivot_fallback(jvm, beds, tiny_encoder, caplog):
    """Pyserini calls batch_search once per batch of topics: the ja query (no vector) is warned about once
    per run, later batches log it at DEBUG level."""
    from mlirkit.index import DenseIndex
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.pyserini.query_shift import searcher_class
    from mlirkit.search.query_shift import plan_for_index

    d, _, _ = beds
    langs = {q.text: q.lang for q in QUERIES}
    searcher = searcher_class(plan_for_index(DenseIndex(d / "pivot")), query_langs=langs)(
        str(d / "pivot"), MlirkitQueryEncoder(encoder=tiny_encoder, query_langs=langs))
    with caplog.at_level("DEBUG", logger="mlirkit.search.query_shift"):
        for batch in (QUERIES[4:], QUERIES[5:], QUERIES[:2]):  # ja in the first two batches
            searcher.batch_search([q.text for q in batch], [q.query_id for q in batch], k=3)
    records = [(r.levelname, r.getMessage()) for r in caplog.records if "scored with the pivot" in r.getMessage()]
    assert [level for level, _ in records] == ["WARNING", "DEBUG"]
    assert records[0][1].startswith("1 of 3 queries scored with the pivot 'en' (no vector for their language: ja 1)")


def test_wrapper_refuses_query_shift_without_an_mlirkit_index_or_with_prf(jvm, beds, tiny_model_dir, tmp_path):
    import shutil

    from mlirkit.pyserini.search.cli import main

    d, _, topics = beds
    bare = tmp_path / "bare"  # what Pyserini itself writes: index + docid only
    bare.mkdir()
    for name in ("index", "docid"):
        shutil.copyfile(d / "pivot" / name, bare / name)
    common = ["--index", str(bare), "--topics", str(topics), "--output", str(tmp_path / "r.trec"),
              "--encoder-class", "mlirkit-hf", "--encoder", str(tiny_model_dir)]
    with pytest.raises(MlirkitError, match="needs an mlirkit index directory"):
        main(["--query-shift", "cosine", *common])
    common[1] = str(d / "pivot")
    with pytest.raises(MlirkitError, match="PRF"):
        main(["--query-shift", "cosine", *common, "--prf-depth", "3"])
    with pytest.raises(MlirkitError, match="SHIFT index or a shift transform"):
        main(["--query-shift", "cosine", *[str(d / "plain") if x == str(d / "pivot") else x for x in common]])
