"""The Anserini and Lucene classes the lexical package calls, reached through pyjnius after the JVM boot.

Anserini's ``SimpleIndexer`` and ``SimpleSearcher`` are the classes Pyserini's ``LuceneIndexer`` and
``LuceneSearcher`` wrap; calling them directly keeps ``import pyserini.search.lucene`` (which imports
torch, transformers and faiss) out of BM25 runs. Anserini's and Lucene's INFO logging (one line per
indexer, the memory-mapping notice) is turned down to warnings, as mlirkit's own logging is set by its CLIs.
"""
from __future__ import annotations

import functools
import logging
import os
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

    # Anserini logs to stdout through log4j (an ERROR line per failed batch, stacks); every Java failure
    # reaches the caller as an exception (java_errors: one line), so its log shows only with mlirkit's DEBUG
    verbose = logging.getLogger("mlirkit").isEnabledFor(logging.DEBUG)
    configurator = autoclass("org.apache.logging.log4j.core.config.Configurator")
    configurator.setRootLevel(getattr(autoclass("org.apache.logging.log4j.Level"), "WARN" if verbose else "OFF"))
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
        IndexSearcher=autoclass("org.apache.lucene.search.IndexSearcher"),
        DirectoryReader=autoclass("org.apache.lucene.index.DirectoryReader"),
        FieldInfos=autoclass("org.apache.lucene.index.FieldInfos"),
        AnalyzerUtils=autoclass("io.anserini.analysis.AnalyzerUtils"),
        SerialMergeScheduler=autoclass("org.apache.lucene.index.SerialMergeScheduler"),
        System=autoclass("java.lang.System"),
        PrintStream=autoclass("java.io.PrintStream"),
        ByteArrayOutputStream=autoclass("java.io.ByteArrayOutputStream"),
    )


@contextmanager
def java_errors(what: str) -> Iterator[None]:
    """A Java exception raised inside (a full disk, an unreadable index) becomes one line:
    ``MlirkitError("<what>: <Java class>: <message>")``. What Java prints on its standard error meanwhile
    (Lucene's merge threads print their stacks there) and the exception's stack are logged at DEBUG
    (``--verbose``), not printed."""
    c = classes()
    from jnius import JavaException

    log = logging.getLogger(__name__)
    buffer = c.ByteArrayOutputStream()
    before = c.System.err
    c.System.setErr(c.PrintStream(buffer, True, "UTF-8"))
    try:
        yield
    except JavaException as e:
        log.debug("Java stack of %s:\n%s", e.classname, "\n".join(e.stacktrace or []))
        message = " ".join(str(e.innermessage or "").split())
        raise MlirkitError(f"{what}: {e.classname}{': ' + message if message else ''}") from None
    finally:
        c.System.setErr(before)
        printed = str(buffer.toString("UTF-8"))
        if printed.strip():
            log.debug("Java's standard error (%s):\n%s", what, printed.rstrip())


def fs_directory(path: str):
    """``FSDirectory.open(path)`` (absolute: the JVM resolves a relative path against the directory it started in)."""
    c = classes()
    return c.FSDirectory.open(c.File(os.path.abspath(path)).toPath())


def java_list(items) -> object:
    """A ``java.util.ArrayList<String>`` of ``items``."""
    out = classes().ArrayList()
    for item in items:
        out.add(item)
    return out


__all__ = ["classes", "fs_directory", "java_errors", "java_list"]
