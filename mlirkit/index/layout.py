"""File names of an index directory (Pyserini's ``index`` and ``docid``, plus mlirkit's sidecars; the
names are defined once in :mod:`mlirkit.io.index_files`) and the format of its ``meta.json``."""
from __future__ import annotations

from mlirkit.base.outputs import INDEX_FORMAT
from mlirkit.io.index_files import (  # noqa: F401  (re-exported)
    DOCID_FILE, EMBEDDINGS_FILE, FAISS_FILE, LANGS_FILE, META_FILE, TRANSFORM_FILE,
)

FORMAT = INDEX_FORMAT  # defined with the "is this ours?" checks
FORMAT_VERSION = 1

__all__ = ["DOCID_FILE", "EMBEDDINGS_FILE", "FAISS_FILE", "FORMAT", "FORMAT_VERSION", "LANGS_FILE", "META_FILE",
           "TRANSFORM_FILE"]
