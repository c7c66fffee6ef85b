"""Search a Qdrant Edge shard of an mlirkit index (:mod:`mlirkit.index.qdrant_export`) as :class:`Searcher`
searches the index: plain or index-time shifted (the ``indexed`` vectors), the query-time shift for every
query language, and a search restricted to the documents of one language (a payload filter on ``lang``).

- ``query_shift="ip"``: the query ``[q, alpha_l (q.V_s - q.V_l) / c]_l`` against the ``shift`` vectors
  ``[d, c e_l]`` gives ``q.d'_s`` inside the engine (the module docstring of :mod:`mlirkit.index.qdrant_export`).
- ``query_shift="cosine"``: ``q.d'_s / ||d'_s||`` (:mod:`mlirkit.search.query_shift`); the denominator depends on
  the document and the query's language, so candidates ranked by the inner product come back with their
  vectors and are re-scored exactly here. By default the depth doubles from 100 (every document instead of a
  depth above half of them) until the top k is certain:
  a document not fetched has ``q.d'_s <= t`` (the last candidate's inner product), so its cosine is at most
  ``t / n_min`` (``t > 0``; else ``t / n_max``), ``n_min``/``n_max`` the smallest/largest ``||d'_s||`` over the
  shard (one pass over its vectors per alpha); when the k-th re-scored cosine exceeds that bound, the top k is the
  exhaustive one, over the engine's inner-product ranking (exact, or the HNSW graph's). ``candidates``: a fixed
  depth instead (a top-k document outside it is missed).

Search is exact (``SearchParams(exact=True)``, as a flat FAISS index) unless ``hnsw_ef`` is given (the shard's
HNSW graph, approximate). Ties are broken by ``(-score, doc_id)``.
"""
from __future__ import annotations

import json
import logging
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import lookup
from mlirkit.base.vectors import check_finite
from mlirkit.index.qdrant_export import (INDEXED_VECTOR, LANG_MEANS_FILE, SHARD_DIR, SHARD_META_FILE, SHIFT_VECTOR,
                                         read_shard_meta)
from mlirkit.search.query_shift import METRICS, shift_for_index
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
        """The open Qdrant Edge shard (one process at a time: the engine locks its write-ahead log), its point
        count checked against ``documents`` (a damaged, emptied or foreign shard is one line, not a traceback or a
        run of empty rankings)."""
        import qdrant_edge as qd

        where = self.path / SHARD_DIR
        try:
            shard = qd.EdgeShard.load(str(where))
        except Exception as e:  # noqa: BLE001 (qdrant-edge raises a bare Exception for every failure)
            raise _shard_error(where, e, "open") from None
        try:
            points = shard.info().points_count
        except Exception as e:  # noqa: BLE001
            raise _shard_error(where, e) from None
        if points != self.shard_meta["documents"]:
            shard.close()
            raise MlirkitError(f"{where}: holds {points} points where {SHARD_META_FILE} says "
                               f"{self.shard_meta['documents']} documents (a damaged or foreign shard)")
        return shard

    def records(self, with_vector: bool | list[str] = True) -> list[Any]:
        """Every point (payload and the vectors ``with_vector`` names, all for True), in id order."""
        return sorted(self.scroll(with_vector), key=lambda r: int(r.id))

    def scroll(self, with_vector: bool | list[str] = True, batch: int = 1024):
        """The points, ``batch`` at a time, in the engine's order (payload and ``with_vector``'s vectors)."""
        import qdrant_edge as qd

        offset = None
        while True:
            points, offset = self.shard.scroll(qd.ScrollRequest(offset=offset, limit=batch, with_payload=True,
                                                                with_vector=with_vector))
            yield from points
            if offset is None:
                return

    @cached_property
    def _payload(self) -> tuple[list[str], list[str]]:
        records = self.records(with_vector=False)
        return [r.payload["docid"] for r in records], [r.payload["lang"] for r in records]

    @property
    def docids(self) -> list[str]:
        """The documents' ids, row by row (as :attr:`mlirkit.index.DenseIndex.docids`)."""
        return self._payload[0]

    @property
    def langs(self) -> list[str]:
        """The documents' languages, row by row (as :attr:`mlirkit.index.DenseIndex.langs`)."""
        return self._payload[1]


class ShardShift:
    """The query-time shift of a shard as :class:`Searcher` reads it (``transform``, ``pivot``, ``langs`` with a
    vector, the pivot first, :meth:`has_vector`) and, per document language of the shard, its ``V_l``."""

    def __init__(self, transform: Any, doc_langs: Sequence[str], code_scale: float = 1.0) -> None:
        self.transform = transform
        self.code_scale = code_scale  # of the language codes in the ``shift`` vectors
        self.pivot = transform.source_lang
        self.langs = [self.pivot, *transform.languages]
        self.vectors = np.stack([np.zeros(transform.dim), *(transform.params_[la].astype(np.float64)
                                                             for la in transform.languages)])  # (M, d)
        # per document language j: the row of its vector in ``langs`` (-1: never shifted)
        self.doc_rows = np.array([self.langs.index(c) if (c := lookup(la, self.langs)) is not None else -1
                                  for la in doc_langs])
        self.doc_vectors = np.stack([self.vectors[r] if r >= 0 else np.zeros(transform.dim) for r in self.doc_rows])

    def has_vector(self, lang: str | None) -> bool:
        return lookup(lang, self.langs) is not None

    def source(self, lang: str | None) -> int:
        """Row of ``langs`` a query of ``lang`` is re-based on (the pivot when it has no vector)."""
        used = lookup(lang, self.langs)
        return 0 if used is None else self.langs.index(used)

    def doc_alpha(self, alpha: Alpha) -> np.ndarray:
        """``alpha_l m_l`` of each document language (0: never shifted)."""
        return np.array([alpha.for_lang(self.langs[r]) if r >= 0 else 0.0 for r in self.doc_rows])


class QdrantSearcher(Searcher):
    """:class:`Searcher` over a Qdrant shard directory. ``lang``: search only documents of that language;
    ``hnsw_ef``: approximate (HNSW) instead of exact; ``query_shift``, ``alpha``, ``candidates``, ``transform``,
    ``missing``, ``language_identifier``, ``langid_threshold`` as in :class:`Searcher`."""

    #: the first depth of the cosine re-scoring, and its growth until the top k is certain
    FIRST_DEPTH, GROWTH = 100, 2

    def __init__(self, shard_dir: str | os.PathLike, encoder=None, *, force: bool = False, query_shift: str | None = None,
                 alpha: Any = None, candidates: int | None = None, lang: str | None = None,
                 hnsw_ef: int | None = None, encoder_overrides: dict[str, Any] | None = None, transform: Any = None,
                 missing: str | None = None, language_identifier: str | None = None,
                 langid_threshold: float | None = None) -> None:
        self.lang = lang
        self.hnsw_ef = hnsw_ef
        shard = shard_dir if isinstance(shard_dir, QdrantShard) else QdrantShard(shard_dir)
        super().__init__(shard, encoder, force=force, encoder_overrides=encoder_overrides, query_shift=query_shift,
                         alpha=alpha, candidates=candidates, transform=transform, missing=missing,
                         language_identifier=language_identifier, langid_threshold=langid_threshold)
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
        if candidates is not None and candidates < 0:
            raise MlirkitError(f"candidates must be >= 0, got {candidates}")
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
        self.shift_alpha = Alpha.coerce(DEFAULT_ALPHA if alpha is None else alpha)
        self.shift = ShardShift(transform, doc_langs, float(shard.shard_meta.get("code_scale", 1.0)))
        self.shift_metric = metric
        self.shift_candidates = candidates or None  # None: the certified depth (cosine), every document at most
        self.shift_settings = settings
        self._norm_ranges: dict[str, np.ndarray] = {}

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

    def shift_query(self, q: np.ndarray, lang: str | None, doc_alpha: np.ndarray | None = None) -> np.ndarray:
        """``[q, alpha_l m_l (q.V_s - q.V_l) / c]_l`` (the shard's document languages) for a query of ``lang``."""
        shift = self.shift
        doc_alpha = shift.doc_alpha(self.shift_alpha) if doc_alpha is None else doc_alpha
        qs = shift.vectors[shift.source(lang)] @ q.astype(np.float64)  # q.V_s
        return np.concatenate([q, doc_alpha * (qs - shift.doc_vectors @ q.astype(np.float64)) / shift.code_scale])

    def search_vectors(self, vectors: np.ndarray, k: int, langs: Sequence[str | None] | None = None, *,
                       alpha: Any = None) -> list[list[Hit]]:
        """Hits of query vectors; with the query-time shift, ``langs`` (one per query) choose each one's shift
        and ``alpha`` replaces the searcher's for this call."""
        n = int(self.index.shard_meta["documents"])
        fetch = min(n, k + TIE_SLACK)
        out = []
        if self.shift is None:
            if alpha is not None:
                raise MlirkitError("alpha is for the query-time shift: this searcher has none")
            for q in np.asarray(vectors, dtype=np.float32):
                out.append(_top([(p.payload["docid"], p.score) for p in self._query(q, INDEXED_VECTOR, fetch)], k))
            return out
        if langs is None or len(langs) != len(vectors):
            raise MlirkitError("the query-time shift needs one language per query")
        use_alpha = self.shift_alpha if alpha is None else self.shift.transform.check_alpha(alpha)
        doc_alpha = self.shift.doc_alpha(use_alpha)
        for q, lang in zip(np.asarray(vectors, dtype=np.float32), langs):
            qa = self.shift_query(q, lang, doc_alpha)
            if self.shift_metric == "ip":
                out.append(_top([(p.payload["docid"], p.score) for p in self._query(qa, SHIFT_VECTOR, fetch)], k))
            else:
                out.append(_top(self._cosine(q, qa, lang, doc_alpha, use_alpha, k, fetch, n), k))
        return out

    def _cosine(self, q: np.ndarray, qa: np.ndarray, lang: str | None, doc_alpha: np.ndarray, alpha: Alpha,
                k: int, fetch: int, n: int) -> list[tuple[str, float]]:
        """The re-scored candidates of one query: a fixed depth (``candidates``), else deeper until certain."""
        if self.shift_candidates is not None:
            points = self._query(qa, SHIFT_VECTOR, min(n, max(self.shift_candidates, fetch)), with_vector=True)
            return self._rescore_cosine(q, lang, points, doc_alpha)
        low, high = self._norm_range(alpha, doc_alpha)[:, self.shift.source(lang)]
        depth = max(self.FIRST_DEPTH, fetch)
        depth = n if depth * self.GROWTH > n else depth  # one fetch of everything rather than two
        while True:
            points = self._query(qa, SHIFT_VECTOR, depth, with_vector=True)
            scored = self._rescore_cosine(q, lang, points, doc_alpha)
            if len(points) < depth or depth >= n or len(scored) < k:
                return scored  # every (matching) document re-scored
            last = float(points[-1].score)  # no document left out has a larger inner product
            bound = last / low if last > 0 else last / high
            kth = sorted((s for _, s in scored), reverse=True)[k - 1]
            if kth > bound + CERTAIN_MARGIN:
                return scored
            depth = n if depth * self.GROWTH ** 2 > n else depth * self.GROWTH

    def _norm_range(self, alpha: Alpha, doc_alpha: np.ndarray) -> np.ndarray:
        """(2, M): the smallest and largest ``||d'_s||`` over the shard's documents, for each source ``s``
        (one pass over the ``shift`` vectors per alpha)."""
        key = json.dumps(alpha.to_json(), sort_keys=True)
        if key not in self._norm_ranges:
            shift, dim = self.shift, self.shift.vectors.shape[1]
            low, high = np.full(len(shift.langs), np.inf), np.zeros(len(shift.langs))
            batch = []
            for p in self.index.scroll([SHIFT_VECTOR], batch=4096):
                batch.append(p.vector[SHIFT_VECTOR])
                if len(batch) == 4096:
                    low, high = _extend_range(low, high, np.asarray(batch, dtype=np.float64), dim, doc_alpha, shift)
                    batch = []
            if batch:
                low, high = _extend_range(low, high, np.asarray(batch, dtype=np.float64), dim, doc_alpha, shift)
            self._norm_ranges[key] = np.stack([low, high])
        return self._norm_ranges[key]

    def _rescore_cosine(self, q: np.ndarray, lang: str | None, points: list[Any],
                        doc_alpha: np.ndarray) -> list[tuple[str, float]]:
        """``q.d'_s / ||d'_s||`` of each candidate, ``d'_s = d - b V_l + b V_s`` (``b = alpha_l``, 0 when never shifted)."""
        if not points:
            return []
        stored = np.array([p.vector[SHIFT_VECTOR] for p in points], dtype=np.float64)
        shifted = _shifted(stored, self.shift.vectors.shape[1], doc_alpha, self.shift, self.shift.source(lang))
        norms = np.linalg.norm(shifted, axis=1)
        scores = (shifted @ q.astype(np.float64)) / np.where(norms == 0, 1.0, norms)
        return [(p.payload["docid"], float(np.float32(s))) for p, s in zip(points, scores)]


#: how far the k-th cosine must clear the bound of the documents not fetched (float32 scores)
CERTAIN_MARGIN = 1e-5


def _shifted(stored: np.ndarray, dim: int, doc_alpha: np.ndarray, shift: ShardShift, source: int) -> np.ndarray:
    """``d'_s`` of stored ``[d, c e_l]`` rows for the source row ``source``."""
    raw, onehot = stored[:, :dim], stored[:, dim:] / shift.code_scale
    b = onehot @ doc_alpha  # (C,)
    return raw - b[:, None] * (onehot @ shift.doc_vectors) + b[:, None] * shift.vectors[source]


def _extend_range(low: np.ndarray, high: np.ndarray, stored: np.ndarray, dim: int, doc_alpha: np.ndarray,
                  shift: ShardShift) -> tuple[np.ndarray, np.ndarray]:
    """``low``/``high`` widened by the norms of ``d'_s`` of ``stored`` rows, for every source ``s``
    (zero vectors count as norm 1, as the re-scoring divides by 1 for them)."""
    for s in range(len(shift.langs)):
        norms = np.linalg.norm(_shifted(stored, dim, doc_alpha, shift, s), axis=1)
        norms = np.where(norms == 0, 1.0, norms)
        low[s], high[s] = min(low[s], norms.min()), max(high[s], norms.max())
    return low, high


def _top(hits: Sequence[tuple[str, float]], k: int) -> list[Hit]:
    return [Hit(d, s) for d, s in sorted(hits, key=lambda h: (-h[1], h[0]))[:k]]


def is_qdrant_shard(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a shard directory written by :func:`mlirkit.index.qdrant_export.export_qdrant` (its
    ``mlirkit_qdrant.json`` there, even when not a regular file: reading it then says what is wrong)."""
    return os.path.lexists(Path(path) / SHARD_META_FILE)


def _shard_error(where: Path, e: Exception, action: str = "read") -> MlirkitError:
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    hint = " (another process or QdrantShard holds it open)" if "WouldBlock" in first else ""
    return MlirkitError(f"{where}: cannot {action} the Qdrant shard ({first[:200]}){hint}")


__all__ = ["QdrantSearcher", "QdrantShard", "ShardShift", "is_qdrant_shard"]
