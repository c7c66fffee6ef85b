"""The same-/cross-language split of recall@k and the pivot recipe of experiments/same_language_cost.py."""
from __future__ import annotations

import numpy as np

from experiments.same_language_cost import pivot_top, split_recall
from experiments.xquad_beds import Bed
from mlirkit.transforms import ShiftTransform


def bed() -> Bed:
    rng = np.random.default_rng(1)
    docs = rng.normal(size=(12, 6))
    queries = rng.normal(size=(4, 6))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return Bed("toy", docs, [f"d{i}" for i in range(12)], ["en", "de", "fr"] * 4, queries,
               [f"q{i}" for i in range(4)], ["en", "de", "en", "fr"], np.array([0, 0, 1, 1]),
               [np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([3, 4]), np.array([5, 6])], "toy", {})


def test_split_recall_counts_each_side():
    b = bed()
    top = np.array([[0, 9, 8], [0, 9, 8], [3, 4, 9], [9, 8, 7]])
    same, cross = split_recall(b, top)
    np.testing.assert_allclose(same, [1.0, 0.0, 1.0, 0.0])  # q0 en: d0 en found; q1 de: d1 missed
    np.testing.assert_allclose(cross, [0.0, 0.5, 1.0, 0.0])  # q1: d0 (en) of d0, d2; q3 fr: d5 is fr (same)


def test_pivot_with_zero_offsets_is_the_base_run():
    b = bed()
    t = ShiftTransform.from_tensors({"de": np.zeros(6), "fr": np.zeros(6)}, source_lang="en")
    np.testing.assert_array_equal(pivot_top(b, t, 1.0, k=5), b.top(None, 0.0, 5))


def test_lost_same_counts_the_same_language_documents_a_shift_drops():
    from experiments.same_language_cost import lost_same

    b = bed()
    base = np.array([[0, 9, 8], [1, 0, 8], [3, 4, 9], [5, 8, 7]])
    shifted = np.array([[9, 8, 7], [1, 0, 8], [4, 9, 8], [8, 7, 6]])
    out = lost_same(b, base, shifted)
    # q0 loses d0 (en, base rank 0; the shifted top holds no relevant), q2 loses d3 (en, rank 0; d4 is there),
    # q3 loses d5 (fr, rank 0; d6 is there); q1 keeps d1 (de)
    assert out["documents_lost"] == 3 and out["mean_base_rank"] == 0.0
    assert out["mean_relevant_in_shifted_top"] == 2 / 3 and out["share_no_relevant_in_shifted_top"] == 1 / 3
