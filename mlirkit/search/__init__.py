"""Batch dense search over an index directory (``python -m mlirkit.search``)."""
from __future__ import annotations

from mlirkit.search.results import Hit, SearchResults
from mlirkit.search.searcher import Searcher

__all__ = ["Hit", "SearchResults", "Searcher"]
