"""Open an index directory written by mlirkit (or by Pyserini: ``index`` + ``docid`` only)."""
from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.io.files import read_lines
from mlirkit.index.layout import DOCID_FILE, EMBEDDINGS_FILE, FAISS_FILE, LANGS_FILE, META_FILE
from mlirkit.base.langs import UNKNOWN


class DenseIndex:
    """An index directory. ``meta`` is ``{}`` for a plain Pyserini index (no ``meta.json``).

    ``langs`` falls back to :data:`UNKNOWN` for every document when the ``langs`` file is absent.
    With ``mmap=True`` the FAISS file is memory-mapped (``IO_FLAG_MMAP_IFC``: flat codes, HNSW storage
    and IVF lists stay in the page cache instead of process memory; the index is then read-only).
    """

    def __init__(self, path: str | os.PathLike, *, mmap: bool = False, threads: int | None = None) -> None:
        self.path = Path(path)
        self.mmap = mmap
        self.threads = threads  # FAISS threads a search of this index uses (None: the process's; see Searcher)
        if not (self.path / FAISS_FILE).is_file() or not (self.path / DOCID_FILE).is_file():
            raise MlirkitError(f"{self.path} is not an index directory (needs '{FAISS_FILE}' and '{DOCID_FILE}')")
        meta_path = self.path / META_FILE
        self.meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}

    @cached_property
    def docids(self) -> list[str]:
        return read_lines(self.path / DOCID_FILE)

    @cached_property
    def langs(self) -> list[str]:
        path = self.path / LANGS_FILE
        langs = read_lines(path) if path.is_file() else [UNKNOWN] * len(self.docids)
        if len(langs) != len(self.docids):
            raise MlirkitError(f"{path}: {len(langs)} lines but {len(self.docids)} document ids")
        return langs

    @cached_property
    def faiss_index(self):
        import faiss

        flags = getattr(faiss, "IO_FLAG_MMAP_IFC", faiss.IO_FLAG_MMAP) if self.mmap else 0
        index = faiss.read_index(str(self.path / FAISS_FILE), flags)
        if index.ntotal != len(self.docids):
            raise MlirkitError(f"{self.path}: FAISS index has {index.ntotal} vectors but "
                               f"{len(self.docids)} document ids")
        return index

    @property
    def dim(self) -> int:
        return int(self.meta.get("dim") or self.faiss_index.d)

    @property
    def encoder(self) -> dict[str, Any] | None:
        return self.meta.get("encoder")

    @property
    def transform(self) -> dict[str, Any] | None:
        return self.meta.get("transform")

    @property
    def index_spec(self):
        """The :class:`~mlirkit.index.types.IndexSpec` (``meta.json``'s ``index_type``, else inferred)."""
        from mlirkit.index.types import spec_of

        return spec_of(self)

    @property
    def has_embeddings(self) -> bool:
        return (self.path / EMBEDDINGS_FILE).is_file()

    def embeddings(self, mmap: bool = True) -> np.ndarray:
        """The untransformed vectors from ``embeddings.npy`` (memory-mapped by default)."""
        if not self.has_embeddings:
            raise MlirkitError(f"{self.path} has no {EMBEDDINGS_FILE} (encode with --save-embeddings)")
        return np.load(self.path / EMBEDDINGS_FILE, mmap_mode="r" if mmap else None)

    def indexed_vectors(self) -> np.ndarray:
        """The vectors stored in the FAISS index (reconstructed; flat and HNSW indexes only)."""
        from mlirkit.index.types import require_reconstructable

        require_reconstructable(self)
        index = self.faiss_index
        try:
            return index.reconstruct_n(0, index.ntotal)
        except RuntimeError as e:
            raise MlirkitError(f"{self.path}: cannot reconstruct vectors from this FAISS index ({e})") from None
