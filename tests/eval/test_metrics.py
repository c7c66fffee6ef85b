from __future__ import annotations

import math
import random

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.metrics import parse_metric, parse_metrics


def test_parse_metric_names_and_aliases():
    s = parse_metric("ndcg@20")
    assert (s.name, s.family.name, s.k, s.ranx_name, s.kind) == ("ndcg@20", "ndcg", 20, "ndcg@20", "ranx")
    assert parse_metric("P@10").ranx_name == "precision@10"
    assert parse_metric("precision@10").ranx_name == "precision@10"
    assert parse_metric("MRR@10").ranx_name == "mrr@10"
    assert parse_metric("map").ranx_name == "map"
    assert parse_metric("tlr@20").kind == "tlr"
    assert parse_metric("samelang@5").kind == "samelang"


@pytest.mark.parametrize("name, message", [
    ("ndgc@20", "did you mean: ndcg@20"),
    ("tlr", "needs a cut-off"),
    ("recall@0", "positive integer"),
    ("recall@x", "positive integer"),
    ("recall@1.5", "positive integer"),
    ("", "invalid metric"),
])
def test_parse_metric_errors(name, message):
    with pytest.raises(MlirkitError, match=message):
        parse_metric(name)


def test_parse_metrics_refuses_duplicates_and_empty():
    with pytest.raises(MlirkitError, match="same as"):
        parse_metrics(["P@10", "precision@10"])
    with pytest.raises(MlirkitError, match="no metrics"):
        parse_metrics([])


def test_hand_checkable_case():
    qrels = {"q1": {"d1": 1, "d2": 1, "d9": 0}, "q2": {"a": 1}}
    run = {"q1": {"d3": 0.9, "d1": 0.8, "d2": 0.7}, "q2": {"b": 2.0, "c": 1.0}}
    r = evaluate(qrels, {"r": run}, ["ndcg@3", "recall@2", "mrr@10", "map@3", "precision@2"], significance=None)
    ndcg_q1 = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert r.per_query["r"]["ndcg@3"] == pytest.approx({"q1": ndcg_q1, "q2": 0.0})
    assert r.value("r", "ndcg@3") == pytest.approx(ndcg_q1 / 2)
    assert r.value("r", "recall@2") == pytest.approx(0.25)
    assert r.value("r", "mrr@10") == pytest.approx(0.25)
    assert r.value("r", "map@3") == pytest.approx((1 / 2 + 2 / 3) / 2 / 2)
    assert r.value("r", "precision@2") == pytest.approx(0.25)


def test_graded_ndcg_uses_linear_gains_and_ideal_order():
    r = evaluate({"q": {"d1": 1, "d2": 3}}, {"r": {"q": {"d1": 0.9, "d2": 0.8}}}, ["ndcg@2"], significance=None)
    expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert r.value("r", "ndcg@2") == pytest.approx(expected)


def test_ties_broken_by_docid_and_dict_order_irrelevant():
    qrels = {"q": {"a": 1}}
    r1 = evaluate(qrels, {"r": {"q": {"b": 1.0, "a": 1.0}}}, ["mrr@10"], significance=None)
    r2 = evaluate(qrels, {"r": {"q": {"a": 1.0, "b": 1.0}}}, ["mrr@10"], significance=None)
    assert r1.value("r", "mrr@10") == r2.value("r", "mrr@10") == 1.0


def test_missing_queries_score_zero_extra_queries_and_unjudged_queries_ignored():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    run = {"q1": {"a": 1.0}, "zz": {"a": 1.0}, "q3": {"c": 1.0}}
    r = evaluate(qrels, {"r": run}, ["recall@10", "mrr@10"], significance=None)
    assert r.per_query["r"]["recall@10"] == {"q1": 1.0, "q2": 0.0}
    assert r.value("r", "mrr@10") == 0.5
    assert r.info["queries_evaluated"] == 2 and r.info["qrels_queries_without_relevant"] == 1
    assert r.info["runs"]["r"] == {"queries_without_results": 1, "queries_not_evaluated": 2}


def _random_qrels_run(seed):
    rng = random.Random(seed)
    docs = [f"doc{i}" for i in range(200)]
    qrels = {f"q{i:02d}": {d: rng.randint(1, 3) for d in rng.sample(docs, rng.randint(1, 6))} for i in range(30)}
    run = {}
    for q in qrels:  # distinct scores: no tie-breaking differences
        picked = rng.sample(docs, 50)
        scores = rng.sample(range(10_000), 50)
        run[q] = {d: s / 10_000 for d, s in zip(picked, scores)}
    return qrels, run


METRICS = ["ndcg@10", "recall@20", "mrr@10", "map@100", "precision@5"]


@pytest.mark.parametrize("seed", [0, 1])
def test_same_per_query_scores_as_ranx_on_dicts(seed):
    from ranx import evaluate as ranx_evaluate

    qrels, run = _random_qrels_run(seed)
    ours = evaluate(qrels, {"r": run}, METRICS, significance=None)
    # ranx pairs dict values by position: give both dicts the same (sorted) query order
    theirs = ranx_evaluate(dict(sorted(qrels.items())), dict(sorted(run.items())), METRICS, return_mean=False)
    for m in METRICS:
        assert list(ours.per_query["r"][m].values()) == pytest.approx(list(theirs[m]), abs=1e-12)


@pytest.mark.slow
def test_same_means_as_ranx_qrels_and_run_objects():
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    qrels, run = _random_qrels_run(2)
    ours = evaluate(qrels, {"r": run}, METRICS, significance=None)
    theirs = ranx_evaluate(Qrels.from_dict(qrels), Run.from_dict(run), METRICS)
    for m in METRICS:
        assert ours.value("r", m) == pytest.approx(theirs[m], abs=1e-12)


def test_evaluate_argument_errors():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0}}
    with pytest.raises(MlirkitError, match="needs document languages"):
        evaluate(qrels, {"r": run}, ["tlr@10"])
    with pytest.raises(MlirkitError, match="needs query languages"):
        evaluate(qrels, {"r": run}, ["tlr@10"], doc_langs={"a": "en"})
    with pytest.raises(MlirkitError, match="no runs"):
        evaluate(qrels, {}, ["ndcg@10"])
    with pytest.raises(MlirkitError, match="invalid run name"):
        evaluate(qrels, {"_meta": run}, ["ndcg@10"])
    with pytest.raises(MlirkitError, match="baseline 'bse' is not one of the runs"):
        evaluate(qrels, {"base": run}, ["ndcg@10"], baseline="bse")
    with pytest.raises(MlirkitError, match="unknown significance test"):
        evaluate(qrels, {"r": run}, ["ndcg@10"], significance="wilcoxon")
    with pytest.raises(MlirkitError, match="no query in the qrels has a relevant"):
        evaluate({"q": {"a": 0}}, {"r": run}, ["ndcg@10"])
    with pytest.raises(MlirkitError, match="non-finite"):
        evaluate(qrels, {"r": {"q": {"a": float("nan")}}}, ["ndcg@10"])
