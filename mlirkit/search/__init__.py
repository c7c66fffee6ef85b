"""Batch dense search over an index directory (``python -m mlirkit.search``)."""
from __future__ import annotations

from mlirkit.search.searcher import Hit, Searcher

__all__ = ["Hit", "Searcher"]
