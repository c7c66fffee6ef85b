"""experiments/qdrant_hnsw.py's own logic: the top-k overlap and the index-time (pivot) documents."""
from __future__ import annotations

import numpy as np

from experiments.qdrant_hnsw import overlap, pivot_docs
from mlirkit.search.results import Hit
from mlirkit.transforms import ShiftTransform
from tests.experiments.test_same_language_cost import bed


def test_overlap_is_the_mean_share_of_a_top_10_found():
    exact = [[Hit(f"d{i}", 1.0) for i in range(10)]] * 2
    approx = [[Hit(f"d{i}", 1.0) for i in range(10)], [Hit(f"d{i}", 1.0) for i in range(5, 15)]]
    assert overlap(approx, exact) == (1.0 + 0.5) / 2


def test_pivot_docs_are_shifted_then_normalised():
    b = bed()
    t = ShiftTransform.from_tensors({"de": np.ones(6), "fr": np.zeros(6)}, source_lang="en")
    got = pivot_docs(b, t, 0.5)
    want = b.docs - 0.5 * np.array([np.ones(6) if la == "de" else np.zeros(6) for la in b.doc_langs])
    np.testing.assert_allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True))
