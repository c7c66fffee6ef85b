"""Union-kNN pair selection of the mining loop: the formula (its comparison with the mutual-margin pairs of the
investigation, and the parallel-corpus case: tests/experiments/test_mining_variants.py)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.transforms.mining import union_knn_pairs
from tests.transforms.toy_corpora import unit


@pytest.mark.parametrize("k", [1, 3, 6])
def test_union_knn_pairs_equal_both_directions_neighbour_lists_written_out(k):
    rng = np.random.default_rng(10 + k)
    x, y = unit(rng.normal(size=(23, 8))), unit(rng.normal(size=(17, 8)))
    cos = x @ y.T
    nn_x = np.argsort(-cos, axis=1)[:, :k]
    nn_y = np.argsort(-cos, axis=0)[:k, :].T
    want = sorted([(i, int(j)) for i in range(len(x)) for j in nn_x[i]]
                  + [(int(i), j) for j in range(len(y)) for i in nn_y[j]])
    got = union_knn_pairs(x.astype(np.float32), y.astype(np.float32), k=k, chunk_rows=5)
    assert sorted(zip(got.tgt.tolist(), got.src.tolist())) == want
    assert len(got) == k * (len(x) + len(y))
    # mutual: pairs listed from both sides
    fwd = {(i, int(j)) for i in range(len(x)) for j in nn_x[i]}
    bwd = {(int(i), j) for j in range(len(y)) for i in nn_y[j]}
    assert got.mutual == len(fwd & bwd)
    # the recorded margins and cosines are the ratio margin and cosine of each listed pair
    r_x, r_y = np.sort(cos, axis=1)[:, ::-1][:, :k].mean(axis=1), np.sort(cos, axis=0)[::-1, :][:k, :].mean(axis=0)
    for a, b, m, c in zip(got.tgt, got.src, got.margin, got.cos):
        assert c == pytest.approx(cos[a, b], abs=1e-6)
        assert m == pytest.approx(cos[a, b] / ((r_x[a] + r_y[b]) / 2), rel=1e-5)
