"""Batch search of an index directory with deterministic tie-breaking."""
from __future__ import annotations

import logging
import os
from typing import Any, Sequence

import numpy as np

from mlirkit.base.threads import faiss_threads
from mlirkit.base.vectors import transform_and_normalize
from mlirkit.encoders.base import Encoder, check_same_encoder
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.index.layout import TRANSFORM_FILE
from mlirkit.io.records import Query
from mlirkit.search.results import Hit, SearchResults
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.defaults import DEFAULT_ALPHA

logger = logging.getLogger(__name__)

#: extra candidates fetched beyond k so that ties at the cut-off are broken by doc id, not by FAISS order
TIE_SLACK = 16


def encoder_for_index(index, **overrides: Any) -> Encoder:
    """The encoder an mlirkit index was built with, rebuilt from ``meta.json`` (``overrides``: the caller's own
    options, which win; only they can allow a model's own code, :mod:`mlirkit.encoders.model_code`)."""
    from mlirkit.encoders import load_encoder

    from mlirkit.encoders.model_code import options_from_file

    name = index.meta.get("encoder_name")
    if not name:
        raise MlirkitError(f"{index.path} does not record its encoder (not built by mlirkit.encode): give "
                           f"{option('encoder')}")
    # options that run the model's own code (trust_remote_code) count only when given here, never from meta.json
    options = options_from_file(index.meta.get("encoder_options"), index.path / "meta.json", overrides)
    encoder_class = options.pop("encoder_class", None)
    return load_encoder(name, encoder_class, **{**options, **overrides})


def _transform_file(transform: Any) -> str | None:
    """The absolute path of a query-time shift's transform file (None: the index's own, or an object with no file)."""
    path = transform if isinstance(transform, (str, os.PathLike)) else getattr(transform, "path", None)
    return None if path is None else os.path.abspath(path)


class Searcher:
    """Search an index directory with queries encoded by the index's encoder.

    Query vectors are ``normalize(T_q(g(q)))``: the encoder's query embedding, the query side of
    the index's language transform if it has one (centering and LIR; SHIFT has none), then L2
    normalisation. Results are sorted by ``(-score, doc_id)``.

    ``query_shift`` (``"cosine"`` or ``"ip"``; implied by ``alpha`` or ``transform``) scores every query
    with the SHIFT of its own language (``Query.lang``) from this one index, exactly
    (:class:`mlirkit.search.query_shift.QueryTimeShift`; needs ``embeddings.npy``): ``transform`` (a shift
    file or object; default the index's own) and ``alpha`` (default the index's) are chosen at query
    time. A flat index is scored exhaustively; other types give ``candidates`` rows (default
    :data:`mlirkit.search.query_shift.DEFAULT_CANDIDATES`; 0 = exhaustive) that are re-scored exactly.
    ``missing`` (``"corpus"`` or ``"keep"``): the document languages the shift has no vector for
    (:func:`mlirkit.transforms.hybrid.fill_missing`; default filled from the index's documents).
    """

    def __init__(self, index_dir: str | os.PathLike, encoder: Encoder | None = None, *,
                 force: bool = False, threads: int | None = None,
                 encoder_overrides: dict[str, Any] | None = None, query_shift: str | None = None,
                 alpha: Any = None, transform: Any = None, candidates: int | None = None,
                 missing: str | None = None) -> None:
        from mlirkit.index import DenseIndex

        # a directory, or an open index (DenseIndex, mlirkit.search.sharded.ShardedIndex)
        self.index = DenseIndex(index_dir) if isinstance(index_dir, (str, os.PathLike)) else index_dir
        self.encoder = encoder if encoder is not None else encoder_for_index(self.index, **(encoder_overrides or {}))
        # FAISS threads while searching (scoped; the process-wide count is the CLI's --threads)
        self.threads = threads if threads is not None else self.index.threads
        if self.encoder.dim != self.index.dim:
            raise MlirkitError(f"encoder dimension {self.encoder.dim} != index dimension {self.index.dim} ({self.index.path})")
        if self.index.encoder is not None:
            try:
                check_same_encoder(self.index.encoder, self.encoder.fingerprint, f"index {self.index.path}")
            except MlirkitError as e:
                if not force:
                    raise MlirkitError(f"{e} (use {option('force', True)} to search anyway)") from None
                logger.warning("%s; searching anyway (%s)", e, option("force", True))
        self.query_transform = None
        self.alpha = Alpha()
        meta_transform = self.index.transform
        if meta_transform:
            from mlirkit.transforms import load_transform

            transform_file = load_transform(self.index.path / TRANSFORM_FILE)
            if transform_file.touches("query"):
                self.query_transform = transform_file
                self.alpha = Alpha.coerce(meta_transform.get("alpha", DEFAULT_ALPHA))
        self.shift = None  # the query-time shift (mlirkit.search.query_shift), when asked for
        self.shift_settings: dict[str, Any] | None = None  # what it was asked for, as a run's sidecar records it
        if missing is not None and not (query_shift or alpha is not None or transform is not None):
            raise MlirkitError(f"{option('missing')} is for the query-time shift: add {option('query_shift')} (or "
                               f"{option('alpha')} / {option('transform')})")
        if query_shift or alpha is not None or transform is not None:
            self._setup_query_shift(query_shift or "cosine", alpha, transform, candidates, force, missing)

    def _setup_query_shift(self, metric: str, alpha: Any, transform: Any, candidates: int | None,
                           force: bool, missing: str | None) -> None:
        """Every query scored with its own language's SHIFT from this one index (see query_shift.py)."""
        from mlirkit.search.query_shift import plan_for_index

        self.shift_plan = plan_for_index(self.index, metric, alpha, transform, candidates, force=force,
                                         missing=missing)
        self.shift, self.shift_alpha, self.shift_candidates = self.shift_plan
        self.shift_settings = {"metric": metric, "alpha": None if alpha is None else Alpha.coerce(alpha).to_json(),
                               "transform": _transform_file(transform), "own_transform": transform is None,
                               "candidates": candidates, "missing": missing}

    def provenance(self) -> dict[str, Any]:
        """What a run of this searcher records beside it (:mod:`mlirkit.io.provenance`): the index (every
        shard's path and ``meta.json`` sha256), the encoder (name, fingerprint digest and fingerprint), the
        index's transform (method, file sha256, alpha) and the query-time shift when there is one."""
        from mlirkit.index.reader import index_provenance

        transform = self.index.transform
        out: dict[str, Any] = {
            "index": index_provenance(self.index),
            "encoder": {"name": getattr(self.encoder, "name", None) or self.index.meta.get("encoder_name"),
                        "digest": self.encoder.digest, "fingerprint": self.encoder.fingerprint},
            "transform": None if not transform else {k: transform.get(k) for k in ("method", "sha256", "alpha", "file")},
        }
        if self.shift is not None:
            out["query_shift"] = {**self.shift.describe(self.shift_alpha), "candidates": self.shift_candidates,
                                  "transform_sha256": getattr(self.shift.transform, "sha256", None),
                                  "settings": self.shift_settings}
        return out

    def encode_queries(self, queries: Sequence[Query], batch_size: int | None = None) -> np.ndarray:
        langs = [q.lang for q in queries]
        vectors = self.encoder.encode_queries([q.text for q in queries], langs, batch_size=batch_size)
        return transform_and_normalize(vectors, langs, "query", self.query_transform, self.alpha)

    def search_vectors(self, vectors: np.ndarray, k: int, langs: Sequence[str | None] | None = None) -> list[list[Hit]]:
        """Hits of query vectors; with the query-time shift, ``langs`` (one per query) choose each one's shift."""
        if self.shift is None:
            with faiss_threads(self.threads):
                return search_index(self.index.faiss_index, self.index.docids, vectors, k)
        if langs is None:
            raise MlirkitError("the query-time shift needs one language per query")
        from mlirkit.search.query_shift import plan_search

        with faiss_threads(self.threads):
            hits = plan_search(self.shift_plan, self.index.faiss_index, vectors, langs, k)
        return [[Hit(d, s) for d, s in h] for h in hits]

    def search(self, queries: Sequence[Query] | str | os.PathLike, k: int = 1000, batch_size: int = 64,
               show_progress: bool = False) -> SearchResults:
        """``{query_id: [Hit, ...]}`` with at most ``k`` hits per query, best first: a
        :class:`~mlirkit.search.results.SearchResults`, which :func:`mlirkit.eval.evaluate` takes as it is
        and ``to_ranx()`` turns into a ``ranx.Run``. ``queries``: :class:`~mlirkit.io.records.Query`
        objects or a topics source for :func:`mlirkit.io.topics.read_topics` (a file or an ir_datasets id)."""
        from tqdm.auto import tqdm

        if isinstance(queries, (str, os.PathLike)):
            from mlirkit.io.topics import read_topics

            queries = read_topics(queries)
        out = SearchResults()
        with tqdm(total=len(queries), unit="query", desc="search", disable=not show_progress) as bar:
            for start in range(0, len(queries), batch_size):
                batch = queries[start:start + batch_size]
                vectors = self.encode_queries(batch, batch_size)
                for query, hits in zip(batch, self.search_vectors(vectors, k, [q.lang for q in batch])):
                    out[query.query_id] = hits
                bar.update(len(batch))
        return out


def search_index(faiss_index, docids: Sequence[str], vectors: np.ndarray, k: int) -> list[list[Hit]]:
    """Top ``k`` hits of each query vector in a FAISS index, sorted by ``(-score, doc_id)``.

    ``TIE_SLACK`` extra candidates are fetched so that ties at the cut-off are broken by doc id.
    """
    fetch = min(faiss_index.ntotal, k + TIE_SLACK)
    scores, rows = faiss_index.search(np.ascontiguousarray(vectors, dtype=np.float32), fetch)
    results = []
    for row_scores, row_ids in zip(scores, rows):
        hits = [Hit(docids[i], float(s)) for s, i in zip(row_scores, row_ids) if i >= 0]
        hits.sort(key=lambda h: (-h.score, h.doc_id))
        results.append(hits[:k])
    return results
