from __future__ import annotations

import random

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.significance import (bonferroni, compare_runs, correct, exact_randomization_test,
                                       fisher_randomization_test, format_p, holm, paired_t_test,
                                       randomization_test, unit_means)


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
    a = rng.random(18)  # 18 units > 16: sampled
    b = a - rng.normal(0.08, 0.2, 18)
    exact = exact_randomization_test(a, b)
    p = fisher_randomization_test(a, b, 20_000, seed=1)
    assert not randomization_test(a - b, 20_000, seed=1).exact
    assert p == fisher_randomization_test(a, b, 20_000, seed=1)
    sigma = np.sqrt(exact * (1 - exact) / 20_000)
    assert abs(p - exact) < 5 * sigma + 1e-9
    assert fisher_randomization_test(a, a, 100) == 1.0  # identical systems
    # with few units the test enumerates: the p is the exact one, whatever the permutations asked for
    small = randomization_test(a[:10] - b[:10], 1000)
    assert small.exact and small.permutations == 2 ** 10 and small.p == exact_randomization_test(a[:10], b[:10])


def _transcribed_exact_p(d: list[float]) -> float:
    """The exact randomization p written out from its definition: every sign vector, one by one."""
    import itertools

    observed = abs(sum(d) / len(d))
    hits = [abs(sum(s * x for s, x in zip(signs, d)) / len(d)) >= observed - 1e-12
            for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(hits) / len(hits)


def test_grouped_test_equals_a_hand_computation_by_exact_enumeration():
    # three questions: A has two translations, B one, C three; differences per query
    qids = ["A/de", "A/fr", "B/de", "C/de", "C/fr", "C/ja"]
    a = np.array([0.8, 0.6, 0.9, 0.3, 0.5, 0.2])
    b = np.array([0.5, 0.5, 0.5, 0.4, 0.5, 0.4])  # d = .3 .1 | .4 | -.1 0 -.2
    units = [q.split("/")[0] for q in qids]
    d = unit_means(a - b, units)
    assert d == pytest.approx([0.2, 0.4, -0.1])  # group means, groups in order of their first query
    # T = |(s_A .2 + s_B .4 - s_C .1) / 3| against 0.5 / 3: sums +-0.5 and +-0.7 reach it: 4 of 8 sign vectors
    assert exact_randomization_test(a, b, units) == 0.5
    assert fisher_randomization_test(a, b, 1000, units=units) == 0.5  # 3 units: enumerated, exact
    assert _transcribed_exact_p([0.2, 0.4, -0.1]) == 0.5
    # the ungrouped test moves every query alone: 2^6 sign vectors, another p
    assert exact_randomization_test(a, b) == pytest.approx(_transcribed_exact_p(list(a - b)))


def test_grouped_test_reduces_to_the_ungrouped_test_with_one_query_per_group():
    rng = np.random.default_rng(5)
    a, b = rng.random(40), rng.random(40) * 0.9  # 40 units: sampled
    names = [f"group-{39 - i}" for i in range(40)]  # any names: units follow the queries' order
    assert fisher_randomization_test(a, b, 2000, seed=3, units=names) == fisher_randomization_test(a, b, 2000, seed=3)
    per_query = {"x": {"m": {f"q{i:02d}": v for i, v in enumerate(a)}},
                 "y": {"m": {f"q{i:02d}": v for i, v in enumerate(b)}}}
    plain = compare_runs(per_query, ["m"], n_permutations=2000, seed=3)[0]
    grouped = compare_runs(per_query, ["m"], n_permutations=2000, seed=3,
                           query_groups={f"q{i:02d}": n for i, n in enumerate(names)})[0]
    assert grouped.p_value == plain.p_value and grouped.n_units == plain.n_units == 40
    assert (grouped.unit, plain.unit) == ("query group", "query")
    assert grouped.mean_a == pytest.approx(plain.mean_a) and grouped.mean_b == pytest.approx(plain.mean_b)


def test_grouped_test_is_invariant_to_permuting_queries_within_groups():
    rng = np.random.default_rng(11)
    n_groups, size = 30, 4  # 30 units: sampled
    groups = {f"g{g:02d}/{lang}": f"g{g:02d}" for g in range(n_groups) for lang in ("de", "fr", "ja", "sw")}
    qids = sorted(groups)
    a = {q: float(v) for q, v in zip(qids, rng.random(len(qids)))}
    b = {q: float(v) for q, v in zip(qids, rng.random(len(qids)) * 0.95)}
    ref = compare_runs({"a": {"m": a}, "b": {"m": b}}, ["m"], n_permutations=3000, query_groups=groups)[0]
    shuffled_a, shuffled_b = dict(a), dict(b)
    for g in range(n_groups):
        members = [q for q in qids if groups[q] == f"g{g:02d}"]
        for scores in (shuffled_a, shuffled_b):  # each run's scores permuted within the group, independently
            values = [scores[q] for q in members]
            for q, v in zip(members, rng.permutation(values)):
                scores[q] = float(v)
    moved = compare_runs({"a": {"m": shuffled_a}, "b": {"m": shuffled_b}}, ["m"], n_permutations=3000,
                         query_groups=groups)[0]
    assert moved.p_value == ref.p_value and moved.n_units == ref.n_units == n_groups
    assert moved.mean_a == pytest.approx(ref.mean_a)
    ungrouped = compare_runs({"a": {"m": shuffled_a}, "b": {"m": shuffled_b}}, ["m"], n_permutations=3000)[0]
    assert ungrouped.n_units == n_groups * size


def test_p_is_never_zero_and_is_b_plus_one_over_r_plus_one():
    rng = np.random.default_rng(2)
    d = rng.normal(0.03, 0.2, 50)
    for R in (1, 99, 1000):
        res = randomization_test(d, R, seed=7)
        assert not res.exact and res.permutations == R
        # b by hand: the same seeded draws (one block: R x 50 entries), counted against |mean d|
        signs = np.random.default_rng(7).integers(0, 2, size=(R, 50), dtype=np.int8).astype(np.float64) * 2 - 1
        b = int(np.count_nonzero(np.abs(signs @ d) / 50 >= abs(d.mean()) - 1e-12))
        assert res.p == (b + 1) / (R + 1)
        assert 1 / (R + 1) <= res.p <= 1 and res.resolution == 1 / (R + 1)
    # a difference no permutation reaches: p is the bound 1/(R+1), never 0
    assert randomization_test(np.full(40, 0.5), 1000).p == 1 / 1001
    # exact: at least 2 / 2^U (the observed signs and their mirror image)
    exact = randomization_test(np.full(12, 0.5), 1000)
    assert exact.exact and exact.p == 2 / 2 ** 12 and exact.resolution == 2 / 2 ** 12
    for seed in range(20):
        assert randomization_test(np.random.default_rng(seed).normal(0.5, 0.1, 30), 200, seed=seed).p >= 1 / 201


def test_format_p_has_the_resolution_of_the_test():
    assert format_p(1 / 1001, 1 / 1001) == "< 0.001"
    assert format_p(0.0234, 1 / 1001) == "0.023" and format_p(1.0, 1 / 1001) == "1.000"
    assert format_p(1 / 10001, 1 / 10001) == "< 0.0001" and format_p(0.01234, 1 / 10001) == "0.0123"
    assert format_p(1 / 1000, 1 / 1000) == "0.001"  # R = 999: the smallest p is exactly 0.001
    assert format_p(794 / 2048, 2 / 4096) == "0.388"  # exact, 12 units
    assert format_p(0.01234) == "0.0123" and format_p(1e-9) == "< 0.0001"  # t-test
    assert format_p(float("nan")) == "n/a" and format_p(None) == "n/a"


def test_grouped_student_is_the_t_test_on_group_means():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(4)
    groups = {f"g{g}/{lang}": f"g{g}" for g in range(10) for lang in ("de", "fr", "it")}
    qids = sorted(groups)
    a = {q: float(v) for q, v in zip(qids, rng.random(30))}
    b = {q: float(v) for q, v in zip(qids, rng.random(30))}
    c = compare_runs({"a": {"m": a}, "b": {"m": b}}, ["m"], test="student", query_groups=groups)[0]
    ga = [np.mean([a[q] for q in qids if groups[q] == f"g{g}"]) for g in range(10)]
    gb = [np.mean([b[q] for q in qids if groups[q] == f"g{g}"]) for g in range(10)]
    assert c.p_value == pytest.approx(ttest_rel(ga, gb).pvalue, rel=1e-12) and c.n_units == 10
    assert c.permutations is None and c.p_resolution is None


def test_fisher_reproduces_ranx_p_value_within_monte_carlo_error():
    from ranx.statistical_tests import fisher_randomization_test as ranx_fisher

    rng = np.random.default_rng(7)
    a = rng.random(20)  # 20 units: sampled by both
    b = a - rng.normal(0.05, 0.2, 20)
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
    assert all(c.p_value == 1 / 1001 and c.significant for c in rb.significance)  # never 0
    assert "| < 0.001 | < 0.001     | yes" in rb.to_markdown()
