"""PEER@k (mlirkit.eval.peer): the definition by hand, the Kruskal-Wallis kernel against scipy, and how the
authors' package (peer-measure 0.0.1 through ir_measures) departs from it where it does."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.peer import kruskal_p, peer_at_k

LANGS = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "c1": "c", "x": "a", "y": "b", "u": "und"}
QRELS = {"q": {"a1": 1, "a2": 1, "b1": 1, "b2": 1}}
RUN = {"q": {"a1": 5.0, "x": 4.0, "a2": 3.0}}


def test_worked_example_by_hand():
    # rank_3: a {1, 3}, b {4, 4} -> ranks 1, 2, 3.5, 3.5; H = (N-1) SSG / SST = 3 * 4 / 4.5
    h = 3 * (2 * (1.5 - 2.5) ** 2 + 2 * (3.5 - 2.5) ** 2) / (1.5 ** 2 + 0.5 ** 2 + 1 + 1)
    assert h == pytest.approx(8 / 3)
    expected = math.erfc(math.sqrt(h / 2))  # chi-square with 1 degree of freedom
    res = peer_at_k(QRELS, RUN, 3, LANGS)
    assert res.per_query["q"] == pytest.approx(expected, abs=1e-12) and res.counted == 1
    assert expected == pytest.approx(0.1025, abs=1e-4)


def test_one_document_per_language_gives_n_minus_1_whatever_the_ranks():
    from scipy.stats import chi2

    qrels = {"q": {"a1": 1, "b1": 1, "c1": 1}}
    for run in ({"q": {"a1": 3.0, "b1": 2.0, "c1": 1.0}}, {"q": {"c1": 3.0, "x": 2.0}}, {"q": {"x": 1.0, "a1": 0.5}}):
        assert peer_at_k(qrels, run, 2, LANGS).mean == pytest.approx(chi2.sf(2, 2), abs=1e-12)
    # nothing relevant in the top k: every rank tied at k + 1, nothing to test
    assert peer_at_k(qrels, {"q": {"x": 1.0, "y": 0.5}}, 2, LANGS).mean == 1.0


def test_one_language_counts_one_and_mimo_leaves_it_out():
    qrels = {"q1": {"a1": 1, "a2": 1}, "q2": {"a1": 1, "b1": 1}}
    run = {"q1": {"a1": 1.0}, "q2": {"a1": 1.0}}
    paper = peer_at_k(qrels, run, 1, LANGS)
    mimo = peer_at_k(qrels, run, 1, LANGS, variant="mimo")
    assert paper.per_query["q1"] == 1.0 and paper.counted == 2
    assert "q1" not in mimo.per_query and mimo.counted == 1 and mimo.per_query["q2"] == paper.per_query["q2"]


def test_graded_levels_weighted_and_level_zero():
    from scipy.stats import kruskal

    qrels = {"q": {"a1": 2, "b1": 2, "a2": 1, "b2": 1, "y": 0}}
    run = {"q": {"a1": 6.0, "x": 5.0, "b1": 4.0, "a2": 3.0, "y": 2.0, "b2": 1.0}}
    k = 4
    # level 2: a {1}, b {3}; level 1: a {4}, b {5}; level 0: x (unjudged, a) at 2, y (b) outside the top 4: 5
    p2, p1 = kruskal([1], [3]).pvalue, kruskal([4], [5]).pvalue
    p0 = kruskal([2], [5]).pvalue
    assert peer_at_k(qrels, run, k, LANGS).mean == pytest.approx((p2 + p1) / 2, abs=1e-12)
    assert peer_at_k(qrels, run, k, LANGS, {1: 0.25, 2: 0.75}).mean == pytest.approx(0.25 * p1 + 0.75 * p2, abs=1e-12)
    assert peer_at_k(qrels, run, k, LANGS, {0: 0.5, 2: 0.5}).mean == pytest.approx(0.5 * p0 + 0.5 * p2, abs=1e-12)
    # a weighted level the query lacks counts p = 1; mimo pools the levels
    assert peer_at_k(qrels, run, k, LANGS, {2: 0.5, 3: 0.5}).mean == pytest.approx(0.5 * p2 + 0.5, abs=1e-12)
    pooled = kruskal([1, 4], [3, 5]).pvalue
    assert peer_at_k(qrels, run, k, LANGS, variant="mimo").mean == pytest.approx(pooled, abs=1e-12)
    with pytest.raises(MlirkitError, match="sum to 1"):
        peer_at_k(qrels, run, k, LANGS, {1: 0.5})


def test_unknown_language_documents_are_not_a_group():
    qrels = {"q": {"a1": 1, "u": 1, "nolang": 1}}
    assert peer_at_k(qrels, {"q": {"a1": 1.0}}, 5, LANGS).mean == 1.0  # one known language: nothing to test


def test_kruskal_kernel_equals_scipy_on_random_samples():
    from scipy.stats import kruskal

    rng = random.Random(3)
    units, groups, values, expected = [], [], [], []
    for u in range(300):
        samples = [[rng.choice(range(1, 12)) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(2, 5))]
        for g, sample in enumerate(samples):
            units += [u] * len(sample)
            groups += [g + 1] * len(sample)
            values += sample
        flat = [v for s in samples for v in s]
        expected.append(kruskal(*samples).pvalue if len(set(flat)) > 1 else np.nan)
    p, n_groups = kruskal_p(np.array(units), np.array(groups), np.array(values, dtype=float), 300)
    np.testing.assert_allclose(p, expected, rtol=0, atol=1e-12)
    assert (n_groups >= 2).all()


def test_in_evaluate_with_the_rank_table_and_grouped_test():
    qrels = {"en_1": {"a1": 1, "b1": 1}, "de_1": {"a1": 1, "b1": 1}, "en_2": {"a2": 1, "b2": 1},
             "de_2": {"a2": 1, "b2": 1}}
    runs = {"r1": {q: {d: 2.0 if d[0] == "a" else 1.0 for d in rels} for q, rels in qrels.items()},
            "r2": {q: {"x": 3.0} for q in qrels}}
    res = evaluate(qrels, runs, ["peer@1", "peer-mimo@1"], doc_langs=LANGS, query_langs={q: q[:2] for q in qrels},
                   query_groups="strip-lang", baseline="r1")
    assert res.value("r1", "peer@1") == pytest.approx(0.3173, abs=1e-4)  # chi2_1.sf(1)
    assert res.value("r2", "peer@1") == 1.0
    table = res.per_language["mean rank of the relevant documents by document language (top 1; below it: 2)"]
    assert table.loc["r1", "a"] == 1.0 and table.loc["r1", "b"] == 2.0 and table.loc["r2", "a"] == 2.0
    assert {c.n_units for c in res.significance} == {2} and "peer-mimo@1: 4 of 4" in res.to_markdown()
    with pytest.raises(MlirkitError, match="peer@1 needs document languages"):
        evaluate(qrels, runs, ["peer@1"], query_langs="en")
