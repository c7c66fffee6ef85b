"""Dense retrieval of every condition from cached embeddings, scored as ``mlirkit.search`` scores.

For a condition with transform T (none for the base): documents ``normalize(T(f(d)))`` (document side,
by document language), queries ``normalize(T_q(g(q)))`` (query side by query language; SHIFT leaves
queries unchanged), score = inner product = cosine, top k by ``(-score, doc_id)`` through
:func:`mlirkit.search.searcher.search_index` on an in-memory FAISS ``IndexFlatIP``, the same code and
index type a search of an index directory built by ``mlirkit.encode --transform T --alpha A`` uses.

SHIFT's source language is the query language: for queries in another language than the transform's
source, the vectors are re-based with :func:`mlirkit.transforms.derive_source` (``V_{l|s} = V_l - V_s``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.transform import LanguageTransform
from mlirkit.transforms.defaults import DEFAULT_ALPHA


@dataclass(frozen=True)
class Condition:
    """One system: ``method`` base/shift/centering/lir, fitted on ``source`` (parallel condition), at ``alpha``."""

    method: str
    source: str | None = None
    alpha: float | None = None
    transform: LanguageTransform | None = None

    @property
    def name(self) -> str:
        if self.method == "base":
            return "base"
        name = f"{self.method}-{self.source}"
        return f"{name}@{self.alpha:g}" if self.method == "shift" else name


def transform_for_query_lang(transform: LanguageTransform | None, query_lang: str) -> LanguageTransform | None:
    """The transform to use for queries in ``query_lang`` (SHIFT re-based on that language)."""
    from mlirkit.transforms import ShiftTransform, derive_source

    if isinstance(transform, ShiftTransform) and query_lang != transform.source_lang:
        if query_lang not in transform.params_:
            raise MlirkitError(f"SHIFT vectors fitted with source {transform.source_lang!r} have no vector for the "
                               f"query language {query_lang!r}: cannot re-base them")
        return derive_source(transform, query_lang)
    return transform


def encode_side(embs: np.ndarray, langs: Sequence[str], side: str, transform: LanguageTransform | None,
                alpha: float) -> np.ndarray:
    """``normalize(T(embs))`` on ``side`` (no transform: just normalised)."""
    return transform_and_normalize(embs, langs, side, transform, alpha)


def search(doc_vectors: np.ndarray, doc_ids: Sequence[str], query_vectors: np.ndarray, query_ids: Sequence[str],
           k: int, batch_size: int = 256) -> dict[str, dict[str, float]]:
    """``{qid: {docid: score}}``, top ``k`` by ``(-score, doc_id)`` (vectors already normalised)."""
    import faiss

    from mlirkit.search.searcher import search_index

    index = faiss.IndexFlatIP(doc_vectors.shape[1])
    index.add(np.ascontiguousarray(doc_vectors, dtype=np.float32))
    doc_ids = list(doc_ids)
    run: dict[str, dict[str, float]] = {}
    for start in range(0, len(query_ids), batch_size):
        hits = search_index(index, doc_ids, query_vectors[start:start + batch_size], k)
        for qid, row in zip(query_ids[start:start + batch_size], hits):
            run[qid] = {h.doc_id: h.score for h in row}
    return run


def retrieve(condition: Condition, doc_embs: np.ndarray, doc_ids: Sequence[str], doc_langs: Sequence[str],
             query_embs: np.ndarray, query_ids: Sequence[str], query_langs: Sequence[str],
             k: int) -> dict[str, dict[str, float]]:
    """The run of ``condition`` for all given queries (grouped by query language)."""
    alpha = DEFAULT_ALPHA if condition.alpha is None else condition.alpha
    run: dict[str, dict[str, float]] = {}
    qlangs = np.asarray(list(query_langs), dtype=object)
    for lang in sorted(set(query_langs)):
        rows = np.flatnonzero(qlangs == lang)
        transform = condition.transform
        if transform is not None:
            transform = transform_for_query_lang(transform, lang)
        docs = encode_side(doc_embs, doc_langs, "doc", transform, alpha)
        queries = encode_side(query_embs[rows], [lang] * len(rows), "query", transform, alpha)
        run.update(search(docs, doc_ids, queries, [query_ids[i] for i in rows], k))
    return run


def shift_sweep(transform: LanguageTransform, alphas: Sequence[float], doc_embs: np.ndarray, doc_ids: Sequence[str],
                doc_langs: Sequence[str], query_embs: np.ndarray, query_ids: Sequence[str],
                query_langs: Sequence[str], k: int) -> list[dict[str, dict[str, float]]]:
    """The runs of SHIFT at each of ``alphas`` (``retrieve(Condition("shift", ..., alpha, transform), ...)`` for
    each), from one score matrix per query language instead of one search per alpha: SHIFT moves documents
    only, so ``cos(q, d - a V)`` is ``(q.d - a q.V) / ||d - a V||`` with ``q.d`` and ``q.V`` computed once
    (:meth:`mlirkit.search.query_shift.QueryTimeShift.search_sweep`; re-based for each query language as
    :func:`transform_for_query_lang` re-bases it; languages without a vector left unshifted, as the transform
    leaves them)."""
    from mlirkit.search.query_shift import QueryTimeShift

    runs: list[dict[str, dict[str, float]]] = [{} for _ in alphas]
    shift = QueryTimeShift(doc_embs, doc_langs, transform, metric="cosine", docids=doc_ids, missing="keep")
    qlangs = np.asarray(list(query_langs), dtype=object)
    for lang in sorted(set(query_langs)):
        transform_for_query_lang(transform, lang)  # a query language SHIFT cannot serve is refused as retrieve does
        rows = np.flatnonzero(qlangs == lang)
        queries = encode_side(query_embs[rows], [lang] * len(rows), "query", None, 1.0)  # SHIFT leaves queries
        for run, hits in zip(runs, shift.search_sweep(queries, [lang] * len(rows), k, alphas)):
            run.update({query_ids[i]: dict(h) for i, h in zip(rows, hits)})
    return runs


def score_rows(condition: Condition, doc_embs: np.ndarray, doc_langs: Sequence[str], query_embs: np.ndarray,
               query_langs: Sequence[str]):
    """``rows -> (len(rows), n_docs)`` scores of ``condition`` for the queries at ``rows``, every document
    scored as :func:`retrieve` scores it (for measures that need every score: MRC@k, :mod:`mlirkit.eval.mrc`)."""
    alpha = DEFAULT_ALPHA if condition.alpha is None else condition.alpha
    qlangs = np.asarray(list(query_langs), dtype=object)
    transforms = {lang: None if condition.transform is None else transform_for_query_lang(condition.transform, lang)
                  for lang in sorted(set(qlangs))}
    docs: dict[int, np.ndarray] = {}  # the document side of each distinct transform (SHIFT: one per query language)

    def scores(rows: np.ndarray) -> np.ndarray:
        row_langs = qlangs[rows]
        queries: np.ndarray | None = None  # each row's query vector, as its language's transform encodes it
        sides: dict[int, list[np.ndarray]] = {}  # document side -> the rows scored against it
        for lang in sorted(set(row_langs)):
            at = np.flatnonzero(row_langs == lang)
            transform = transforms[lang]
            key = id(transform)
            if key not in docs:
                docs[key] = encode_side(doc_embs, doc_langs, "doc", transform, alpha)
            encoded = encode_side(query_embs[rows[at]], [lang] * len(at), "query", transform, alpha)
            if queries is None:
                queries = np.empty((len(rows), encoded.shape[1]), dtype=np.float32)
            queries[at] = encoded
            sides.setdefault(key, []).append(at)
        if len(sides) == 1:  # one document side for every language (all but SHIFT): one product
            return queries @ docs[next(iter(sides))].T
        out = np.empty((len(rows), len(doc_embs)), dtype=np.float32)
        for key, parts in sides.items():  # SHIFT: one per query language
            at = np.concatenate(parts)
            out[at] = queries[at] @ docs[key].T
        return out

    return scores


__all__ = ["Condition", "encode_side", "retrieve", "score_rows", "search", "shift_sweep", "transform_for_query_lang"]
