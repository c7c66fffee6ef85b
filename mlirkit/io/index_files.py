"""File names of an index directory: Pyserini's layout (``index``, ``docid``) plus mlirkit's sidecars.

Defined here, below the index package, so that io can read an index's ``docid``/``langs`` files
(:func:`mlirkit.io.doc_langs.read_doc_langs`); :mod:`mlirkit.index.layout` re-exports them.
"""
from __future__ import annotations

FAISS_FILE = "index"
DOCID_FILE = "docid"
LANGS_FILE = "langs"
META_FILE = "meta.json"
EMBEDDINGS_FILE = "embeddings.npy"
TRANSFORM_FILE = "transform.safetensors"  # copy of the language transform applied (search needs its query side)

__all__ = ["DOCID_FILE", "EMBEDDINGS_FILE", "FAISS_FILE", "LANGS_FILE", "META_FILE", "TRANSFORM_FILE"]
