"""Average precision over the whole ranking, from a block of scores (LAReQA's figure).

For a query with relevant documents ``R`` ranked, among all ``n`` candidates, at ``r_1 < ... < r_|R|``::

    AP = (1 / |R|) * sum_i i / r_i

(mean average precision, mAP, is its mean over queries; Roy et al., "LAReQA: Language-agnostic answer
retrieval from a multilingual pool", EMNLP 2020, section 3.2). The rank of a relevant document is one plus
the number of candidates ranked above it in mlirkit's order ``(-score, doc_id)``, so it equals ranx's ``map``
on a run that lists every candidate, without writing those runs (``n x queries`` entries).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def average_precision(scores: np.ndarray, relevant: Sequence[np.ndarray], id_rank: np.ndarray) -> np.ndarray:
    """(q,) AP of each query over the whole ranking.

    ``scores`` (q, n): every candidate's score for each query; ``relevant``: per query, the candidate
    rows that are relevant (a query without any gets NaN); ``id_rank`` (n,): each candidate's position in
    document-id order, which breaks ties in scores.
    """
    scores = np.asarray(scores)
    out = np.full(len(scores), np.nan)
    for i, rows in enumerate(relevant):
        rows = np.asarray(rows, dtype=np.intp)
        if not len(rows):
            continue
        s = scores[i]
        rel = s[rows][:, None]
        above = (s[None, :] > rel) | ((s[None, :] == rel) & (id_rank[None, :] < id_rank[rows][:, None]))
        ranks = np.sort(above.sum(axis=1)) + 1
        out[i] = float(np.mean(np.arange(1, len(rows) + 1) / ranks))
    return out


def id_ranks(doc_ids: Sequence[str]) -> np.ndarray:
    """(n,) position of each id in sorted order (the tie-break of :func:`average_precision`)."""
    order = np.argsort(np.asarray(doc_ids, dtype=object), kind="stable")
    out = np.empty(len(doc_ids), dtype=np.intp)
    out[order] = np.arange(len(doc_ids))
    return out


__all__ = ["average_precision", "id_ranks"]
