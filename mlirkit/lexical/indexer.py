"""Build a multilingual BM25 index: every document analysed by its own language's Anserini analyzer.

Anserini analyses a whole collection with one analyzer (``-language XX``). A pooled multilingual corpus
is therefore indexed the way a Pyserini user would index each language, and then merged:

1. documents are streamed from the corpus (:func:`mlirkit.io.corpus.read_corpus`: ids, JSONL, BEIR
   or JsonCollection folders, with their ``lang``) into one Anserini ``SimpleIndexer`` per document
   language, with that language's analyzer (:mod:`mlirkit.lexical.analyzers`) and Pyserini's recommended
   ``-storePositions -storeDocvectors -storeRaw``; each document's text goes into two fields, ``contents``
   and its language's own field ``contents_<lang>`` (``-fields``, :func:`mlirkit.lexical.layout.language_field`);
2. the per-language indexes are merged into one Lucene index with ``IndexWriter.addIndexes`` and
   force-merged to one segment. Merging copies the analysed postings, so each document keeps the terms
   of its own analyzer. BM25's collection statistics (document count, document frequencies, average
   length) are those of the pooled corpus in ``contents`` and those of the document's language in
   ``contents_<lang>``: a search of every language field scores each document as an index of its
   language alone would (:mod:`mlirkit.lexical.searcher`).

The result is published atomically (:func:`mlirkit.base.fs.atomic_directory`); a document whose language
has no analyzer stops the build and leaves nothing behind, unless a fallback analyzer is given.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from itertools import chain, islice
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.lexical.analyzers import Analyzer, analyzer_for, fallback
from mlirkit.io.records import Doc
from mlirkit.lexical.layout import DOCID_FILE, LANGS_FILE, LUCENE_INDEX_FORMAT, META_FILE, language_field

logger = logging.getLogger(__name__)

#: what Pyserini's documentation indexes with (positions for phrase queries, term vectors for RM3, raw JSON)
STORE_ARGS = ("-storePositions", "-storeDocvectors", "-storeRaw")
#: the longest term Lucene indexes (``IndexWriter.MAX_TERM_LENGTH``, UTF-8 bytes): a document id is one term
MAX_TERM_BYTES = 32766


@dataclass
class IndexSummary:
    index: str
    documents: int
    seconds: float
    languages: dict[str, int]
    analyzers: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "documents": self.documents,
                "docs_per_second": round(self.documents / max(self.seconds, 1e-9), 1),
                "languages": self.languages, "analyzers": self.analyzers}


class _Part:
    """One Anserini ``SimpleIndexer`` (one document language) and its pending JSON documents."""

    def __init__(self, lang: str, analyzer: Analyzer, path: Path, threads: int, batch_size: int, output: Path) -> None:
        from mlirkit.lexical.java import classes

        self.path, self.batch_size, self.pending, self.output = path, batch_size, [], output
        self.field = language_field(lang)
        args = ["-index", os.path.abspath(path), "-input", "", "-collection", "JsonCollection", "-threads", str(threads),
                *STORE_ARGS, "-fields", self.field, *analyzer.index_args]
        self.indexer = classes().SimpleIndexer(args)

    def add(self, doc: Doc) -> None:
        self.pending.append(json.dumps({"id": doc.doc_id, "contents": doc.text, self.field: doc.text,
                                        "lang": doc.lang}, ensure_ascii=False))
        if len(self.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            added = self.indexer.addRawDocuments(self.pending)
            if added != len(self.pending):
                # Anserini counts what Lucene took and drops the exception of the rest: a full disk says so on a
                # byte of its own; a file-size limit (one byte still fits) or a document Lucene refuses does not
                from mlirkit.base.fs import check_writable

                check_writable(self.output, self.path)
                raise MlirkitError(f"cannot write {self.output}: Anserini indexed {added} of {len(self.pending)} "
                                   f"documents of the language field {self.field} and drops Lucene's reason (a full "
                                   "disk, a file-size limit, or a document Lucene cannot take)")
            self.pending = []

    def close(self) -> None:
        self.flush()
        self.indexer.close()


def build_bm25_index(corpus: str | os.PathLike, index: str | os.PathLike, *, default_lang: str | None = None,
                     text_fields: Sequence[str] | None = None, skip_empty: bool = False, max_docs: int | None = None,
                     fallback_analyzer: str | None = None, threads: int = 1, batch_size: int = 1000,
                     overwrite: bool = False, show_progress: bool = False) -> IndexSummary:
    """Index ``corpus`` into the BM25 index directory ``index`` (see the module docstring); returns a summary.

    ``fallback_analyzer`` (``"standard"`` or ``"english"``, :data:`~mlirkit.lexical.analyzers.FALLBACKS`)
    analyses documents whose language has no Anserini analyzer; without it such a document is an error.
    """
    from tqdm.auto import tqdm

    from mlirkit.base.fs import atomic_directory
    from mlirkit.io.corpus import CorpusStats, count_docs, read_corpus

    fb = fallback(fallback_analyzer)
    stats = CorpusStats()
    docs = iter(read_corpus(corpus, default_lang=default_lang, text_fields=text_fields, skip_empty=skip_empty,
                            stats=stats))
    first = next(docs, None)  # an input that cannot be read fails here, before any output or progress bar
    docs = chain([first], docs) if first is not None else docs
    if max_docs is not None:
        docs = islice(docs, max_docs)
    total = count_docs(corpus)
    if total is not None and max_docs is not None:
        total = min(total, max_docs)
    start = time.perf_counter()
    docids: list[str] = []
    langs: list[str] = []
    used: dict[str, Analyzer] = {}
    from mlirkit.lexical.java import java_errors

    with atomic_directory(index, overwrite=overwrite, kind="index") as tmp, java_errors(f"cannot write {index}"):
        parts_dir = tmp / "parts"
        parts: dict[str, _Part] = {}
        try:
            with tqdm(total=total, unit="doc", desc="bm25 index", disable=not show_progress) as bar:
                for doc in docs:
                    if len(doc.doc_id.encode("utf-8")) > MAX_TERM_BYTES:  # the id is one term of the 'id' field
                        raise MlirkitError(f"{corpus}: document id {doc.doc_id[:40]!r}... is "
                                           f"{len(doc.doc_id.encode('utf-8')):,} bytes: a Lucene term holds at most "
                                           f"{MAX_TERM_BYTES:,} (IndexWriter.MAX_TERM_LENGTH)")
                    if doc.lang not in parts:
                        analyzer = analyzer_for(doc.lang, fb, where=f"{corpus}: document {doc.doc_id!r}, field lang")
                        parts[doc.lang] = _Part(doc.lang, analyzer, parts_dir / f"part{len(parts)}", threads,
                                                batch_size, Path(index))
                        used[doc.lang] = analyzer
                    parts[doc.lang].add(doc)
                    docids.append(doc.doc_id)
                    langs.append(doc.lang)
                    bar.update(1)
        finally:
            for part in parts.values():
                part.close()
        if not docids:
            raise MlirkitError(f"{corpus}: no documents to index")
        _merge([parts[name].path for name in sorted(parts)], tmp, threads)
        shutil.rmtree(parts_dir)
        meta = _meta(corpus, used, fb, Counter(langs), len(docids), max_docs, stats.skipped_empty)
        for name, text in ((DOCID_FILE, "".join(d + "\n" for d in docids)),
                           (LANGS_FILE, "".join(la + "\n" for la in langs)),
                           (META_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")):
            with open(tmp / name, "w", encoding="utf-8") as f:
                f.write(text)
    if stats.skipped_empty:
        logger.warning("skipped %d documents with empty text", stats.skipped_empty)
    return IndexSummary(str(index), len(docids), time.perf_counter() - start, dict(sorted(Counter(langs).items())),
                        {lang: a.name for lang, a in sorted(used.items())})


def _merge(parts: list[Path], out: Path, threads: int) -> None:
    """Lucene ``IndexWriter.addIndexes`` of ``parts`` into ``out``, force-merged to one segment."""
    from mlirkit.lexical.java import classes, fs_directory

    c = classes()
    config = c.IndexWriterConfig(c.WhitespaceAnalyzer())  # no text is analysed here: postings are copied
    config.setOpenMode(c.OpenMode.CREATE)
    config.setUseCompoundFile(False)
    config.setMergeScheduler(c.SerialMergeScheduler())  # merges in this thread: a failure is its exception
    writer = c.IndexWriter(fs_directory(out), config)
    try:
        writer.addIndexes(*[fs_directory(p) for p in parts])
        writer.forceMerge(1)
        writer.commit()
    finally:
        writer.close()


def _meta(corpus, used: dict[str, Analyzer], fb: Analyzer | None, counts: Counter, n: int, max_docs: int | None,
          skipped_empty: int) -> dict[str, Any]:
    from mlirkit import __version__
    from mlirkit.base.jvm import anserini_jar
    from mlirkit.lexical.java import classes

    return {
        "format": LUCENE_INDEX_FORMAT, "mlirkit_version": __version__, "corpus": str(corpus), "documents": n,
        **({"max_docs": max_docs} if max_docs is not None else {}),
        **({"skipped_empty": skipped_empty} if skipped_empty else {}),
        "lang_counts": dict(sorted(counts.items())),
        "analyzers": {lang: a.describe() for lang, a in sorted(used.items())},
        "fields": {lang: language_field(lang) for lang in sorted(used)},
        "fallback_analyzer": fb.name if fb is not None else None,
        "anserini_jar": anserini_jar().name, "lucene_version": str(classes().Version.LATEST.toString()),
    }


__all__ = ["IndexSummary", "STORE_ARGS", "build_bm25_index"]
