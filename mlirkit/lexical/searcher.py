"""BM25 search of a multilingual Lucene index, each query analysed by its own language's analyzer.

Scores are Anserini's ``SimpleSearcher`` (what Pyserini's ``LuceneSearcher`` wraps): Lucene's
``BM25Similarity`` (Robertson et al., 1994; k1 = 0.9, b = 0.4 by default, as Anserini's), a bag-of-words
query of the analysed query terms, ties broken by document id. A query's analyzer is the one its
language's documents were indexed with (``meta.json``), else Anserini's analyzer of that language
(:func:`mlirkit.lexical.analyzers.analyzer_for`), else the fallback.

Which collection statistics BM25 uses (``statistics``):

- ``"language"`` (the default where the index has language fields, as mlirkit writes them): the query is
  run against every ``contents_<lang>`` field (Anserini's ``search_fields``, boost 1 each); a document
  has exactly one of them, so its score is its BM25 with the document frequencies, document count and
  average length of its own language, as in an index of that language alone. Measured better than
  pooled statistics on DDTP and XQuAD-R, and less biased towards the query's language (docs/results.md);
- ``"pooled"``: the ``contents`` field, statistics of the whole multilingual corpus (Anserini's default
  search; the only choice for a Lucene index without language fields).

Queries of any length: Lucene refuses a query of more than ``IndexSearcher.getMaxClauseCount()`` (1,024)
term clauses, and a query of ``n`` distinct terms searched over ``f`` language fields has ``n * f`` (74
terms on DDTP's 14 languages are too many). The limit is raised, before each batch, to what its longest
query needs (the limit is a guard against memory use; the scores are Lucene's own). A query that has no
term left after analysis (only stopwords or punctuation) gets no results; such queries are counted
(:attr:`Bm25Searcher.queries_without_terms`) and named in a warning (all of them: an error, nothing to search).
"""
from __future__ import annotations

import logging
import os
from collections import defaultdict
from typing import Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.base.registry import Registry
from mlirkit.io.records import Query
from mlirkit.lexical.analyzers import FALLBACKS, LANGUAGE_ANALYZERS, Analyzer, analyzer_for, fallback
from mlirkit.lexical.layout import read_meta

logger = logging.getLogger(__name__)

K1, B = 0.9, 0.4  # Anserini's defaults


def check_bm25(k1: float, b: float) -> None:
    """BM25's parameters as Lucene's ``BM25Similarity`` takes them: ``k1`` finite and >= 0, ``0 <= b <= 1``."""
    import math

    for name, value, ok, allowed in (("k1", k1, lambda v: v >= 0, "a finite number >= 0"),
                                     ("b", b, lambda v: 0 <= v <= 1, "a number in [0, 1]")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not ok(value):
            raise MlirkitError(f"{option(name)} {value!r}: BM25's {name} must be {allowed}")
#: the BM25 statistics a search can use (see the module docstring)
STATISTICS: Registry[str] = Registry("BM25 statistics")
for _name in ("language", "pooled"):
    STATISTICS.register(_name, _name)


class Bm25Searcher:
    """``Bm25Searcher(index_dir).search(queries, k)`` -> ``{qid: {docid: score}}`` (see the module docstring).

    ``fallback_analyzer``: analyzer name for query languages without one (default: the index's fallback).
    ``statistics``: ``"language"`` or ``"pooled"`` (default: ``"language"`` where the index has language fields).
    """

    def __init__(self, index: str | os.PathLike, *, k1: float = K1, b: float = B,
                 fallback_analyzer: str | None = None, statistics: str | None = None) -> None:
        from mlirkit.lexical.java import classes, java_errors

        check_bm25(k1, b)
        self.index = str(index)
        self.meta = read_meta(index)
        if not self.meta:
            _refuse_unrecorded_language_fields(self.index)
        fields = sorted((self.meta.get("fields") or {}).values())
        self.statistics = STATISTICS.get(statistics or ("language" if fields else "pooled"))
        if self.statistics == "language" and not fields:
            raise MlirkitError(f"{index} has no language fields (not written by mlirkit.lexical): search it with "
                               "pooled statistics")
        self.fallback = fallback(fallback_analyzer or self.meta.get("fallback_analyzer"))
        self.k1, self.b = k1, b
        c = classes()
        with java_errors(f"cannot open {index}"):
            self._searcher = c.SimpleSearcher(os.path.abspath(self.index))  # not the JVM's start directory
        self._searcher.set_bm25(float(k1), float(b))
        self._fields = None  # pooled: Anserini's default search of ``contents``
        if self.statistics == "language":
            self._fields = c.HashMap()
            for field in fields:
                self._fields.put(field, c.Float(1.0))
        self._java: dict[str, object] = {}
        #: the ids of the queries of the last :meth:`search` that had no term left after analysis
        self.queries_without_terms: list[str] = []

    @property
    def num_docs(self) -> int:
        return int(self._searcher.get_total_num_docs())

    def analyzer(self, lang: str, where: str = "") -> Analyzer:
        """The analyzer of queries in ``lang``: the index's for that language, else :func:`analyzer_for`."""
        entry = (self.meta.get("analyzers") or {}).get(lang)
        if entry is not None:
            name = entry["analyzer"]
            return LANGUAGE_ANALYZERS.get(name) or FALLBACKS[name]
        return analyzer_for(lang, self.fallback, where=where)

    def search(self, queries: Sequence[Query], k: int = 1000, threads: int = 1, batch_size: int = 256,
               show_progress: bool = False) -> dict[str, dict[str, float]]:
        """The top ``k`` documents of every query, ``{qid: {docid: score}}``; queries are searched in
        groups of one analyzer, ``threads`` Java threads per batch."""
        from tqdm.auto import tqdm

        from mlirkit.lexical.java import java_errors, java_list

        groups: dict[str, list[Query]] = defaultdict(list)
        analyzers: dict[str, Analyzer] = {}
        for q in queries:
            a = self.analyzer(q.lang, where=f"query {q.query_id!r}")
            analyzers[a.name] = a
            groups[a.name].append(q)
        results: dict[str, dict[str, float]] = {}
        self.queries_without_terms = []
        n_fields = self._fields.size() if self._fields is not None else 1
        with tqdm(total=len(queries), unit="query", desc="bm25 search", disable=not show_progress) as bar:
            for name, group in groups.items():
                java_analyzer = self._java_analyzer(analyzers[name])
                self._searcher.set_analyzer(java_analyzer)
                for i in range(0, len(group), batch_size):
                    batch = group[i:i + batch_size]
                    terms = {q.query_id: self.terms(java_analyzer, q.text) for q in batch}
                    self.queries_without_terms += [q.query_id for q in batch if not terms[q.query_id]]
                    batch = [q for q in batch if terms[q.query_id]]
                    if not batch:
                        bar.update(len(terms))
                        continue
                    _allow_clauses(max(len(t) for t in terms.values()) * n_fields)
                    texts, qids = java_list(q.text for q in batch), java_list(q.query_id for q in batch)
                    with java_errors(f"search of {self.index}"):
                        if self._fields is None:
                            hits = self._searcher.batch_search(texts, qids, int(k), int(threads))
                        else:
                            hits = self._searcher.batch_search_fields(texts, qids, int(k), int(threads), self._fields)
                    for entry in hits.entrySet().toArray():
                        results[entry.getKey()] = {h.docid: float(h.score) for h in entry.getValue()}
                    bar.update(len(terms))
        ids = self.queries_without_terms
        if ids and len(ids) == len(queries):
            raise MlirkitError(f"none of the {len(ids)} queries has a term left after analysis (only stopwords or "
                               f"punctuation), e.g. {ids[0]!r}: nothing to search")
        if ids:
            logger.warning("%d of %d queries have no term left after analysis (only stopwords or punctuation) and get "
                           "no results: %s", len(ids), len(queries), ", ".join(map(repr, ids[:5])) + (", ..." if len(ids) > 5 else ""))
        return {q.query_id: results.get(q.query_id, {}) for q in queries}

    @staticmethod
    def terms(java_analyzer, text: str) -> set[str]:
        """The distinct terms the analyzer makes of ``text`` (Anserini's ``AnalyzerUtils.analyze``)."""
        from mlirkit.lexical.java import classes

        return set(classes().AnalyzerUtils.analyze(java_analyzer, text))

    def _java_analyzer(self, analyzer: Analyzer):
        if analyzer.name not in self._java:
            self._java[analyzer.name] = analyzer.java()
        return self._java[analyzer.name]

    def close(self) -> None:
        self._searcher.close()

    def __enter__(self) -> "Bm25Searcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _allow_clauses(needed: int) -> None:
    """Raise Lucene's clause limit (process-wide in the JVM) to ``needed`` when it is lower."""
    from mlirkit.lexical.java import classes

    searcher = classes().IndexSearcher
    if needed > searcher.getMaxClauseCount():
        logger.debug("raising Lucene's clause limit from %d to %d", searcher.getMaxClauseCount(), needed)
        searcher.setMaxClauseCount(int(needed))


def _refuse_unrecorded_language_fields(index: str) -> None:
    """A Lucene index without ``meta.json`` whose fields are mlirkit's language fields (``contents_<lang>``)
    is an mlirkit index that lost its metadata: refused rather than searched with guessed analyzers."""
    from mlirkit.lexical.java import classes, fs_directory, java_errors
    from mlirkit.lexical.layout import META_FILE, POOLED_FIELD

    c = classes()
    with java_errors(f"cannot open {index}"):
        reader = c.DirectoryReader.open(fs_directory(index))
        try:
            fields = [str(f) for f in c.FieldInfos.getIndexedFields(reader).toArray()]
        finally:
            reader.close()
    language = sorted(f for f in fields if f.startswith(POOLED_FIELD + "_"))
    if language:
        raise MlirkitError(f"{index} has no {META_FILE} but mlirkit's language fields ({', '.join(language[:3])}"
                           f"{', ...' if len(language) > 3 else ''}): the analyzers and fields it records are not "
                           "guessed; rebuild the index (python -m mlirkit.lexical index)")


__all__ = ["B", "Bm25Searcher", "K1", "STATISTICS", "check_bm25"]
