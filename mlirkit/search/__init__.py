"""Dense search over an index directory: batch (``python -m mlirkit.search``) and free text (``Searcher.search_text``)."""
from __future__ import annotations

from mlirkit.search.langid import QueryLanguage
from mlirkit.search.results import Hit, SearchResults, TextResult
from mlirkit.search.searcher import Searcher

__all__ = ["Hit", "QueryLanguage", "SearchResults", "Searcher", "TextResult"]
