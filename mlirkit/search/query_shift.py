"""SHIFT for every query language from one index: the source language's shift applied at query time.

A SHIFT transform fitted with pivot (source) language ``p`` holds ``V_l`` for its languages (``V_p = 0``).
For a query of language ``s`` the re-based vectors are ``V_{l|s} = V_l - V_s`` (:func:`mlirkit.transforms.shift_transform.derive_source`),
and the s-source index would hold, for document ``d`` of language ``l`` with ``alpha_l`` (docs/design.md, "SHIFT")::

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
``scores = (Q_aug X_aug^T) * (1/||d'_s||)``; the numerator is one matrix product for a batch of queries of
any languages, the denominator a per-document vector of each source language (an (M, n) table, cached
per alpha). With inner product and no unknown-language
documents, ``b (q.V_s)`` is the same for every document of a query, so the pivot index already ranks as
the s-source index would (the issue's observation); with cosine the norms depend on ``s``.

Document languages the transform has no vector for are filled from the documents themselves or left
unshifted (``missing``, :func:`mlirkit.transforms.hybrid.fill_missing`; default: the policy recorded in the
index's meta.json when it was built with a transform, else the transform's own, filled by default; one log
line and :meth:`QueryTimeShift.describe` say which); a filled language is then also a query language with a
vector. Filling is a fit, done once before searching: an index built with a transform stores it filled
(``transform.safetensors``), and another transform or policy is filled by :func:`fill_missing_for_index`
(``python -m mlirkit.search`` does it); the query-time shift itself never fits (a language still to fill is
an error that says so). A filled vector is defined relative to the pivot of the pairs and re-based like the others
(:mod:`mlirkit.transforms.hybrid`), so each query language ranks exactly as its re-based index would.
A query whose language is unknown or still has no vector is scored with the pivot source (``V_s = 0``: the
index as built); such queries are counted in :attr:`QueryTimeShift.counts`. Alpha (a float or a
per-language dict: :class:`mlirkit.transforms.alpha.Alpha`) is chosen per call, without re-indexing.

Search is exhaustive (exact) by default; with ``candidates`` (rows of each query's candidates, e.g. from
an HNSW or IVF-PQ index) only those are re-scored exactly. Ties are broken by ``(-score, doc_id)``.
Citation: SHIFT's re-basing ``V_{l|s} = V_l - V_s`` as in the authors' released code (docs/design.md, "SHIFT").
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, canonical, log_fallback, lookup
from mlirkit.base.option_names import option
from mlirkit.base.top_k import top_k_columns
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.defaults import DEFAULT_ALPHA

logger = logging.getLogger(__name__)

METRICS = ("cosine", "ip")
#: extra rows kept beyond k so that ties at the cut-off are broken by doc id (as mlirkit.search does)
TIE_SLACK = 16
#: candidates fetched from an approximate index (HNSW, IVF-PQ) for the exact re-scoring
DEFAULT_CANDIDATES = 1000
#: queries per score block of :meth:`QueryTimeShift.search_sweep` (float32 blocks of queries x documents)
SWEEP_QUERY_BLOCK = 256


class _Prepared(NamedTuple):
    x_aug: np.ndarray  # (n, d+1) float32: [x, b]
    xsq: np.ndarray  # (n,) float64 ||x||^2
    xv: np.ndarray  # (n, M) float64 x . V_m
    b: np.ndarray  # (n,) float64 alpha_l * m_d


class QueryTimeShift:
    """Exact per-query-language SHIFT scores from raw document embeddings and one pivot transform.

    Memory: the ``(n, d+1)`` float32 matrix ``[x, b]`` of the current alpha, ``(n, M)`` float64
    ``x.V_m`` and an ``(M, n)`` float32 table of inverse norms (cosine); ``embeddings`` may be a memory map.

    ``embeddings`` (n, d): the untransformed document vectors (an index's ``embeddings.npy``);
    ``doc_langs`` (n,); ``transform``: a :class:`~mlirkit.transforms.shift_transform.ShiftTransform` (its source language is
    the pivot); ``metric``: ``"cosine"`` or ``"ip"`` (see the module docstring for both formulas);
    ``missing``: ``"corpus"`` or ``"keep"`` for the document languages without a vector (module docstring; None:
    the transform's own policy); ``explicit``: whether ``missing`` was asked for (default: when given).
    """

    chunk_rows = 65536

    def __init__(self, embeddings: np.ndarray, doc_langs: Sequence[str], transform, *, metric: str = "cosine",
                 docids: Sequence[str] | None = None, missing: str | None = None, origin: str | None = None,
                 explicit: bool | None = None) -> None:
        from mlirkit.transforms.hybrid import resolve_missing
        from mlirkit.transforms.shift_transform import ShiftTransform

        if not isinstance(transform, ShiftTransform):
            raise MlirkitError(f"the query-time shift needs a shift transform, not {getattr(transform, 'method', transform)!r}")
        if metric not in METRICS:
            raise MlirkitError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        self.embeddings = embeddings if isinstance(embeddings, np.ndarray) else np.asarray(embeddings)
        if self.embeddings.ndim != 2 or self.embeddings.shape[1] != transform.dim:
            raise MlirkitError(f"embeddings of shape {self.embeddings.shape} for a transform of dimension {transform.dim}")
        if len(doc_langs) != len(self.embeddings):
            raise MlirkitError(f"{len(doc_langs)} document languages for {len(self.embeddings)} embeddings")
        transform = resolve_missing(transform, Counter(str(la) for la in doc_langs if la), policy=missing,
                                    origin=origin, explicit=missing is not None if explicit is None else explicit)
        self.transform = transform
        self.metric = metric
        self.pivot = transform.source_lang_
        self.doc_langs = list(doc_langs)
        self.docids = list(docids) if docids is not None else None
        # languages with a vector, the pivot first (V_pivot = 0)
        self.langs = [self.pivot, *transform.languages]
        self.vectors = np.stack([np.zeros(transform.dim), *(transform.params_[la].astype(np.float64)
                                                             for la in transform.languages)])  # (M, d)
        self._lang_index = {la: k for k, la in enumerate(self.langs)}
        memo: dict[str | None, int] = {}
        for la in dict.fromkeys(self.doc_langs):
            memo[la] = self._row(la, "documents")
        codes = np.fromiter((memo[la] for la in self.doc_langs), dtype=np.intp, count=len(self.doc_langs))
        self.doc_codes = codes  # (n,) -1 = unknown language or no vector: never shifted
        self.counts: Counter[str] = Counter()
        self.warned_fallback: set[str] = set()  # query languages already warned about (:meth:`log_fallback`)
        self._prepared: dict[str, _Prepared] = {}
        self._inv_norms: dict[str, np.ndarray] = {}

    @property
    def n_docs(self) -> int:
        return len(self.embeddings)

    # ----------------------------------------------------------------- per alpha
    def _alpha_key(self, alpha: float | Mapping[str, float]) -> str:
        return json.dumps(Alpha.coerce(alpha).to_json(), sort_keys=True)

    def prepare(self, alpha: float | Mapping[str, float] = DEFAULT_ALPHA) -> _Prepared:
        """``[x, b]``, ``||x||^2`` and ``x.V_m`` for ``alpha`` (computed once per alpha, then cached)."""
        key = self._alpha_key(alpha)
        if key in self._prepared:
            return self._prepared[key]
        alpha = Alpha.coerce(alpha)
        lang_alpha = np.array([alpha.for_lang(la) for la in self.langs])  # (M,)
        b = np.where(self.doc_codes >= 0, lang_alpha[np.maximum(self.doc_codes, 0)], 0.0)  # (n,)
        dim = self.embeddings.shape[1]
        x_aug = np.empty((self.n_docs, dim + 1), dtype=np.float32)
        xsq = np.empty(self.n_docs)
        xv = np.empty((self.n_docs, len(self.langs)))
        for a in range(0, self.n_docs, self.chunk_rows):  # float64 temporaries of chunk_rows x d only
            z = slice(a, min(a + self.chunk_rows, self.n_docs))
            x = np.asarray(self.embeddings[z], dtype=np.float64) - b[z, None] * self.vectors[np.maximum(self.doc_codes[z], 0)]
            x_aug[z, :-1] = x
            xsq[z] = np.einsum("ij,ij->i", x, x)
            xv[z] = x @ self.vectors.T
        x_aug[:, -1] = b
        prepared = _Prepared(x_aug, xsq, xv, b)
        self._prepared = {key: prepared}  # keep one alpha (a sweep replaces it)
        self._inv_norms = {}
        return prepared

    def _row(self, lang: str | None, what: str) -> int:
        """Row of :attr:`langs` that ``lang`` meets (:func:`mlirkit.base.langs.lookup`: a ``pt-BR`` query
        uses the ``pt`` vector, logged once), -1 for none."""
        used = lookup(lang, self.langs)
        if used is None:
            return -1
        if lang is not None:
            log_fallback(lang, used, what)
        return self._lang_index[used]

    def has_vector(self, lang: str | None) -> bool:
        """Whether queries of ``lang`` are scored with their own source (the pivot or a language with a vector,
        by :func:`mlirkit.base.langs.lookup`)."""
        return lookup(lang, self.langs) is not None

    def source_code(self, lang: str | None) -> int:
        """Row of :attr:`langs` used as the source for a query of ``lang`` (the pivot when it has no vector)."""
        code = self._row(lang, "queries")
        if code < 0:
            self.counts[f"pivot_fallback:{lang or UNKNOWN}"] += 1
            return 0
        return code

    def fallback_langs(self, query_langs: Sequence[str | None]) -> Counter:
        """``{lang: queries}`` of the queries that :meth:`source_code` scores with the pivot (no vector)."""
        return Counter(str(la or UNKNOWN) for la in query_langs if lookup(la, self.langs) is None)

    def log_fallback(self, query_langs: Sequence[str | None]) -> None:
        """Log the queries of ``query_langs`` (one batch) scored with the pivot: a warning the first time a
        language without a vector is seen, at DEBUG level for later batches of only such languages, so that
        a run searching batch by batch (Pyserini's ``batch_search``) warns once per language, not per batch."""
        fallback = self.fallback_langs(query_langs)
        if not fallback:
            return
        from mlirkit.base.registry import did_you_mean

        new = set(fallback) - self.warned_fallback
        self.warned_fallback.update(fallback)
        logger.log(logging.WARNING if new else logging.DEBUG,
                   "%d of %d queries scored with the pivot %r (no vector for their language: %s)%s",
                   sum(fallback.values()), len(query_langs), self.pivot,
                   ", ".join(f"{la} {n}{did_you_mean(la, self.langs)}" for la, n in sorted(fallback.items())),
                   "; later batches of these languages are logged at DEBUG level" if new else "")

    def _inv_norms_all(self, prepared: _Prepared, key: str) -> np.ndarray:
        """(M, n) float32 ``1 / ||d'_s||`` for every source ``s`` (zero vectors kept, as l2_normalize does)."""
        cached = self._inv_norms.get(key)
        if cached is None:
            vsq = np.einsum("ij,ij->i", self.vectors, self.vectors)  # (M,)
            b = prepared.b[None, :]
            sq = prepared.xsq[None, :] + 2.0 * b * prepared.xv.T + b ** 2 * vsq[:, None]  # (M, n)
            norm = np.sqrt(np.maximum(sq, 0.0))
            cached = (1.0 / np.where(norm == 0, 1.0, norm)).astype(np.float32)
            self._inv_norms[key] = cached
        return cached

    # ----------------------------------------------------------------- scoring
    def _query_aug(self, queries: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """(nq, d+1) ``[q, q.V_s]`` with ``s`` the source row of each query."""
        out = np.empty((len(queries), queries.shape[1] + 1), dtype=np.float32)
        out[:, :-1] = queries
        out[:, -1] = np.einsum("ij,ij->i", queries.astype(np.float64), self.vectors[codes])
        return out

    def _score_block(self, queries: np.ndarray, codes: np.ndarray, alpha) -> np.ndarray:
        prepared = self.prepare(alpha)
        block = self._query_aug(queries, codes) @ prepared.x_aug.T  # (nq, n): one product for every language
        if self.metric == "cosine":
            block *= self._inv_norms_all(prepared, self._alpha_key(alpha))[codes]  # (nq, n)
        return block

    def scores(self, queries: np.ndarray, query_langs: Sequence[str | None],
               alpha: float | Mapping[str, float] = DEFAULT_ALPHA) -> np.ndarray:
        """(nq, n) float32 scores of every document for each query with its own language's shift."""
        queries = self._check_queries(queries, query_langs)
        return self._score_block(queries, self._codes(query_langs), alpha)

    def search(self, queries: np.ndarray, query_langs: Sequence[str | None], k: int,
               alpha: float | Mapping[str, float] = DEFAULT_ALPHA, *, candidates: np.ndarray | None = None,
               docids: Sequence[str] | None = None) -> list[list[tuple[str, float]]]:
        """Top ``k`` ``(doc_id, score)`` of each query, sorted by ``(-score, doc_id)``.

        ``candidates`` (nq, C) int rows (-1 = none): re-score only those (exact scores, approximate set).
        """
        docids, queries, codes = self._search_input(docids, queries, query_langs, k)
        if candidates is None:
            return _top_hits(self._score_block(queries, codes, alpha), docids, k)
        prepared = self.prepare(alpha)
        inv = self._inv_norms_all(prepared, self._alpha_key(alpha)) if self.metric == "cosine" else None
        results = []
        for q_row, s, c_row in zip(self._query_aug(queries, codes), codes, np.asarray(candidates)):
            c_row = c_row[c_row >= 0]
            sc = prepared.x_aug[c_row] @ q_row
            if inv is not None:
                sc *= inv[s, c_row]
            results.append(_sorted_hits(docids, c_row, sc.astype(np.float32), k))
        return results

    def search_sweep(self, queries: np.ndarray, query_langs: Sequence[str | None], k: int,
                     alphas: Sequence[float | Mapping[str, float]],
                     docids: Sequence[str] | None = None) -> list[list[list[tuple[str, float]]]]:
        """:meth:`search` (exhaustive) at every alpha of ``alphas``, one result list per alpha, from one score
        matrix per block of queries instead of one search per alpha.

        With ``b = alpha_l m_d`` and ``V_s`` the query's source vector, the shifted document is
        ``d'_s = d - b (V_l - V_s)``, so the score's numerator is affine in ``b`` and its squared norm
        quadratic (the module docstring's formulas, expanded around the raw document ``d``)::

            q.d'_s      = q.d - b (q.V_l - q.V_s)
            ||d'_s||^2  = ||d||^2 - 2 b (d.V_l - d.V_s) + b^2 ||V_l - V_s||^2

        ``q.d`` and ``q.V_l - q.V_s`` are computed once per block of queries (grouped by source language), each
        alpha costs three elementwise float32 passes and the top k; the same scores as :meth:`search` up to float
        rounding (the equivalence test), ties broken alike.
        """
        docids, queries, codes = self._search_input(docids, queries, query_langs, k)
        doc_codes = np.maximum(self.doc_codes, 0)
        betas = [np.where(self.doc_codes >= 0, np.array([Alpha.coerce(a).for_lang(la) for la in self.langs])[doc_codes],
                          0.0) for a in alphas]  # b per document, per alpha
        used = np.unique(codes)  # the source rows these queries use
        inv_norms = {}
        if self.metric == "cosine":  # (len(used), n) 1 / ||d'_s|| per alpha
            dsq, dv = np.zeros(self.n_docs), np.empty((self.n_docs, len(self.langs)))
            for a in range(0, self.n_docs, self.chunk_rows):
                z = slice(a, min(a + self.chunk_rows, self.n_docs))
                d = np.asarray(self.embeddings[z], dtype=np.float64)
                dsq[z] = np.einsum("ij,ij->i", d, d)
                dv[z] = d @ self.vectors.T
            own = dv[np.arange(self.n_docs), doc_codes]  # d.V_l
            vv = self.vectors @ self.vectors.T  # (M, M)
            pair_sq = np.diag(vv)[:, None] - 2.0 * vv + np.diag(vv)[None, :]  # ||V_m - V_s||^2
            gap_sq = pair_sq[doc_codes][:, used].T  # (S, n)
            cross = own[None, :] - dv[:, used].T  # (S, n) d.V_l - d.V_s
            for i, b in enumerate(betas):
                norm = np.sqrt(np.maximum(dsq[None, :] - 2.0 * b * cross + b ** 2 * gap_sq, 0.0))
                inv_norms[i] = (1.0 / np.where(norm == 0, 1.0, norm)).astype(np.float32)
        order = np.argsort(codes, kind="stable")  # queries grouped by source: each group scales by one norm row
        out: list[list[list[tuple[str, float]]]] = [[None] * len(queries) for _ in alphas]  # type: ignore[list-item]
        for a in range(0, len(queries), SWEEP_QUERY_BLOCK):
            rows = order[a:a + SWEEP_QUERY_BLOCK]
            q, c = queries[rows], codes[rows]
            base = np.empty((len(q), self.n_docs), dtype=np.float32)
            for z in range(0, self.n_docs, self.chunk_rows):
                base[:, z:z + self.chunk_rows] = q @ np.asarray(self.embeddings[z:z + self.chunk_rows], dtype=np.float32).T
            qv = q.astype(np.float64) @ self.vectors.T  # (nq, M)
            lang_gap = (qv[:, doc_codes] - qv[np.arange(len(q)), c][:, None]).astype(np.float32)  # q.V_l - q.V_s
            groups = np.flatnonzero(np.diff(c)) + 1
            block = np.empty_like(base)
            for i, b in enumerate(betas):
                np.multiply(lang_gap, b.astype(np.float32), out=block)
                np.subtract(base, block, out=block)
                if self.metric == "cosine":
                    for g in np.split(np.arange(len(q)), groups):
                        block[g[0]:g[-1] + 1] *= inv_norms[i][np.searchsorted(used, c[g[0]])]
                for r, hits in zip(rows, _top_hits(block, docids, k)):
                    out[i][r] = hits
        return out

    # ----------------------------------------------------------------- helpers
    def _search_input(self, docids: Sequence[str] | None, queries: np.ndarray, query_langs: Sequence[str | None],
                      k: int) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The document ids, the checked queries and their source rows of a search (errors for bad input)."""
        docids = list(docids) if docids is not None else self.docids
        if docids is None or len(docids) != self.n_docs:
            raise MlirkitError("document ids (one per embedding) are needed to search")
        queries = self._check_queries(queries, query_langs)
        if k < 1:
            raise MlirkitError(f"k must be positive, got {k}")
        return docids, queries, self._codes(query_langs)

    def _check_queries(self, queries: np.ndarray, query_langs: Sequence[str | None]) -> np.ndarray:
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.embeddings.shape[1]:
            raise MlirkitError(f"query vectors of shape {queries.shape} for documents of dimension {self.embeddings.shape[1]}")
        if len(query_langs) != len(queries):
            raise MlirkitError(f"{len(query_langs)} query languages for {len(queries)} queries")
        return queries

    def _codes(self, query_langs: Sequence[str | None]) -> np.ndarray:
        return np.fromiter((self.source_code(la) for la in query_langs), dtype=np.intp, count=len(query_langs))

    def describe(self, alpha: Any) -> dict[str, Any]:
        return {"metric": self.metric, "pivot": self.pivot, "alpha": Alpha.coerce(alpha).to_json(),
                "languages": self.langs, "docs_never_shifted": int((self.doc_codes < 0).sum()),
                "counts": dict(self.counts),
                **({"missing_languages": self.transform.meta["missing_languages"]}
                   if "missing_languages" in self.transform.meta else {})}


def _top_hits(block: np.ndarray, docids: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
    """Top ``k`` ``(doc_id, score)`` of each row of a (queries, documents) score block, by ``(-score, doc_id)``
    among the ``k + TIE_SLACK`` best scores."""
    n_docs = block.shape[1]
    keep = min(n_docs, k + TIE_SLACK)
    if keep < n_docs:
        top = top_k_columns(block, keep)
    else:
        top = np.broadcast_to(np.arange(n_docs), block.shape)
    top_scores = np.take_along_axis(block, top, axis=1)
    return [_sorted_hits(docids, r, sc, k) for r, sc in zip(top, top_scores)]


def _sorted_hits(docids: Sequence[str], rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    hits = [(docids[int(i)], float(s)) for i, s in zip(rows, scores)]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits[:k]


class ShiftPlan(NamedTuple):
    """How one index is searched with the query-time shift: the scorer, alpha, and the candidates
    fetched per query from a non-flat index (None: exhaustive, exact)."""

    shift: QueryTimeShift
    alpha: Any
    candidates: int | None


def plan_for_index(index, metric: str = "cosine", alpha: Any = None, transform: Any = None,
                   candidates: int | None = None, *, force: bool = False, missing: str | None = None) -> ShiftPlan:
    """The query-time shift of an open index (:class:`~mlirkit.index.DenseIndex` or a sharded one).

    ``transform``: a shift file or object (default: the index's own, which must be SHIFT); ``alpha``:
    default the index's (its own transform) or 1.0 (a given one); ``candidates``: default
    :data:`DEFAULT_CANDIDATES` when any shard is not flat, else exhaustive (0 = exhaustive too); ``missing``: see
    :class:`QueryTimeShift`.
    """
    from mlirkit.index.types import spec_of

    meta_transform = index.transform or {}
    given_alpha = alpha
    transform, alpha = shift_for_index(index, transform, alpha, force=force)
    overrides = Alpha.coerce(given_alpha).overrides if given_alpha is not None else {}

    def check_overrides(langs: Sequence[str]) -> None:
        """An override the shift has no vector for would be silently ignored."""
        from mlirkit.base.registry import did_you_mean

        for la in overrides:
            if la not in langs:
                raise MlirkitError(f"{option('alpha')} {la}=...: the shift transform has no vector for {la!r}"
                                   f"{did_you_mean(la, langs)} (its languages: {', '.join(langs)})")

    # before anything is logged: a typo fails alone (a language of the index may still get a corpus vector)
    check_overrides(sorted({transform.source_lang_, *transform.languages,
                            *(canonical(la) for la in set(index.langs) if la and la != UNKNOWN)}))
    explicit = missing is not None
    if missing is None:  # the policy the index was built with, unless told otherwise
        missing = (meta_transform.get("missing_languages") or {}).get("policy")
    shift = QueryTimeShift(index_embeddings(index), index.langs, transform, metric=metric, docids=index.docids,
                           missing=missing, origin=str(index.path), explicit=explicit)
    check_overrides(shift.langs)
    shards = getattr(index, "shards", [index])
    if candidates is None and any(spec_of(sh).name != "flat" for sh in shards):
        candidates = DEFAULT_CANDIDATES
    if candidates is not None and candidates < 0:
        raise MlirkitError(f"candidates must be >= 0, got {candidates}")
    return ShiftPlan(shift, Alpha.coerce(DEFAULT_ALPHA if alpha is None else alpha), candidates or None)


def fill_missing_for_index(index, transform: Any = None, *, missing: str | None = None, force: bool = False) -> Any:
    """The fit step of the query-time shift: ``transform`` (a shift file or object; default the index's own) with
    the index's document languages it lacks filled from the index's untransformed vectors or kept, by
    ``missing`` (default: the policy the index was built with, else the transform's own;
    :func:`mlirkit.transforms.hybrid.fill_missing`). Pass the result to :func:`plan_for_index` (or
    :class:`~mlirkit.search.Searcher`'s ``transform``); searching never fits."""
    from mlirkit.transforms.hybrid import fill_missing_from_corpus

    transform, _ = shift_for_index(index, transform, None, force=force)
    policy = missing
    if policy is None:  # the policy the index was built with, unless told otherwise (as plan_for_index)
        policy = ((index.transform or {}).get("missing_languages") or {}).get("policy")
    return fill_missing_from_corpus(transform, index_embeddings(index), index.langs, policy=policy,
                                    origin=str(index.path), explicit=missing is not None)


def shift_for_index(index, transform: Any = None, alpha: Any = None, *, force: bool = False) -> tuple[Any, Any]:
    """``(transform, alpha)`` of a query-time shift of ``index`` (anything with ``path``, ``transform``, ``encoder``,
    ``dim``): a given transform (file or object) or the index's own SHIFT with its alpha, checked against the
    index's encoder."""
    from mlirkit.index.layout import TRANSFORM_FILE
    from mlirkit.transforms import LanguageTransform, load_transform

    meta_transform = index.transform or {}
    if transform is None:
        if meta_transform.get("method") != "shift":
            raise MlirkitError(f"{index.path}: the query-time shift needs a SHIFT index or a shift "
                               f"transform ({option('transform')})")
        transform = load_transform(index.path / TRANSFORM_FILE)
        alpha = meta_transform.get("alpha", DEFAULT_ALPHA) if alpha is None else alpha
    elif not isinstance(transform, LanguageTransform):
        transform = load_transform(transform)
    if index.encoder is not None:
        transform.check_encoder(index.encoder, force=force, dim=index.dim)
    return transform, alpha


def plan_search(plan: ShiftPlan, faiss_index, vectors: np.ndarray, langs: Sequence[str | None],
                k: int) -> list[list[tuple[str, float]]]:
    """Top ``k`` of each query with its own language's shift: exhaustive, or ``plan.candidates`` rows
    (at least ``k + TIE_SLACK``) from ``faiss_index`` (the caller sets its threads) re-scored exactly."""
    plan.shift.log_fallback(langs)  # warned once per language over the plan's batches
    candidates = None
    if plan.candidates:
        fetch = min(faiss_index.ntotal, max(plan.candidates, k + TIE_SLACK))
        _, candidates = faiss_index.search(np.ascontiguousarray(vectors, dtype=np.float32), fetch)
    return plan.shift.search(vectors, langs, k, plan.alpha, candidates=candidates)


def require_query_langs(queries: Sequence[Any], source: str) -> None:
    """Refuse queries (with ``query_id`` and ``lang``) without a language: the query-time shift would score
    them with the pivot unnoticed; ``source`` names the topics file in the message."""
    from mlirkit.base.langs import is_known

    missing = [q.query_id for q in queries if not is_known(q.lang)]
    if missing:
        raise MlirkitError(f"{source}: {len(missing)} of {len(queries)} queries have no language (first: query id "
                           f"{missing[0]!r}); the query-time shift scores each with its own language's vector: "
                           f"give a lang field / third TSV column, or {option('query_lang')}")


def index_embeddings(index) -> np.ndarray:
    """The untransformed document vectors of an index (``embeddings.npy``; shards concatenated)."""
    shards = getattr(index, "shards", None)
    if shards is not None:
        return np.concatenate([np.asarray(s.embeddings()) for s in shards])
    return index.embeddings()


__all__ = ["DEFAULT_CANDIDATES", "METRICS", "QueryTimeShift", "ShiftPlan", "fill_missing_for_index", "index_embeddings",
           "plan_for_index",
           "plan_search", "shift_for_index",
           "require_query_langs"]
