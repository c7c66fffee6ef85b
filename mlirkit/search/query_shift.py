"""SHIFT for every query language from one index: the source language's shift applied at query time.

A SHIFT transform fitted with pivot (source) language ``p`` holds ``V_l`` for its languages (``V_p = 0``).
For a query of language ``s`` the re-based vectors are ``V_{l|s} = V_l - V_s`` (:func:`mlirkit.shift.shift.derive_source`),
and the s-source index would hold, for document ``d`` of language ``l`` with ``alpha_l`` (DESIGN.md, SHIFT)::

    d'_s = d - alpha_l * (V_l - V_s)    if l = p or l has a vector   (m_d = 1; for l = s this is d itself)
    d'_s = d                            if l is unknown or has no vector   (m_d = 0)

Write ``x = d - alpha_l m_d V_l`` (the pivot-shifted, unnormalised document, what ``T.apply`` gives) and
``b = alpha_l m_d``. Then ``d'_s = x + b V_s`` and, for the untouched query ``q``:

- inner product (no renormalisation): ``score = q.d'_s = q.x + b (q.V_s)``;
- cosine (shift, then L2-normalise, as mlirkit builds SHIFT indexes):
  ``score = (q.x + b (q.V_s)) / ||d'_s||`` with
  ``||d'_s||^2 = ||x||^2 + 2 b (x.V_s) + b^2 ||V_s||^2``.

So one matrix ``[x, b]`` (n x (d+1)) per alpha and, per document, ``||x||^2`` and ``x.V_m`` for the M
languages (a few floats) give every source language exactly: ``Q_aug = [q, q.V_s]``,
``scores = (Q_aug X_aug^T) * (1/||d'_s||)``; the numerator is one matrix product, the denominator a
per-document vector of each source language (cached). With inner product and no unknown-language
documents, ``b (q.V_s)`` is the same for every document of a query, so the pivot index already ranks as
the s-source index would (the issue's observation); with cosine the norms depend on ``s``.

A query whose language is unknown or has no vector is scored with the pivot source (``V_s = 0``: the
index as built); such queries are counted in :attr:`QueryTimeShift.counts`. Alpha (a float or a
per-language dict, :func:`mlirkit.shift.transform.resolve_alpha`) is chosen per call, without re-indexing.

Search is exhaustive (exact) by default; with ``candidates`` (rows of each query's candidates, e.g. from
an HNSW or IVF-PQ index) only those are re-scored exactly. Ties are broken by ``(-score, doc_id)``.
Citation: SHIFT's re-basing ``V_{l|s} = V_l - V_s`` as in the authors' released code (DESIGN.md).
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from mlirkit.errors import MlirkitError
from mlirkit.langs import UNKNOWN, canonical

logger = logging.getLogger(__name__)

METRICS = ("cosine", "ip")
#: extra rows kept beyond k so that ties at the cut-off are broken by doc id (as mlirkit.search does)
TIE_SLACK = 16


class _Prepared(NamedTuple):
    x_aug: np.ndarray  # (n, d+1) float32: [x, b]
    xsq: np.ndarray  # (n,) float64 ||x||^2
    xv: np.ndarray  # (n, M) float64 x . V_m
    b: np.ndarray  # (n,) float64 alpha_l * m_d


class QueryTimeShift:
    """Exact per-query-language SHIFT scores from raw document embeddings and one pivot transform.

    ``embeddings`` (n, d): the untransformed document vectors (an index's ``embeddings.npy``);
    ``doc_langs`` (n,); ``transform``: a :class:`~mlirkit.shift.shift.ShiftTransform` (its source language is
    the pivot); ``metric``: ``"cosine"`` or ``"ip"`` (see the module docstring for both formulas).
    """

    def __init__(self, embeddings: np.ndarray, doc_langs: Sequence[str], transform, *, metric: str = "cosine",
                 docids: Sequence[str] | None = None) -> None:
        from mlirkit.shift.shift import ShiftTransform

        if not isinstance(transform, ShiftTransform):
            raise MlirkitError(f"the query-time shift needs a shift transform, not {getattr(transform, 'method', transform)!r}")
        if metric not in METRICS:
            raise MlirkitError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        self.embeddings = np.asarray(embeddings)
        if self.embeddings.ndim != 2 or self.embeddings.shape[1] != transform.dim:
            raise MlirkitError(f"embeddings of shape {self.embeddings.shape} for a transform of dimension {transform.dim}")
        if len(doc_langs) != len(self.embeddings):
            raise MlirkitError(f"{len(doc_langs)} document languages for {len(self.embeddings)} embeddings")
        self.transform = transform
        self.metric = metric
        self.pivot = transform.source_lang
        self.doc_langs = list(doc_langs)
        self.docids = list(docids) if docids is not None else None
        # languages with a vector, the pivot first (V_pivot = 0)
        self.langs = [self.pivot, *transform.languages]
        self.vectors = np.stack([np.zeros(transform.dim), *(transform.params[la].astype(np.float64)
                                                             for la in transform.languages)])  # (M, d)
        self._lang_index = {la: k for k, la in enumerate(self.langs)}
        codes = np.fromiter((self._lang_index.get(canonical(la) or UNKNOWN, -1) for la in self.doc_langs),
                            dtype=np.intp, count=len(self.doc_langs))
        self.doc_codes = codes  # (n,) -1 = unknown language or no vector: never shifted
        self.counts: Counter[str] = Counter()
        self._prepared: dict[str, _Prepared] = {}
        self._inv_norms: dict[tuple[str, int], np.ndarray] = {}

    @property
    def n_docs(self) -> int:
        return len(self.embeddings)

    # ----------------------------------------------------------------- per alpha
    def _alpha_key(self, alpha: float | Mapping[str, float]) -> str:
        from mlirkit.shift.transform import alpha_to_json
        import json

        return json.dumps(alpha_to_json(alpha), sort_keys=True)

    def prepare(self, alpha: float | Mapping[str, float] = 1.0) -> _Prepared:
        """``[x, b]``, ``||x||^2`` and ``x.V_m`` for ``alpha`` (computed once per alpha, then cached)."""
        from mlirkit.shift.transform import resolve_alpha

        key = self._alpha_key(alpha)
        if key in self._prepared:
            return self._prepared[key]
        default, overrides = resolve_alpha(alpha)
        lang_alpha = np.array([overrides.get(la, default) for la in self.langs])  # (M,)
        b = np.where(self.doc_codes >= 0, lang_alpha[np.maximum(self.doc_codes, 0)], 0.0)  # (n,)
        x = np.asarray(self.embeddings, dtype=np.float64) - b[:, None] * self.vectors[np.maximum(self.doc_codes, 0)]
        x_aug = np.empty((self.n_docs, x.shape[1] + 1), dtype=np.float32)
        x_aug[:, :-1] = x
        x_aug[:, -1] = b
        prepared = _Prepared(x_aug, np.einsum("ij,ij->i", x, x), x @ self.vectors.T, b)
        self._prepared = {key: prepared}  # keep one alpha (a sweep replaces it)
        self._inv_norms = {}
        return prepared

    def source_code(self, lang: str | None) -> int:
        """Row of :attr:`langs` used as the source for a query of ``lang`` (the pivot when it has no vector)."""
        code = self._lang_index.get(canonical(lang) or UNKNOWN)
        if code is None:
            self.counts[f"pivot_fallback:{lang or UNKNOWN}"] += 1
            return 0
        return code

    def _inv_norm(self, prepared: _Prepared, key: str, s: int) -> np.ndarray:
        """(n,) float32 ``1 / ||d'_s||`` (zero vectors kept as they are, as l2_normalize does)."""
        cached = self._inv_norms.get((key, s))
        if cached is None:
            v_s = self.vectors[s]
            sq = prepared.xsq + 2.0 * prepared.b * prepared.xv[:, s] + prepared.b ** 2 * float(v_s @ v_s)
            norm = np.sqrt(np.maximum(sq, 0.0))
            cached = (1.0 / np.where(norm == 0, 1.0, norm)).astype(np.float32)
            self._inv_norms[(key, s)] = cached
        return cached

    # ----------------------------------------------------------------- scoring
    def _query_aug(self, queries: np.ndarray, s: int) -> np.ndarray:
        q = np.asarray(queries, dtype=np.float32)
        out = np.empty((len(q), q.shape[1] + 1), dtype=np.float32)
        out[:, :-1] = q
        out[:, -1] = q.astype(np.float64) @ self.vectors[s]
        return out

    def scores(self, queries: np.ndarray, query_langs: Sequence[str | None],
               alpha: float | Mapping[str, float] = 1.0) -> np.ndarray:
        """(nq, n) float32 scores of every document for each query with its own language's shift."""
        queries = self._check_queries(queries, query_langs)
        prepared = self.prepare(alpha)
        key = self._alpha_key(alpha)
        out = np.empty((len(queries), self.n_docs), dtype=np.float32)
        for s, rows in self._groups(query_langs).items():
            block = self._query_aug(queries[rows], s) @ prepared.x_aug.T  # (nq_s, n)
            if self.metric == "cosine":
                block *= self._inv_norm(prepared, key, s)[None, :]
            out[rows] = block
        return out

    def search(self, queries: np.ndarray, query_langs: Sequence[str | None], k: int,
               alpha: float | Mapping[str, float] = 1.0, *, candidates: np.ndarray | None = None,
               docids: Sequence[str] | None = None) -> list[list[tuple[str, float]]]:
        """Top ``k`` ``(doc_id, score)`` of each query, sorted by ``(-score, doc_id)``.

        ``candidates`` (nq, C) int rows (-1 = none): re-score only those (exact scores, approximate set).
        """
        docids = list(docids) if docids is not None else self.docids
        if docids is None or len(docids) != self.n_docs:
            raise MlirkitError("document ids (one per embedding) are needed to search")
        queries = self._check_queries(queries, query_langs)
        if k < 1:
            raise MlirkitError(f"k must be positive, got {k}")
        prepared = self.prepare(alpha)
        key = self._alpha_key(alpha)
        results: list[list[tuple[str, float]]] = [[] for _ in range(len(queries))]
        keep = min(self.n_docs, k + TIE_SLACK)
        for s, rows in self._groups(query_langs).items():
            q_aug = self._query_aug(queries[rows], s)
            inv = self._inv_norm(prepared, key, s) if self.metric == "cosine" else None
            if candidates is None:
                block = q_aug @ prepared.x_aug.T  # (nq_s, n)
                if inv is not None:
                    block *= inv[None, :]
                if keep < self.n_docs:
                    top = np.argpartition(-block, keep - 1, axis=1)[:, :keep]
                else:
                    top = np.broadcast_to(np.arange(self.n_docs), block.shape)
                top_scores = np.take_along_axis(block, top, axis=1)
                for r, row_top, row_scores in zip(rows, top, top_scores):
                    results[r] = _sorted_hits(docids, row_top, row_scores, k)
            else:
                cand = np.asarray(candidates)[rows]
                for r, q_row, c_row in zip(rows, q_aug, cand):
                    c_row = c_row[c_row >= 0]
                    sc = prepared.x_aug[c_row] @ q_row
                    if inv is not None:
                        sc *= inv[c_row]
                    results[r] = _sorted_hits(docids, c_row, sc.astype(np.float32), k)
        return results

    # ----------------------------------------------------------------- helpers
    def _check_queries(self, queries: np.ndarray, query_langs: Sequence[str | None]) -> np.ndarray:
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.embeddings.shape[1]:
            raise MlirkitError(f"query vectors of shape {queries.shape} for documents of dimension {self.embeddings.shape[1]}")
        if len(query_langs) != len(queries):
            raise MlirkitError(f"{len(query_langs)} query languages for {len(queries)} queries")
        return queries

    def _groups(self, query_langs: Sequence[str | None]) -> dict[int, np.ndarray]:
        codes = np.fromiter((self.source_code(la) for la in query_langs), dtype=np.intp, count=len(query_langs))
        return {int(s): np.flatnonzero(codes == s) for s in np.unique(codes)}

    def describe(self, alpha: Any) -> dict[str, Any]:
        from mlirkit.shift.transform import alpha_to_json

        return {"metric": self.metric, "pivot": self.pivot, "alpha": alpha_to_json(alpha),
                "languages": self.langs, "docs_never_shifted": int((self.doc_codes < 0).sum()),
                "counts": dict(self.counts)}


def _sorted_hits(docids: Sequence[str], rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    hits = [(docids[int(i)], float(s)) for i, s in zip(rows, scores)]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits[:k]


def index_embeddings(index) -> np.ndarray:
    """The untransformed document vectors of an index (``embeddings.npy``; shards concatenated)."""
    shards = getattr(index, "shards", None)
    if shards is not None:
        return np.concatenate([np.asarray(s.embeddings()) for s in shards])
    return index.embeddings()


__all__ = ["METRICS", "QueryTimeShift", "index_embeddings"]
