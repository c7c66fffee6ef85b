from __future__ import annotations

import random

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.significance import (bonferroni, compare_runs, correct, exact_randomization_test,
                                       fisher_randomization_test, holm, paired_t_test)


def test_holm_and_bonferroni_hand_computed():
    p = [0.01, 0.04, 0.03, 0.5]
    # sorted: .01*4=.04, .03*3=.09, .04*2=.08 -> max(.09,.08)=.09, .5*1=.5
    assert holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert bonferroni(p) == pytest.approx([0.04, 0.16, 0.12, 1.0])
    assert correct(p, "none") == p
    out = holm([0.02, float("nan"), 0.01])
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.02)
    with pytest.raises(MlirkitError, match="unknown correction"):
        correct(p, "fdr")


def test_fisher_is_deterministic_and_matches_the_exact_test():
    rng = np.random.default_rng(3)
    a = rng.random(10)
    b = a - rng.normal(0.08, 0.1, 10)
    exact = exact_randomization_test(a, b)
    p = fisher_randomization_test(a, b, 20_000, seed=1)
    assert p == fisher_randomization_test(a, b, 20_000, seed=1)
    sigma = np.sqrt(exact * (1 - exact) / 20_000)
    assert abs(p - exact) < 5 * sigma + 1e-9
    assert fisher_randomization_test(a, a, 100) == 1.0  # identical systems


def test_fisher_reproduces_ranx_p_value_within_monte_carlo_error():
    from ranx.statistical_tests import fisher_randomization_test as ranx_fisher

    rng = np.random.default_rng(7)
    a = rng.random(12)
    b = a - rng.normal(0.05, 0.1, 12)
    exact = exact_randomization_test(a, b)
    ours = fisher_randomization_test(a, b, 1000, seed=42)
    theirs, _ = ranx_fisher(a, b, 1000, 0.01, 42)  # ranx's draw varies between calls (per-thread RNG)
    sigma = np.sqrt(exact * (1 - exact) / 1000)
    assert abs(ours - exact) < 5 * sigma and abs(theirs - exact) < 5 * sigma


def test_student_equals_ranx_and_scipy():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30)
    assert paired_t_test(a, b) == ttest_rel(a, b).pvalue


def _random_case(seed: int, n_q: int = 25):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(100)]
    qrels = {f"q{i:02d}": {d: 1 for d in rng.sample(docs, 3)} for i in range(n_q)}
    runs = {}
    for name in ("a", "b", "c"):
        runs[name] = {}
        for q in qrels:
            picked = rng.sample(docs, 30)
            runs[name][q] = {d: s / 1000 for d, s in zip(picked, rng.sample(range(1000), 30))}
    return qrels, runs


def test_student_p_values_equal_ranx_test_on_ranx_scores():
    from ranx import evaluate as ranx_evaluate
    from ranx.statistical_tests import paired_student_t_test

    qrels, runs = _random_case(1)
    metrics = ["ndcg@10", "recall@20"]
    ours = evaluate(qrels, runs, metrics, significance="student", correction="none")
    scores = {n: ranx_evaluate(qrels, r, metrics, return_mean=False) for n, r in runs.items()}
    for c in ours.significance:
        ranx_p, _ = paired_student_t_test(scores[c.run_a][c.metric], scores[c.run_b][c.metric])
        assert c.p_value == pytest.approx(ranx_p, rel=1e-9)
    assert len(ours.significance) == 2 * 3  # 3 pairs x 2 metrics


@pytest.mark.slow
def test_student_p_values_equal_ranx_compare():
    from ranx import Qrels, Run, compare

    qrels, runs = _random_case(0)
    metrics = ["ndcg@10", "recall@20"]
    ours = evaluate(qrels, runs, metrics, significance="student", correction="none")
    report = compare(Qrels.from_dict(qrels), [Run.from_dict(r, name=n) for n, r in runs.items()], metrics,
                     stat_test="student")
    for c in ours.significance:
        ranx_p = report.comparisons[frozenset([c.run_a, c.run_b])][c.metric]["p_value"]
        assert c.p_value == pytest.approx(ranx_p, rel=1e-9)
        assert c.p_corrected == c.p_value
    assert len(ours.significance) == 2 * 3  # 3 pairs x 2 metrics


def test_compare_runs_baseline_and_tlr_exclusion():
    per_query = {
        "base": {"tlr@5": {"q1": 0.0, "q2": 0.5}},
        "shift": {"tlr@5": {"q1": 1.0, "q2": 1.0, "q3": 1.0}},  # q3 not counted in base: left out
        "other": {"tlr@5": {"q2": 0.5}},
    }
    comps = compare_runs(per_query, ["tlr@5"], test="student", baseline="base", correction="bonferroni")
    assert [(c.run_a, c.run_b, c.n_queries) for c in comps] == [("base", "shift", 2), ("base", "other", 1)]
    assert comps[0].mean_a == 0.25 and comps[0].mean_b == 1.0
    assert np.isnan(comps[1].p_value) and not comps[1].significant  # one query: t-test undefined
    with pytest.raises(MlirkitError, match="baseline 'bas' is not one of the runs"):
        compare_runs(per_query, ["tlr@5"], baseline="bas")


def test_marks_in_tables():
    qrels = {f"q{i}": {"good": 1} for i in range(30)}
    good = {q: {"good": 2.0, "bad": 1.0} for q in qrels}
    bad = {q: {"bad": 2.0, "good": 1.0} for q in qrels}
    r = evaluate(qrels, {"good": good, "bad": bad, "good2": good}, ["mrr@10"], significance="fisher")
    md = r.to_markdown()
    assert "1.0000ᵇ" in md  # good beats bad (letter b); good2 too
    assert "0.5000 " in md  # bad has no mark
    assert md.count("ᵇ") == 2
    rb = evaluate(qrels, {"bad": bad, "good": good}, ["mrr@10"], significance="fisher", baseline="bad")
    assert "1.0000†" in rb.to_markdown()
    assert r"1.0000$^{\dagger}$" in rb.to_latex()
    assert all(c.p_value == 0.0 and c.significant for c in rb.significance)
