"""Search a Qdrant Edge shard of an mlirkit index (:mod:`mlirkit.index.qdrant_export`) as :class:`Searcher`
searches the index: plain or index-time shifted (the ``indexed`` vectors), the query-time shift for every
query language, and a search restricted to the documents of one language (a payload filter on ``lang``).

- ``query_shift="ip"``: the query ``[q, alpha_l (q.V_s - q.V_l)]_l`` against the ``shift`` vectors
  ``[d, e_l]`` gives ``q.d'_s`` inside the engine (the module docstring of :mod:`mlirkit.index.qdrant_export`).
- ``query_shift="cosine"``: ``q.d'_s / ||d'_s||`` (:mod:`mlirkit.search.query_shift`); the denominator depends on
  the document and the query's language, so ``candidates`` rows ranked by the inner product are fetched with
  their vectors and re-scored exactly here (default :data:`~mlirkit.search.query_shift.DEFAULT_CANDIDATES`, at
  most every document; as the FAISS path's candidates, a top-k document outside them is missed).

Search is exact (``SearchParams(exact=True)``, as a flat FAISS index) unless ``hnsw_ef`` is given (the shard's
HNSW graph, approximate). Ties are broken by ``(-score, doc_id)``.
"""
from __future__ import annotations

import logging
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, canonical
from mlirkit.base.option_names import option
from mlirkit.index.qdrant_export import (
    INDEXED_VECTOR, SHARD_DIR, SHIFT_FILE, SHIFT_VECTOR, read_shard_meta, shift_languages,
)
from mlirkit.search.query_shift import DEFAULT_CANDIDATES, METRICS
from mlirkit.search.results import Hit
from mlirkit.search.searcher import TIE_SLACK, Searcher
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.defaults import DEFAULT_ALPHA

logger = logging.getLogger(__name__)


class QdrantShard:
    """A shard directory with what :class:`Searcher` reads of an index (``path``, ``meta``, ``dim``, ``encoder``,
    ``transform``) and the open Qdrant Edge shard (``shard``)."""

    threads = None

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.shard_meta = read_shard_meta(self.path)
        self.meta: dict[str, Any] = self.shard_meta["index_meta"]
        self.vectors: dict[str, int] = self.shard_meta["vectors"]
        if INDEXED_VECTOR not in self.vectors:
            raise MlirkitError(f"{self.path}: field 'vectors' has no {INDEXED_VECTOR!r} vector")
        self.dim = int(self.vectors[INDEXED_VECTOR])
        self.encoder: dict[str, Any] | None = self.meta.get("encoder")
        self.transform: dict[str, Any] | None = self.meta.get("transform")

    @cached_property
    def shard(self):
        import qdrant_edge as qd

        return qd.EdgeShard.load(str(self.path / SHARD_DIR))

    def records(self) -> list[Any]:
        """Every point (payload and vectors), in id order."""
        import qdrant_edge as qd

        out, offset = [], None
        while True:
            batch, offset = self.shard.scroll(qd.ScrollRequest(offset=offset, limit=1024, with_payload=True,
                                                               with_vector=True))
            out.extend(batch)
            if offset is None:
                return sorted(out, key=lambda r: int(r.id))


class QdrantSearcher(Searcher):
    """:class:`Searcher` over a Qdrant shard directory. ``lang``: search only documents of that language;
    ``hnsw_ef``: approximate (HNSW) instead of exact; ``query_shift``, ``alpha``, ``candidates`` as in
    :class:`Searcher` (the shift is the index's own, filled when the shard was written)."""

    def __init__(self, shard_dir: str | os.PathLike, encoder=None, *, force: bool = False, query_shift: str | None = None,
                 alpha: Any = None, candidates: int | None = None, lang: str | None = None,
                 hnsw_ef: int | None = None, encoder_overrides: dict[str, Any] | None = None) -> None:
        self.lang = lang
        self.hnsw_ef = hnsw_ef
        shard = shard_dir if isinstance(shard_dir, QdrantShard) else QdrantShard(shard_dir)
        super().__init__(shard, encoder, force=force, encoder_overrides=encoder_overrides, query_shift=query_shift,
                         alpha=alpha, candidates=candidates)

    def _setup_query_shift(self, metric: str, alpha: Any, transform: Any, candidates: int | None,
                           force: bool, missing: str | None) -> None:
        from mlirkit.transforms import load_transform

        if metric not in METRICS:
            raise MlirkitError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        if transform is not None or missing is not None:
            raise MlirkitError(f"{self.index.path}: a Qdrant shard is searched with its own shift (no "
                               f"{option('transform')} / {option('missing')})")
        if SHIFT_VECTOR not in self.index.vectors:
            raise MlirkitError(f"{self.index.path}: field 'vectors' has no {SHIFT_VECTOR!r} vector (the index was "
                               f"not SHIFT or had no embeddings.npy): no query-time shift")
        shift = load_transform(self.index.path / SHIFT_FILE)
        self.shift_langs = shift_languages(shift)
        if self.shift_langs != self.index.shard_meta["shift_languages"]:
            raise MlirkitError(f"{self.index.path}: {SHIFT_FILE} does not match field 'shift_languages'")
        self.shift_vectors = np.stack([np.zeros(shift.dim), *(shift.params_[la].astype(np.float64)
                                                              for la in shift.languages)])  # (M, d)
        own_alpha = (self.index.transform or {}).get("alpha", DEFAULT_ALPHA)
        self.shift_alpha = Alpha.coerce(own_alpha if alpha is None else alpha)
        self.lang_alpha = np.array([self.shift_alpha.for_lang(la) for la in self.shift_langs])
        self.shift_metric = metric
        if candidates is not None and candidates < 0:
            raise MlirkitError(f"candidates must be >= 0, got {candidates}")
        self.shift_candidates = candidates or DEFAULT_CANDIDATES
        self.shift = shift
        self.shift_settings = {"metric": metric, "alpha": None if alpha is None else self.shift_alpha.to_json(),
                               "candidates": candidates}

    def provenance(self) -> dict[str, Any]:
        return {"qdrant_shard": str(self.index.path), "source_index": self.index.shard_meta.get("source_index"),
                "encoder": {"name": self.index.meta.get("encoder_name"), "digest": self.encoder.digest},
                "transform": self.index.transform, "query_shift": self.shift_settings, "lang": self.lang,
                "hnsw_ef": self.hnsw_ef}

    # ----------------------------------------------------------------- search
    def _request(self, vector: np.ndarray, using: str, limit: int, with_vector: bool = False):
        import qdrant_edge as qd

        flt = None
        if self.lang is not None:
            flt = qd.Filter(must=[qd.FieldCondition(key="lang", match=qd.MatchValue(self.lang))])
        params = qd.SearchParams(exact=True) if self.hnsw_ef is None else qd.SearchParams(hnsw_ef=self.hnsw_ef)
        return qd.QueryRequest(limit=limit, query=qd.Query.Nearest(vector.astype(np.float32).tolist(), using=using),
                               filter=flt, params=params, with_payload=["docid"],
                               with_vector=[SHIFT_VECTOR] if with_vector else None)

    def _query(self, vector: np.ndarray, using: str, limit: int, with_vector: bool = False) -> list[Any]:
        return self.index.shard.query(self._request(vector, using, limit, with_vector))

    def _source(self, lang: str | None) -> int:
        code = canonical(lang) or UNKNOWN
        return self.shift_langs.index(code) if code in self.shift_langs else 0  # pivot: the index as built

    def shift_query(self, q: np.ndarray, lang: str | None) -> np.ndarray:
        """``[q, alpha_l (q.V_s - q.V_l)]_l`` for a query of ``lang``."""
        qv = self.shift_vectors @ q.astype(np.float64)  # (M,) q.V_l
        return np.concatenate([q, self.lang_alpha * (qv[self._source(lang)] - qv)])

    def search_vectors(self, vectors: np.ndarray, k: int, langs: Sequence[str | None] | None = None) -> list[list[Hit]]:
        n = int(self.index.shard_meta["documents"])
        fetch = min(n, k + TIE_SLACK)
        out = []
        if self.shift is None:
            for q in np.asarray(vectors, dtype=np.float32):
                out.append(_top([(p.payload["docid"], p.score) for p in self._query(q, INDEXED_VECTOR, fetch)], k))
            return out
        if langs is None or len(langs) != len(vectors):
            raise MlirkitError("the query-time shift needs one language per query")
        dim = self.shift_vectors.shape[1]
        for q, lang in zip(np.asarray(vectors, dtype=np.float32), langs):
            qa = self.shift_query(q, lang)
            if self.shift_metric == "ip":
                out.append(_top([(p.payload["docid"], p.score) for p in self._query(qa, SHIFT_VECTOR, fetch)], k))
                continue
            points = self._query(qa, SHIFT_VECTOR, min(n, max(self.shift_candidates, fetch)), with_vector=True)
            out.append(_top(self._rescore_cosine(q, lang, points, dim), k))
        return out

    def _rescore_cosine(self, q: np.ndarray, lang: str | None, points: list[Any], dim: int) -> list[tuple[str, float]]:
        """``q.d'_s / ||d'_s||`` of each candidate, ``d'_s = d - b V_l + b V_s`` (``b = alpha_l``, 0 when never shifted)."""
        if not points:
            return []
        stored = np.array([p.vector[SHIFT_VECTOR] for p in points], dtype=np.float64)
        raw, onehot = stored[:, :dim], stored[:, dim:]
        b = onehot @ self.lang_alpha  # (C,)
        shifted = raw - b[:, None] * (onehot @ self.shift_vectors) + b[:, None] * self.shift_vectors[self._source(lang)]
        norms = np.linalg.norm(shifted, axis=1)
        scores = (shifted @ q.astype(np.float64)) / np.where(norms == 0, 1.0, norms)
        return [(p.payload["docid"], float(np.float32(s))) for p, s in zip(points, scores)]


def _top(hits: Sequence[tuple[str, float]], k: int) -> list[Hit]:
    return [Hit(d, s) for d, s in sorted(hits, key=lambda h: (-h[1], h[0]))[:k]]


def open_searcher(index_dir: str | os.PathLike, **kwargs: Any) -> Searcher:
    """:class:`QdrantSearcher` for a Qdrant shard directory, else :class:`Searcher`."""
    from mlirkit.index.qdrant_export import SHARD_META_FILE

    if (Path(index_dir) / SHARD_META_FILE).is_file():
        return QdrantSearcher(index_dir, **kwargs)
    return Searcher(index_dir, **kwargs)


__all__ = ["QdrantSearcher", "QdrantShard", "open_searcher"]
