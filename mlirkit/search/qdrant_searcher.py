"""Search a Qdrant Edge shard of an mlirkit index (:mod:`mlirkit.index.qdrant_export`) as :class:`Searcher`
searches the index: plain or index-time shifted (the ``indexed`` vectors), the query-time shift for every
query language, and a search restricted to the documents of one language (a payload filter on ``lang``).

- ``query_shift="ip"``: the query ``[q, alpha_l (q.V_s - q.V_l)]_l`` against the ``shift`` vectors
  ``[d, e_l]`` gives ``q.d'_s`` inside the engine (the module docstring of :mod:`mlirkit.index.qdrant_export`).
- ``query_shift="cosine"``: ``q.d'_s / ||d'_s||`` (:mod:`mlirkit.search.query_shift`); the denominator depends on
  the document and the query's language, so ``candidates`` rows ranked by the inner product are fetched with
  their vectors and re-scored exactly here (as the FAISS path: every document for an exact search, else
  :data:`~mlirkit.search.query_shift.DEFAULT_CANDIDATES`; 0 = every document; a top-k document outside the
  candidates is missed).

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
from mlirkit.base.vectors import check_finite
from mlirkit.index.qdrant_export import (INDEXED_VECTOR, LANG_MEANS_FILE, SHARD_DIR, SHARD_META_FILE, SHIFT_VECTOR,
                                         read_shard_meta)
from mlirkit.search.query_shift import DEFAULT_CANDIDATES, METRICS, shift_for_index
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
        """The open Qdrant Edge shard, its point count checked against ``documents`` (a damaged, emptied or
        foreign shard is one line, not a traceback or a run of empty rankings)."""
        import qdrant_edge as qd

        where = self.path / SHARD_DIR
        try:
            shard = qd.EdgeShard.load(str(where))
            points = shard.info().points_count
        except Exception as e:  # noqa: BLE001 (qdrant-edge raises a bare Exception for every failure)
            raise _shard_error(where, e) from None
        if points != self.shard_meta["documents"]:
            shard.close()
            raise MlirkitError(f"{where}: holds {points} points where {SHARD_META_FILE} says "
                               f"{self.shard_meta['documents']} documents (a damaged or foreign shard)")
        return shard

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
    ``hnsw_ef``: approximate (HNSW) instead of exact; ``query_shift``, ``alpha``, ``candidates``, ``transform``,
    ``missing`` as in :class:`Searcher`."""

    def __init__(self, shard_dir: str | os.PathLike, encoder=None, *, force: bool = False, query_shift: str | None = None,
                 alpha: Any = None, candidates: int | None = None, lang: str | None = None,
                 hnsw_ef: int | None = None, encoder_overrides: dict[str, Any] | None = None, transform: Any = None,
                 missing: str | None = None) -> None:
        self.lang = lang
        self.hnsw_ef = hnsw_ef
        shard = shard_dir if isinstance(shard_dir, QdrantShard) else QdrantShard(shard_dir)
        super().__init__(shard, encoder, force=force, encoder_overrides=encoder_overrides, query_shift=query_shift,
                         alpha=alpha, candidates=candidates, transform=transform, missing=missing)
        _ = shard.shard  # opened and its points counted now: a damaged shard fails here, before any query

    def _setup_query_shift(self, metric: str, alpha: Any, transform: Any, candidates: int | None,
                           force: bool, missing: str | None) -> None:
        """The shift's vector ``V_l`` and ``alpha_l m_l`` of each of the shard's document languages (a given
        ``transform``, else the index's own; languages it lacks filled from the stored language means as
        ``missing``, default the index's policy, says: :func:`mlirkit.transforms.hybrid.fill_missing`)."""
        from mlirkit.transforms.hybrid import fill_missing
        from mlirkit.transforms.shift_transform import ShiftTransform

        shard = self.index
        if metric not in METRICS:
            raise MlirkitError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        if SHIFT_VECTOR not in shard.vectors:
            raise MlirkitError(f"{shard.path}: field 'vectors' has no {SHIFT_VECTOR!r} vector (the index had no "
                               f"embeddings.npy): no query-time shift")
        meta_transform = shard.transform or {}
        settings = {"metric": metric, "alpha": None if alpha is None else Alpha.coerce(alpha).to_json(),
                    "transform": None if transform is None else str(getattr(transform, "path", transform)),
                    "candidates": candidates, "missing": missing}
        transform, alpha = shift_for_index(shard, transform, alpha, force=force)
        if not isinstance(transform, ShiftTransform):
            raise MlirkitError(f"the query-time shift needs a shift transform, not {transform.method!r}")
        doc_langs = shard.shard_meta["doc_languages"]
        means_file = shard.path / LANG_MEANS_FILE
        try:
            means = np.load(means_file, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:  # missing, truncated, a pickled object array
            raise MlirkitError(f"{means_file}: {getattr(e, 'strerror', None) or ' '.join(str(e).split())}") from None
        if not isinstance(means, np.ndarray) or means.shape != (len(doc_langs), shard.dim) or means.dtype.kind != "f":
            raise MlirkitError(f"{means_file}: shape {getattr(means, 'shape', None)} "
                               f"{getattr(means, 'dtype', '')}, expected ({len(doc_langs)}, {shard.dim}) floats")
        check_finite("the language means", means, means_file)
        policy = missing if missing is not None else (meta_transform.get("missing_languages") or {}).get("policy")
        transform = fill_missing(transform, shard.shard_meta["lang_counts"], dict(zip(doc_langs, means)),
                                 policy=policy, origin=str(shard.path), explicit=missing is not None)
        self.shift_langs = [transform.source_lang, *transform.languages]
        self.shift_vectors = np.stack([np.zeros(transform.dim), *(transform.params_[la].astype(np.float64)
                                                                  for la in transform.languages)])  # (M, d)
        self.shift_alpha = Alpha.coerce(DEFAULT_ALPHA if alpha is None else alpha)
        # per document language j: V_{l_j} (0 when never shifted) and alpha_l m_l
        rows = [self.shift_langs.index(c) if (c := canonical(la) or UNKNOWN) in self.shift_langs else -1
                for la in doc_langs]
        self.doc_vectors = np.stack([self.shift_vectors[r] if r >= 0 else np.zeros(shard.dim) for r in rows])
        self.doc_alpha = np.array([self.shift_alpha.for_lang(self.shift_langs[r]) if r >= 0 else 0.0 for r in rows])
        self.shift_metric = metric
        if candidates is not None and candidates < 0:
            raise MlirkitError(f"candidates must be >= 0, got {candidates}")
        if candidates is None:  # as plan_for_index: exhaustive for an exact search, else DEFAULT_CANDIDATES
            candidates = 0 if self.hnsw_ef is None else DEFAULT_CANDIDATES
        self.shift_candidates = candidates or None  # None: every document
        self.shift = transform
        self.shift_settings = settings

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
        shard = self.index.shard
        try:
            return shard.query(self._request(vector, using, limit, with_vector))
        except Exception as e:  # noqa: BLE001 (qdrant-edge raises a bare Exception for every failure)
            raise _shard_error(self.index.path / SHARD_DIR, e) from None

    def _source(self, lang: str | None) -> int:
        code = canonical(lang) or UNKNOWN
        return self.shift_langs.index(code) if code in self.shift_langs else 0  # pivot: the index as built

    def shift_query(self, q: np.ndarray, lang: str | None) -> np.ndarray:
        """``[q, alpha_l m_l (q.V_s - q.V_l)]_l`` (the shard's document languages) for a query of ``lang``."""
        qs = self.shift_vectors[self._source(lang)] @ q.astype(np.float64)  # q.V_s
        return np.concatenate([q, self.doc_alpha * (qs - self.doc_vectors @ q.astype(np.float64))])

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
            depth = n if self.shift_candidates is None else min(n, max(self.shift_candidates, fetch))
            points = self._query(qa, SHIFT_VECTOR, depth, with_vector=True)
            out.append(_top(self._rescore_cosine(q, lang, points, dim), k))
        return out

    def _rescore_cosine(self, q: np.ndarray, lang: str | None, points: list[Any], dim: int) -> list[tuple[str, float]]:
        """``q.d'_s / ||d'_s||`` of each candidate, ``d'_s = d - b V_l + b V_s`` (``b = alpha_l``, 0 when never shifted)."""
        if not points:
            return []
        stored = np.array([p.vector[SHIFT_VECTOR] for p in points], dtype=np.float64)
        raw, onehot = stored[:, :dim], stored[:, dim:]
        b = onehot @ self.doc_alpha  # (C,)
        shifted = raw - b[:, None] * (onehot @ self.doc_vectors) + b[:, None] * self.shift_vectors[self._source(lang)]
        norms = np.linalg.norm(shifted, axis=1)
        scores = (shifted @ q.astype(np.float64)) / np.where(norms == 0, 1.0, norms)
        return [(p.payload["docid"], float(np.float32(s))) for p, s in zip(points, scores)]


def _top(hits: Sequence[tuple[str, float]], k: int) -> list[Hit]:
    return [Hit(d, s) for d, s in sorted(hits, key=lambda h: (-h[1], h[0]))[:k]]


def is_qdrant_shard(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a shard directory written by :func:`mlirkit.index.qdrant_export.export_qdrant` (its
    ``mlirkit_qdrant.json`` there, even when not a regular file: reading it then says what is wrong)."""
    return os.path.lexists(Path(path) / SHARD_META_FILE)


def _shard_error(where: Path, e: Exception) -> MlirkitError:
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return MlirkitError(f"{where}: cannot read the Qdrant shard ({first[:200]})")


__all__ = ["QdrantSearcher", "QdrantShard", "is_qdrant_shard"]
