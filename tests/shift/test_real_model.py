"""End to end with the real offline multilingual-e5-small on a slice of the shared parallel text (slow)."""
from __future__ import annotations

import json
from itertools import islice

import numpy as np
import pytest

pytestmark = pytest.mark.slow

LANGS = ["en", "de", "fr", "ja"]


@pytest.fixture(scope="module")
def e5():
    from mlirkit.encoders import load_encoder
    return load_encoder("multilingual-e5-small-q4", backend="auto")  # what a user gets (the suite pins torch)


def test_three_methods_fit_encode_search_posthoc(tmp_path, e5, shared_data):
    from mlirkit.encode import Indexer
    from mlirkit.eval import evaluate
    from mlirkit.index import DenseIndex
    from mlirkit.io.records import Doc, Query
    from mlirkit.search.searcher import Searcher
    from mlirkit.transforms import load_transform, save_transform
    from tests.helpers import fit_from_groups
    from mlirkit.transforms.parallel import open_parallel
    from mlirkit.shift.posthoc import apply_to_index

    groups = [g for g in islice(open_parallel(str(shared_data / "libreoffice-help/segments.jsonl.gz")), 200)
              if all(l in g.texts for l in LANGS)]
    fit_groups, test_groups = groups[:12], groups[12:42]
    docs = [Doc(f"{g.id}|{l}", g.texts[l], l) for g in test_groups for l in LANGS]
    queries = [Query(f"q{i}", g.texts["en"], "en") for i, g in enumerate(test_groups)]
    # every translation of a query's segment is relevant; TLR counts the non-English ones
    qrels = {f"q{i}": {f"{g.id}|{l}": 1 for l in LANGS} for i, g in enumerate(test_groups)}
    doc_langs = {d.doc_id: d.lang for d in docs}
    for method in ("shift", "centering", "lir"):
        t, report = fit_from_groups(e5, fit_groups, method=method, source_lang="en", langs=LANGS, batch_size=32)
        assert report.groups_used == 12
        path = save_transform(t, tmp_path / f"{method}.st")
        t = load_transform(path)
        assert t.encoder == e5.fingerprint and t.meta["normalized"] is True and t.meta["prefix"] == "passage: "
        if method == "shift":
            # e5 language vectors are small but clearly non-zero
            assert all(0.01 < np.linalg.norm(v) < 1.0 for v in t.params_.values())
        Indexer(tmp_path / f"{method}-direct", e5, transform=path, alpha=0.8, save_embeddings=True,
                show_progress=False).index(docs)
        if method == "shift":
            Indexer(tmp_path / "plain", e5, save_embeddings=True, show_progress=False).index(docs)
            # the effect on real text: fewer English documents in the top 3, more of the translations found
            runs = {name: Searcher(tmp_path / idx, e5).search(queries, k=10).to_run()
                    for name, idx in (("plain", "plain"), ("shift", "shift-direct"))}
            table = evaluate(qrels, runs, ["samelang@3", "tlr@3"], doc_langs=doc_langs, query_langs="en",
                             significance=None).table
            print(table.to_string())
            assert table.loc["shift", "samelang@3"] < table.loc["plain", "samelang@3"]
            assert table.loc["shift", "tlr@3"] > table.loc["plain", "tlr@3"]
        apply_to_index(tmp_path / "plain", path, tmp_path / f"{method}-post", alpha=0.8)
        a, b = DenseIndex(tmp_path / f"{method}-direct"), DenseIndex(tmp_path / f"{method}-post")
        assert a.indexed_vectors().tobytes() == b.indexed_vectors().tobytes()
        ra = Searcher(tmp_path / f"{method}-direct", e5).search(queries, k=10)
        assert ra == Searcher(tmp_path / f"{method}-post", e5).search(queries, k=10)
        assert json.loads((tmp_path / f"{method}-post/meta.json").read_text())["transform"]["method"] == method
