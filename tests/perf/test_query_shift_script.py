"""perf/query_shift.py: its synthetic upstream-format bed and its systems on a toy corpus."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench():
    from perf import query_shift

    return query_shift


def test_synthetic_belebele_is_read_by_the_upstream_reader(bench, tmp_path, monkeypatch):
    import ir_datasets

    import mlirkit.datasets  # noqa: F401

    try:
        langs = bench.write_synthetic_belebele(tmp_path, max_groups=5)
    except mlirkit.datasets.MissingDataError:
        pytest.skip("bundled DDTP data not present")
    monkeypatch.setenv("MLIRKIT_DATA", str(tmp_path))
    assert (tmp_path / "belebele" / "data" / "nld_Latn.jsonl").read_text() == ""
    ds = ir_datasets.load("mlirkit/belebele/multi")
    docs = list(ds.docs_iter())
    queries = list(ds.queries_iter())
    assert len(docs) == 5 * len(langs) and {q.lang for q in queries} == set(langs)
    rels = {}
    for r in ds.qrels_iter():
        rels.setdefault(r.query_id, set()).add(r.doc_id)
    assert all(len(v) == len(langs) for v in rels.values())


def test_systems_agree_where_they_must(bench):
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.transforms.shift_transform import ShiftTransform

    rng = np.random.default_rng(0)
    t = ShiftTransform.from_tensors({"de": rng.normal(size=8), "fr": rng.normal(size=8)}, encoder={}, source_lang="en")
    embs = rng.normal(size=(60, 8)).astype(np.float32)
    langs = ["en", "de", "fr"] * 20
    systems = bench.Systems([f"d{i}" for i in range(60)], embs, langs, t)
    q = l2_normalize(rng.normal(size=(9, 8))).astype(np.float32)
    qlangs = ["en", "de", "fr"] * 3
    rb = systems.search("rebased", 0.7, q, qlangs, 10)
    qc = systems.search("qt-cos", 0.7, q, qlangs, 10)
    assert [[h[0] for h in x] for x in rb] == [[h[0] for h in x] for x in qc]
    assert [[h[0] for h in x] for x in systems.search("base-np", 0.0, q, qlangs, 10)] == \
        [[h.doc_id for h in x] for x in systems.search("base", 0.0, q, qlangs, 10)]
    pv = systems.search("pivot", 0.7, q, qlangs, 10)
    assert [h[0] for h in pv[0]] == [h[0] for h in qc[0]]  # an English query: pivot == its own index
