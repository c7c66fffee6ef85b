"""mlirkit.eval.evaluate takes ranx objects and gives a ranx.Report; runs written by mlirkit.search are
distinct rows in ranx.compare."""
from __future__ import annotations

import json

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.eval import evaluate  # noqa: E402

QRELS = {f"q{i}": {f"d{i}": 1, f"d{i + 1}": 1} for i in range(12)}


def _runs():
    rng = np.random.default_rng(0)
    good = {q: {d: 1.0 + float(rng.random()) for d in rels} | {"dx": 0.5} for q, rels in QRELS.items()}
    bad = {q: {"dx": 1.0, **{d: 0.1 * float(rng.random()) for d in rels}} for q, rels in QRELS.items()}
    return {"good": good, "bad": bad}


def test_evaluate_accepts_ranx_qrels_and_runs():
    runs = _runs()
    plain = evaluate(QRELS, runs, ["ndcg@10", "mrr@10"], significance=None)
    qrels = ranx.Qrels(QRELS)
    as_mapping = evaluate(qrels, {n: ranx.Run(r) for n, r in runs.items()}, ["ndcg@10", "mrr@10"], significance=None)
    as_list = evaluate(qrels, [ranx.Run(r, name=n) for n, r in runs.items()], ["ndcg@10", "mrr@10"], significance=None)
    for res in (as_mapping, as_list):
        assert res.runs == ["good", "bad"]
        assert np.allclose(res.table.values, plain.table.values)


def test_unnamed_or_duplicate_ranx_runs_are_refused():
    run = ranx.Run(_runs()["good"])
    with pytest.raises(MlirkitError, match="no name"):
        evaluate(QRELS, [run], ["ndcg@10"])
    with pytest.raises(MlirkitError, match="named 'a'"):
        evaluate(QRELS, [ranx.Run(_runs()["good"], name="a"), ranx.Run(_runs()["bad"], name="a")], ["ndcg@10"])


def test_to_ranx_report_matches_ranx_compare():
    runs = _runs()
    res = evaluate(QRELS, runs, ["ndcg@10", "mrr@10"], significance="fisher")
    report = res.to_ranx_report()
    assert isinstance(report, ranx.data_structures.Report)
    ours = report.to_dict()
    theirs = ranx.compare(ranx.Qrels(QRELS), [ranx.Run(r, name=n) for n, r in runs.items()],
                          metrics=["ndcg@10", "mrr@10"], stat_test="fisher").to_dict()
    assert ours["model_names"] == theirs["model_names"] == ["good", "bad"]
    for name in ("good", "bad"):
        for m in ("ndcg@10", "mrr@10"):
            assert ours[name]["scores"][m] == pytest.approx(theirs[name]["scores"][m], abs=1e-9)
            other = "bad" if name == "good" else "good"
            assert ours[name]["win_tie_loss"][other][m] == theirs[name]["win_tie_loss"][other][m]
    table = str(report)  # ranx's own table rendering
    assert "good" in table and "bad" in table and "ᵇ" in table  # good beats bad, significantly
    assert len(report.to_dataframe()) == 2
    json.dumps(ours)


def test_report_labels_mlirkit_metrics_and_untested_pairs():
    runs = _runs()
    doc_langs = {f"d{i}": ("en" if i % 2 else "de") for i in range(14)} | {"dx": "en"}
    res = evaluate(QRELS, runs, ["ndcg@10", "tlr@10"], doc_langs=doc_langs, query_langs="en", significance=None)
    report = res.to_ranx_report()
    assert "TLR@10" in str(report)
    assert report.to_dict()["good"]["comparisons"]["bad"]["tlr@10"] is None
