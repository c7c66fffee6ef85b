"""The Anserini and Lucene classes the lexical package calls, reached through pyjnius after the JVM boot.

Anserini's ``SimpleIndexer`` and ``SimpleSearcher`` are the classes Pyserini's ``LuceneIndexer`` and
``LuceneSearcher`` wrap; calling them directly keeps ``import pyserini.search.lucene`` (which imports
torch, transformers and faiss) out of BM25 runs. Anserini's and Lucene's INFO logging (one line per
indexer, the memory-mapping notice) is turned down to warnings, as mlirkit's own logging is set by its CLIs.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Iterator

from mlirkit.base.errors import MlirkitError


@functools.lru_cache(maxsize=1)
def classes() -> SimpleNamespace:
    """Start the JVM (:func:`mlirkit.base.jvm.boot_jvm`) and return the classes, once."""
    from mlirkit.base.jvm import boot_jvm

    boot_jvm()
    from jnius import autoclass

    configurator = autoclass("org.apache.logging.log4j.core.config.Configurator")
    configurator.setRootLevel(autoclass("org.apache.logging.log4j.Level").WARN)
    autoclass("java.util.logging.Logger").getLogger("org.apache.lucene").setLevel(
        autoclass("java.util.logging.Level").WARNING)
    return SimpleNamespace(
        SimpleIndexer=autoclass("io.anserini.index.SimpleIndexer"),
        SimpleSearcher=autoclass("io.anserini.search.SimpleSearcher"),
        IndexWriter=autoclass("org.apache.lucene.index.IndexWriter"),
        IndexWriterConfig=autoclass("org.apache.lucene.index.IndexWriterConfig"),
        OpenMode=autoclass("org.apache.lucene.index.IndexWriterConfig$OpenMode"),
        WhitespaceAnalyzer=autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer"),
        FSDirectory=autoclass("org.apache.lucene.store.FSDirectory"),
        File=autoclass("java.io.File"),
        ArrayList=autoclass("java.util.ArrayList"),
        HashMap=autoclass("java.util.HashMap"),
        Float=autoclass("java.lang.Float"),
        Version=autoclass("org.apache.lucene.util.Version"),
    )


@contextmanager
def java_errors(what: str) -> Iterator[None]:
    """A Java exception raised inside (a full disk, an unreadable index) becomes one line:
    ``MlirkitError("<what>: <Java class>: <message>")``."""
    classes()
    from jnius import JavaException

    try:
        yield
    except JavaException as e:
        message = " ".join(str(e.innermessage or "").split())
        raise MlirkitError(f"{what}: {e.classname}{': ' + message if message else ''}") from None


def fs_directory(path: str):
    """``FSDirectory.open(path)``."""
    c = classes()
    return c.FSDirectory.open(c.File(str(path)).toPath())


def java_list(items) -> object:
    """A ``java.util.ArrayList<String>`` of ``items``."""
    out = classes().ArrayList()
    for item in items:
        out.add(item)
    return out
