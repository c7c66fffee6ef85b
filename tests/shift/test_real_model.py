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
    return load_encoder("multilingual-e5-small-q4")


def test_three_methods_fit_encode_search_posthoc(tmp_path, e5, shared_data):
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex
    from mlirkit.io.records import Doc, Query
    from mlirkit.search.searcher import Searcher
    from mlirkit.shift import load_transform, save_transform
    from mlirkit.transforms.fit import fit_from_groups
    from mlirkit.transforms.parallel import open_parallel
    from mlirkit.shift.posthoc import apply_to_index

    groups = [g for g in islice(open_parallel(str(shared_data / "libreoffice-help/segments.jsonl.gz")), 200)
              if all(l in g.texts for l in LANGS)]
    fit_groups, test_groups = groups[:12], groups[12:18]
    docs = [Doc(f"{g.id}|{l}", g.texts[l], l) for g in test_groups for l in LANGS]
    queries = [Query(f"q{i}", g.texts["en"], "en") for i, g in enumerate(test_groups)]
    for method in ("shift", "centering", "lir"):
        t, report = fit_from_groups(e5, fit_groups, method=method, source_lang="en", langs=LANGS, batch_size=32)
        assert report.groups_used == 12
        path = save_transform(t, tmp_path / f"{method}.st")
        t = load_transform(path)
        assert t.encoder == e5.fingerprint and t.meta["normalized"] is True and t.meta["prefix"] == "passage: "
        if method == "shift":
            # e5 language vectors are small but clearly non-zero
            assert all(0.01 < np.linalg.norm(v) < 1.0 for v in t.params.values())
        Indexer(e5, tmp_path / f"{method}-direct", transform=path, alpha=0.8, save_embeddings=True,
                show_progress=False).index(docs)
        if method == "shift":
            Indexer(e5, tmp_path / "plain", save_embeddings=True, show_progress=False).index(docs)
        apply_to_index(tmp_path / "plain", path, tmp_path / f"{method}-post", alpha=0.8)
        a, b = DenseIndex(tmp_path / f"{method}-direct"), DenseIndex(tmp_path / f"{method}-post")
        assert a.indexed_vectors().tobytes() == b.indexed_vectors().tobytes()
        ra = Searcher(tmp_path / f"{method}-direct", e5).search(queries, k=10)
        assert ra == Searcher(tmp_path / f"{method}-post", e5).search(queries, k=10)
        assert json.loads((tmp_path / f"{method}-post/meta.json").read_text())["transform"]["method"] == method
