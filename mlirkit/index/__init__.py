"""The index directory: Pyserini's layout (``index`` + ``docid``) plus ``langs``, ``meta.json`` and
an optional ``embeddings.npy`` of the untransformed vectors."""
from __future__ import annotations

from mlirkit.index.layout import DOCID_FILE, EMBEDDINGS_FILE, FAISS_FILE, LANGS_FILE, META_FILE, FORMAT_VERSION
from mlirkit.index.reader import DenseIndex
from mlirkit.index.writer import IndexWriter

__all__ = ["DOCID_FILE", "EMBEDDINGS_FILE", "FAISS_FILE", "FORMAT_VERSION", "LANGS_FILE", "META_FILE",
           "DenseIndex", "IndexWriter"]
