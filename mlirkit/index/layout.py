"""File names of an index directory (Pyserini's ``index`` and ``docid``, plus mlirkit's sidecars)."""
from __future__ import annotations

FAISS_FILE = "index"
DOCID_FILE = "docid"
LANGS_FILE = "langs"
META_FILE = "meta.json"
EMBEDDINGS_FILE = "embeddings.npy"
FORMAT = "mlirkit-dense-index"
FORMAT_VERSION = 1
TRANSFORM_FILE = "transform.safetensors"  # copy of the language transform applied (search needs its query side)
