"""Streaming writer of an index directory (FAISS inner-product index + sidecars)."""
from __future__ import annotations

import errno
import json
import os
import shutil
from collections import Counter
from contextlib import ExitStack
import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit import __version__
from mlirkit.base.errors import MlirkitError
from mlirkit.base.fs import claim_output
from mlirkit.base.langs import check_lang
from mlirkit.index.layout import (DOCID_FILE, EMBEDDINGS_FILE, FAISS_FILE, FORMAT, FORMAT_VERSION, LANGS_FILE,
                                  META_FILE)

logger = logging.getLogger(__name__)


class IndexWriter:
    """Write an index directory in one pass; use as a context manager.

    ``add(ids, langs, vectors, raw=None)`` appends a batch: ``vectors`` go into the FAISS index
    exactly as given (callers transform and normalise first), ``raw`` (the
    untransformed encoder output) goes to ``embeddings.npy`` when ``save_embeddings``. Everything
    is written under a temporary sibling directory and renamed onto ``path`` only when the block
    exits without an exception; duplicate doc ids raise :class:`MlirkitError`.

    ``index_type`` (an :class:`~mlirkit.index.types.IndexSpec`, a type name or a ``meta.json`` entry;
    default ``flat``) selects the FAISS index; types that need training (``ivf-pq``) spool the vectors
    to a temporary file and train on a sample of them when the block exits. :meth:`defer` spools any
    type from then on (the rows added so far are read back from the index), so that :meth:`amend` can
    replace rows before the index is built (vectors that depend on the whole corpus).
    """

    def __init__(self, path: str | os.PathLike, *, dim: int, encoder: dict[str, Any], normalized: bool,
                 transform: dict[str, Any] | None = None, save_embeddings: bool = False,
                 overwrite: bool = False, extra_meta: dict[str, Any] | None = None,
                 index_type: Any = None) -> None:
        from mlirkit.index.types import IndexSpec

        self.path = Path(path)
        self.index_spec = IndexSpec.coerce(index_type)
        self.dim = dim
        self.encoder = encoder
        self.normalized = normalized
        self.transform = transform
        self.save_embeddings = save_embeddings
        self.overwrite = overwrite
        self.extra_meta = extra_meta or {}
        self.count = 0
        self.lang_counts: Counter[str] = Counter()
        self._seen: set[str] = set()
        self._codes: dict[object, str] = {}

    def __enter__(self) -> "IndexWriter":
        self._claim = ExitStack()
        self.tmp = self._claim.enter_context(claim_output(self.path, self.overwrite, "index", directory=True))
        self._stack = ExitStack()
        try:  # an interrupt during set-up (e.g. SIGTERM while faiss is imported) leaves no temporary behind
            self._docid = self._stack.enter_context(open(self.tmp / DOCID_FILE, "w", encoding="utf-8"))
            self._langs = self._stack.enter_context(open(self.tmp / LANGS_FILE, "w", encoding="utf-8"))
            self._raw = self._stack.enter_context(open(self.tmp / "embeddings.f32", "wb")) if self.save_embeddings else None
            self._spool = None
            if self.index_spec.type.trained:
                self._spool = self._stack.enter_context(open(self.tmp / "vectors.f32", "wb"))
                self.index = None
            else:
                self.index = self.index_spec.new_index(self.dim)
        except BaseException as e:
            self._abandon(e)
            raise
        return self

    def _abandon(self, e: BaseException) -> None:
        """Close the open files and give the claim back (temporary and lock removed); an OSError about the
        output is raised as one line."""
        try:
            self._stack.close()
        finally:
            self._claim.__exit__(type(e), e, e.__traceback__)

    def add(self, ids: Sequence[str], langs: Sequence[str], vectors: np.ndarray,
            raw: np.ndarray | None = None) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape != (len(ids), self.dim) or len(langs) != len(ids):
            raise ValueError(f"batch shape {vectors.shape} does not match {len(ids)} ids x dim {self.dim}")
        for doc_id in ids:
            if doc_id in self._seen:
                raise MlirkitError(f"duplicate document id {doc_id!r}")
            self._seen.add(doc_id)
        langs = [self._codes.get(la) or self._code(la, doc_id) for la, doc_id in zip(langs, ids)]
        if self._spool is not None:
            self._spool.write(vectors.tobytes())
        else:
            self.index.add(vectors)
        self._docid.writelines(f"{i}\n" for i in ids)
        self._langs.writelines(f"{lang}\n" for lang in langs)
        self.lang_counts.update(langs)
        if self._raw is not None:
            self._raw.write(np.ascontiguousarray(vectors if raw is None else raw, dtype=np.float32).tobytes())
        self.count += len(ids)

    def _code(self, lang: object, doc_id: str) -> str:
        """``lang`` in its canonical case (:func:`~mlirkit.base.langs.check_lang`), remembered per value."""
        self._codes[lang] = code = check_lang(lang, f"document {doc_id!r}")
        return code

    def defer(self) -> None:
        """Spool the vectors from now on (and those added so far) and build the index when the block exits."""
        if self._spool is not None:
            return
        self._spool = self._stack.enter_context(open(self.tmp / "vectors.f32", "wb"))
        if self.index is not None and self.index.ntotal:
            for start in range(0, self.index.ntotal, 1 << 16):
                stop = min(self.index.ntotal, start + (1 << 16))
                self._spool.write(np.ascontiguousarray(self.index.reconstruct_n(start, stop - start),
                                                       dtype=np.float32).tobytes())
        self.index = None

    def amend(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """Replace the indexed vectors of ``rows`` (positions in the order added) after :meth:`defer`."""
        if self._spool is None:
            raise ValueError("amend() needs defer() first")
        rows = np.asarray(rows, dtype=np.intp)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(rows), self.dim) or (len(rows) and (rows.min() < 0 or rows.max() >= self.count)):
            raise ValueError(f"amend: {vectors.shape} vectors for {len(rows)} rows of {self.count}")
        self._spool.flush()
        spooled = np.memmap(self.tmp / "vectors.f32", dtype=np.float32, mode="r+", shape=(self.count, self.dim))
        spooled[rows] = vectors
        spooled.flush()
        del spooled

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self._abandon(exc)
            return
        try:
            import faiss

            self._stack.close()
            if self.count == 0:
                raise MlirkitError("no documents to index")
            type_meta = self._finish_index()
            try:
                faiss.write_index(self.index, str(self.tmp / FAISS_FILE))
            except RuntimeError as e:  # FAISS reports a failed fwrite (full disk) as RuntimeError
                reason = (str(e).strip().splitlines() or ["write failed"])[-1]
                raise OSError(errno.EIO, f"FAISS could not write {FAISS_FILE} ({reason})") from None
            if self._raw is not None:
                _raw_to_npy(self.tmp / "embeddings.f32", self.tmp / EMBEDDINGS_FILE, self.count, self.dim)
            meta = {
                "format": FORMAT, "format_version": FORMAT_VERSION, "mlirkit_version": __version__,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "encoder": self.encoder, "dim": self.dim, "metric": "inner_product",
                "normalized": self.normalized, "transform": self.transform,
                "count": self.count, "lang_counts": dict(sorted(self.lang_counts.items())),
                "has_embeddings": self._raw is not None, "index_type": type_meta, **self.extra_meta,
            }
            (self.tmp / META_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except BaseException as e:
            self._abandon(e)
            raise
        else:
            self._claim.close()  # publishes the index


    def _finish_index(self) -> dict[str, Any]:
        """Train and fill a trained index type from the spooled vectors; the ``index_type`` meta entry."""
        spec = self.index_spec.resolve(self.dim, self.count)
        extra: dict[str, Any] = {}
        if self._spool is not None:
            spool = self.tmp / "vectors.f32"
            vectors = np.memmap(spool, dtype=np.float32, mode="r", shape=(self.count, self.dim))
            self.index = spec.new_index(self.dim)
            if spec.type.trained:
                limit = spec.params.get("train_size") or self.count
                sample = np.sort(np.random.default_rng(0).choice(self.count, size=limit, replace=False)) \
                    if limit < self.count else slice(None)
                logger.info("training %s on %d of %d vectors", spec.factory(self.dim), min(limit, self.count),
                            self.count)
                self.index.train(np.ascontiguousarray(vectors[sample]))
                extra["trained_on"] = min(limit, self.count)
            for start in range(0, self.count, 1 << 16):
                self.index.add(np.ascontiguousarray(vectors[start:start + (1 << 16)]))
            del vectors
            spool.unlink()
        return spec.to_meta(self.dim, **extra)


def _raw_to_npy(raw: Path, out: Path, rows: int, dim: int, chunk: int = 1 << 24) -> None:
    header = {"descr": "<f4", "fortran_order": False, "shape": (rows, dim)}
    with open(out, "wb") as f, open(raw, "rb") as src:
        np.lib.format.write_array_header_1_0(f, header)
        shutil.copyfileobj(src, f, chunk)
    raw.unlink()


__all__ = ["IndexWriter"]
