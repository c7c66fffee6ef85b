"""SHIFT for every query language inside ``pyserini.search.faiss``: Pyserini's ``FaissSearcher`` with
mlirkit's exact query-time shift as its scorer (JVM required).

:class:`QueryShiftFaissSearcher` is Pyserini's ``FaissSearcher`` (same constructor, Pyserini opens the
index and its ``docid`` file and encodes the queries with its query encoder) whose ``search`` and
``batch_search`` score each query with the SHIFT of its own language ``s`` from the one index
(:mod:`mlirkit.search.query_shift`): with ``V_{l|s} = V_l - V_s``, a document ``d`` of language ``l``
scores ``q . (d - alpha_l (V_l - V_s))``, divided by that vector's norm for cosine. The documents'
untransformed vectors come from the index's ``embeddings.npy``; a flat index is scored exhaustively
(exact); for HNSW / IVF-PQ the FAISS index Pyserini opened gives ``candidates`` rows per query, which are
re-scored exactly. This is what ``python -m mlirkit.search --query-shift`` computes (same
:func:`~mlirkit.search.query_shift.plan_search`), so both write the same ranking.

Each query's language: the topics file's (query text -> language, read by the search wrapper), else
``query_lang``; a query whose language has no vector is scored with the pivot (the index as built).
Pyserini's PRF (``--prf-depth``, which needs the index's own vectors back) is refused.
Importing this module starts the JVM.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.threads import faiss_threads
from mlirkit.base.jvm import boot_jvm
from mlirkit.search.query_shift import ShiftPlan, plan_search

boot_jvm()

from pyserini.search.faiss import DenseSearchResult, FaissSearcher  # noqa: E402

logger = logging.getLogger(__name__)


class QueryShiftFaissSearcher(FaissSearcher):
    """``FaissSearcher`` scoring with :class:`~mlirkit.search.query_shift.ShiftPlan` ``plan`` (see module
    docstring); ``query_langs`` maps query text -> language, ``query_lang`` is the rest's."""

    def __init__(self, index_dir: str, query_encoder: Any, prebuilt_index_name: str | None = None,
                 normalize_distances: bool = False, faiss_device: str = "cpu", *, plan: ShiftPlan,
                 query_langs: Mapping[str, str] | None = None, query_lang: str | None = None) -> None:
        super().__init__(index_dir, query_encoder, prebuilt_index_name=prebuilt_index_name,
                         normalize_distances=normalize_distances, faiss_device=faiss_device)
        docids = plan.shift.docids
        if docids is None or list(self.docids) != list(docids):
            raise MlirkitError(f"{index_dir}: the docid file Pyserini read does not match the index's embeddings")
        self.plan = plan
        self.query_langs = dict(query_langs or {})
        self.query_lang = query_lang

    def languages(self, texts: Sequence[Any]) -> list[str]:
        """Each query's language (its text's in the topics, else ``query_lang``, else unknown)."""
        default = self.query_lang or UNKNOWN
        return [self.query_langs.get(t, default) if isinstance(t, str) else default for t in texts]

    def _encode(self, queries: Sequence[Any]) -> np.ndarray:
        if not all(isinstance(q, str) for q in queries):
            raise MlirkitError("the query-time shift takes query texts (or vectors), not query dicts")
        if hasattr(self.query_encoder, "encode_batch"):
            vectors = self.query_encoder.encode_batch(list(queries))
        else:
            vectors = [self.query_encoder.encode(q) for q in queries]
        return np.asarray(vectors, dtype=np.float32).reshape(len(queries), self.dimension)

    def _results(self, vectors: np.ndarray, langs: Sequence[str], k: int, threads: int) -> list[list[DenseSearchResult]]:
        with faiss_threads(threads):  # Pyserini's --threads, for the candidate search (scoped)
            ranked = plan_search(self.plan, self.index, vectors, langs, k)
        out = []
        for hits in ranked:
            scores = np.array([s for _, s in hits], dtype=np.float32)
            if self.normalize_distances:
                scores = self._normalize_to_unit_interval(scores)
            out.append([DenseSearchResult(d, float(s)) for (d, _), s in zip(hits, scores)])
        return out

    def search(self, query: Any, k: int = 10, threads: int = 1, remove_dups: bool = False,
               return_vector: bool = False):
        if return_vector:
            raise MlirkitError("Pyserini's PRF (--prf-depth) is not available with the query-time shift")
        if isinstance(query, np.ndarray):
            vectors, langs = query.reshape(-1, self.dimension).astype(np.float32), self.languages([None])
        else:
            vectors, langs = self._encode([query]), self.languages([query])
        return self._results(vectors, langs, k, threads)[0]  # document ids are unique: nothing to de-duplicate

    def batch_search(self, queries: Any, q_ids: Sequence[str], k: int = 10, threads: int = 1,
                     return_vector: bool = False):
        if return_vector:
            raise MlirkitError("Pyserini's PRF (--prf-depth) is not available with the query-time shift")
        if isinstance(queries, np.ndarray):
            vectors, langs = queries.astype(np.float32), self.languages([None] * len(queries))
        else:
            vectors, langs = self._encode(queries), self.languages(queries)
        return dict(zip(q_ids, self._results(vectors, langs, k, threads)))


def searcher_class(plan: ShiftPlan, query_langs: Mapping[str, str] | None = None,
                   query_lang: str | None = None) -> type:
    """A :class:`QueryShiftFaissSearcher` subclass bound to ``plan``: what ``pyserini.search.faiss`` gets as
    ``FaissSearcher`` (it calls ``FaissSearcher(index, query_encoder, normalize_distances=..., faiss_device=...)``)."""

    class BoundQueryShiftFaissSearcher(QueryShiftFaissSearcher):
        def __init__(self, index_dir: str, query_encoder: Any, prebuilt_index_name: str | None = None,
                     normalize_distances: bool = False, faiss_device: str = "cpu") -> None:
            super().__init__(index_dir, query_encoder, prebuilt_index_name, normalize_distances, faiss_device,
                             plan=plan, query_langs=query_langs, query_lang=query_lang)

    return BoundQueryShiftFaissSearcher


__all__ = ["QueryShiftFaissSearcher", "searcher_class"]
