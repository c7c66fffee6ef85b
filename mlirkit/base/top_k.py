"""The exact top k of every row of a score block, ties broken by a rank of the columns.

For a row ``s`` of ``n`` scores and a tie rank ``r`` (a permutation of the columns, e.g. the position of each
column's document id in sorted order, so that ties go to the smaller id as in a run)::

    top_k(s) = the first min(k, n) columns j sorted by (-s_j, r_j)

This is what every layer that ranks all documents needs (MRC@k from every score, the query-time shift's
candidates, the label-free alpha's neighbours). For ``k`` much smaller than ``n`` (``32 k <= n``) the k + 1
best of each row come from ``torch.topk`` (a heap pass over the row, several times cheaper on CPU than
``numpy.argpartition``'s introselect of a negated copy: ``perf/top_k.py``); the (k+1)-th score tells whether a
tie crosses the cut-off, and only such rows are resolved again from every column scoring at least the k-th.
Other shapes, and blocks holding a NaN, take the ``numpy.argpartition`` path, which gives the same columns.
torch is imported on the first call that takes its path and runs on torch's threads (the caller caps them:
:func:`mlirkit.base.threads.torch_threads`).
"""
from __future__ import annotations

import numpy as np

#: ``torch.topk`` is used when ``TORCH_MIN_RATIO * k <= n`` (measured in ``perf/top_k.py``: at n = 1,920 it
#: gains nothing from k = 36 on; at n = 10,887 it is 2x at k = 116 and even at k = 300)
TORCH_MIN_RATIO = 32

#: the ways :func:`top_k_columns` can take the k best (the same columns each way)
METHODS = ("auto", "topk", "argpartition")


def top_k_columns(scores: np.ndarray, k: int, tie_rank: np.ndarray | None = None, *,
                  method: str = "auto") -> np.ndarray:
    """(B, min(k, n)) int64 column indices of each row's top k by ``(-score, tie_rank[column])`` (``tie_rank``
    None: the column index), best first. NaN scores rank after every number. ``method``: ``"auto"``
    (``"topk"`` when ``TORCH_MIN_RATIO * k <= n``, else ``"argpartition"``), ``"topk"`` or ``"argpartition"``;
    all give the same columns."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    scores = np.asarray(scores)
    n = scores.shape[1]
    k = min(int(k), n)
    rank = np.arange(n) if tie_rank is None else np.asarray(tie_rank)
    if k < 1:
        return np.zeros((scores.shape[0], 0), dtype=np.int64)
    use_topk = TORCH_MIN_RATIO * k <= n if method == "auto" else method == "topk"
    if use_topk and k < n and scores.dtype in (np.float32, np.float64):
        out = _top_k_torch(scores, k, rank)
        if out is not None:
            return out
    return _top_k_numpy(scores, k, rank)


def _top_k_torch(scores: np.ndarray, k: int, rank: np.ndarray) -> np.ndarray | None:
    """The top k through ``torch.topk`` of the k + 1 best (k < n); None when the block holds a NaN (which
    ``torch.topk`` ranks first and numpy last)."""
    import torch

    block = np.ascontiguousarray(scores) if scores.flags.writeable else np.array(scores)  # torch warns on read-only
    values, columns = torch.topk(torch.from_numpy(block), k + 1, dim=1, sorted=True)
    values, columns = values.numpy(), columns.numpy()
    if np.isnan(values).any():  # a NaN anywhere in a row is among its k + 1 "best"
        return None
    top, best = columns[:, :k], values[:, :k]
    out = np.take_along_axis(top, np.lexsort((rank[top], -best), axis=1), axis=1)
    for i in np.flatnonzero(values[:, k] == values[:, k - 1]):  # a tie across the cut-off
        out[i] = _resolved_row(scores[i], best[i, -1], k, rank)
    return out


def _top_k_numpy(scores: np.ndarray, k: int, rank: np.ndarray) -> np.ndarray:
    """The top k through ``numpy.argpartition`` of the negated block."""
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(scores, part, axis=1)
    out = np.take_along_axis(part, np.lexsort((rank[part], -values), axis=1), axis=1)
    lowest = values.min(axis=1)
    for i in np.flatnonzero((scores >= lowest[:, None]).sum(axis=1) > k):  # a tie across the cut-off
        out[i] = _resolved_row(scores[i], lowest[i], k, rank)
    return out.astype(np.int64, copy=False)


def _resolved_row(row: np.ndarray, kth: float, k: int, rank: np.ndarray) -> np.ndarray:
    """The top k of one row from every column scoring at least its k-th best ``kth``."""
    candidates = np.flatnonzero(row >= kth)
    return candidates[np.lexsort((rank[candidates], -row[candidates]))][:k]


__all__ = ["METHODS", "TORCH_MIN_RATIO", "top_k_columns"]
