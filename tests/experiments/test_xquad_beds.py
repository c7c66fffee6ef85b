"""The label-free alpha study's statistics: the grouped randomization test and the grouped bootstrap
(a question's translations move together), and the question groups of XQuAD-R and DDTP query ids."""
from __future__ import annotations

import numpy as np

from experiments.xquad_beds import grouped_bootstrap, grouped_randomization, question_group
from mlirkit.eval.significance import format_p, randomization_test


def _translated(diffs: np.ndarray, copies: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-query differences of ``len(diffs)`` questions, each translated ``copies`` times (small jitter)."""
    d = np.repeat(diffs, copies) + rng.normal(0, 1e-4, len(diffs) * copies)
    return d, np.repeat(np.arange(len(diffs)), copies)


def test_grouped_randomization_is_the_test_on_question_means():
    rng = np.random.default_rng(1)
    d, groups = _translated(rng.normal(0.01, 0.05, 12), 8, rng)
    b = rng.random(len(d))
    mean, p = grouped_randomization(b + d, b, groups)
    assert abs(mean - d.mean()) < 1e-12
    means = np.array([d[groups == g].mean() for g in range(12)])
    ref = randomization_test(means, 10000, 0)  # 12 units: all 2^12 sign vectors
    assert ref.exact and p == format_p(ref.p, ref.resolution)
    # counted as 96 independent queries, the same differences look far more significant
    assert randomization_test(d, 10000, 0).p < ref.p / 5


def test_grouped_randomization_never_prints_zero():
    rng = np.random.default_rng(2)
    d, groups = _translated(np.full(200, 0.1), 8, rng)
    assert grouped_randomization(d, np.zeros_like(d), groups)[1] == "< 0.0001"  # p = 1/10001


def test_grouped_bootstrap_resamples_questions_and_macro_averages():
    langs = ["de"] * 3 + ["en"] * 9  # en has three times as many queries: macro != micro
    groups = np.array([0, 1, 2] + [0, 0, 0, 1, 1, 1, 2, 2, 2])
    values = np.array([1.0] * 3 + [0.0] * 9)
    reps = grouped_bootstrap(values, groups, langs, n=500)
    assert reps.shape == (500, 1)
    # de's queries are all 1, en's all 0: every replicate's macro mean is 0.5 (the micro mean would be 0.25)
    np.testing.assert_allclose(reps[:, 0], 0.5)
    cols = np.stack([values, 2 * values], axis=1)
    reps2 = grouped_bootstrap(cols, groups, langs, n=50, seed=3)
    np.testing.assert_allclose(reps2[:, 1], 2 * reps2[:, 0])


def test_question_group():
    assert question_group("de_56beb4343aeaaa14008c925c") == "56beb4343aeaaa14008c925c"
    assert question_group("q/0ad/de") == "0ad"
