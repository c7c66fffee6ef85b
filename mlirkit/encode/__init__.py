"""Encode a corpus into an index directory (``python -m mlirkit.encode``)."""
from __future__ import annotations

from mlirkit.encode.indexer import Indexer, IndexStats

__all__ = ["IndexStats", "Indexer"]
