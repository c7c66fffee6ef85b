"""mlirkit.base.top_k: every method gives the columns of the definition (a full sort by (-score, tie rank)) and
of the argpartition top k MRC@k used before, planted ties across the cut-off, k >= n and NaN included."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.top_k import METHODS, TORCH_MIN_RATIO, top_k_columns


def by_definition(scores: np.ndarray, k: int, rank: np.ndarray) -> np.ndarray:
    """The first k columns of each row fully sorted by (-score, rank)."""
    rows = [np.lexsort((rank, -row))[:k] for row in scores]
    return np.array(rows, dtype=np.int64).reshape(len(scores), min(k, scores.shape[1]))


def previous(scores: np.ndarray, k: int, doc_rank: np.ndarray) -> np.ndarray:
    """MRC@k's top k before torch.topk (mlirkit.eval.mrc.top_k_rows), verbatim."""
    k = min(k, scores.shape[1])
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(scores, part, axis=1)
    out = np.take_along_axis(part, np.lexsort((doc_rank[part], -values), axis=1), axis=1)
    tied = (scores >= values.min(axis=1, keepdims=True)).sum(axis=1) > k
    for i in np.flatnonzero(tied):
        cand = np.flatnonzero(scores[i] >= values[i].min())
        out[i] = cand[np.lexsort((doc_rank[cand], -scores[i, cand]))][:k]
    return out


def tied_block(rng: np.random.Generator, rows: int, n: int, dtype) -> np.ndarray:
    """Scores on a coarse grid (many exact ties everywhere), one row all equal, one row of -inf but two."""
    scores = (rng.integers(0, 40, size=(rows, n)) / 8.0).astype(dtype)
    scores[0] = 0.5
    scores[1] = -np.inf
    scores[1, [3, n - 1]] = 1.0
    return scores


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 2, 5, 10, 20, 63, 64, 100, 639, 640, 641, 1000])
def test_every_method_equals_the_definition_and_the_previous_top_k_ties_included(dtype, k):
    rng = np.random.default_rng(k)
    n = 640
    rank = rng.permutation(n)
    for scores in (rng.normal(size=(24, n)).astype(dtype), tied_block(rng, 24, n, dtype)):
        want = by_definition(scores, k, rank)
        assert np.array_equal(previous(scores, k, rank), want)
        for method in METHODS:
            got = top_k_columns(scores, k, rank, method=method)
            assert got.dtype == np.int64 and np.array_equal(got, want), (method, k)


def test_a_tie_across_the_cut_off_goes_to_the_smaller_rank():
    scores = np.array([[1.0, 2.0, 2.0, 2.0, 0.0]])
    rank = np.array([4, 3, 0, 2, 1])  # column 2 has the smallest id
    for method in METHODS:
        assert top_k_columns(scores, 2, rank, method=method).tolist() == [[2, 3]]
        assert top_k_columns(scores, 2, method=method).tolist() == [[1, 2]]  # no rank: the column index


def test_auto_takes_torch_only_where_k_is_small_against_n(monkeypatch):
    import torch

    calls = []
    real = torch.topk

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "topk", counting)
    scores = np.random.default_rng(0).normal(size=(3, 64 * TORCH_MIN_RATIO)).astype(np.float32)
    top_k_columns(scores, 64)
    top_k_columns(scores, 65)
    assert calls == [65]  # k + 1 values for k = 64; k = 65 is past the ratio


def test_nan_ranks_last_as_before():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(6, 400))
    scores[0, 5] = np.nan
    scores[2, :] = np.nan
    scores[2, 7] = 1.0
    rank = rng.permutation(400)
    want = previous(scores, 3, rank)
    assert want[2, 0] == 7 and 5 not in want[0]
    for method in METHODS:
        assert np.array_equal(top_k_columns(scores, 3, rank, method=method), want)


def test_a_read_only_block_is_read_without_a_warning(recwarn):
    scores = np.random.default_rng(4).normal(size=(5, 700)).astype(np.float32)
    want = by_definition(scores, 3, np.arange(700))
    scores.flags.writeable = False
    assert np.array_equal(top_k_columns(scores, 3, method="topk"), want)
    assert not [w for w in recwarn if "writ" in str(w.message)]


def test_k_beyond_the_columns_and_zero():
    scores = np.array([[0.1, 0.3, 0.3], [0.0, 0.0, 0.0]], dtype=np.float32)
    for method in METHODS:
        assert top_k_columns(scores, 10, method=method).tolist() == [[1, 2, 0], [0, 1, 2]]
        assert top_k_columns(scores, 0, method=method).shape == (2, 0)
    with pytest.raises(ValueError, match="argpartition"):
        top_k_columns(scores, 1, method="heap")
