"""In-memory ir_datasets components for mlirkit's collections (records: :mod:`mlirkit.io.records`).

Every mlirkit collection is small enough (at most a few hundred thousand records) to be built in
memory from its upstream files once per process; these components expose such a built collection
through the ir_datasets handler interface (``docs_iter``, ``docs_lang``, ``docs_store``, ...).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ir_datasets.formats import BaseDocPairs, BaseDocs, BaseQrels, BaseQueries, GenericDocPair, TrecQrel
from ir_datasets.indices import Docstore

from mlirkit.io.records import Doc, Query


QRELS_DEFS = {1: "relevant: a language version of the query's gold passage / description / debate"}


@dataclass
class Collection:
    """A built collection: documents, queries and binary qrels, each record carrying ``lang``; training
    collections also carry ``docpairs`` (``GenericDocPair(query_id, positive doc_id, negative doc_id)``)."""

    docs: list = field(default_factory=list)
    queries: list = field(default_factory=list)
    qrels: list = field(default_factory=list)
    docpairs: list = field(default_factory=list)

    def doc_langs(self) -> set[str]:
        return {d.lang for d in self.docs}

    def query_langs(self) -> set[str]:
        return {q.lang for q in self.queries}


class LazyCollection:
    """Builds a :class:`Collection` on first use (thread-safe) and keeps it while ``key()`` (e.g. the
    data-root environment variables) stays the same; a failed build is not cached."""

    def __init__(self, build: Callable[[], Collection], key: Callable[[], object] = lambda: None) -> None:
        self._build = build
        self._key = key
        self._value: Collection | None = None
        self._value_key: object = None
        self._lock = threading.Lock()

    def __call__(self) -> Collection:
        key = self._key()
        with self._lock:
            if self._value is None or self._value_key != key:
                self._value = self._build()
                self._value_key = key
            return self._value


def _single_lang(langs: set[str]) -> str | None:
    return next(iter(langs)) if len(langs) == 1 else None


class _DictDocstore(Docstore):
    def __init__(self, collection: LazyCollection, doc_cls: type) -> None:
        super().__init__(doc_cls, "doc_id")
        self._collection = collection
        self._by_id: dict | None = None

    def get_many_iter(self, doc_ids):
        if self._by_id is None:
            self._by_id = {d.doc_id: d for d in self._collection().docs}
        for doc_id in doc_ids:
            doc = self._by_id.get(doc_id)
            if doc is not None:
                yield doc

    def built(self) -> bool:  # ir_datasets' use_docstore asks this
        return False


class DocsIter:
    """The iterator ``docs_iter()`` returns: sliceable like ir_datasets' own (``docs_iter()[:100]``,
    ``[10:20]``, ``[::2]``, ``[5]``, fractions ``[0.1:0.2]``), with ir_datasets' slice arithmetic
    (:func:`ir_datasets.util.apply_sub_slice`, :func:`ir_datasets.util.slice_idx`)."""

    def __init__(self, collection: LazyCollection, where: slice | None = None) -> None:
        self._collection = collection
        self._slice = where
        self._it: Iterator | None = None

    def _bounds(self) -> slice:
        return self._slice if self._slice is not None else slice(0, len(self._collection().docs))

    def __iter__(self) -> "DocsIter":
        return self

    def __next__(self):
        if self._it is None:
            s = self._bounds()
            self._it = iter(self._collection().docs[s.start:s.stop:s.step])
        return next(self._it)

    def __getitem__(self, key):
        from ir_datasets.util import apply_sub_slice, slice_idx

        if isinstance(key, slice):
            return DocsIter(self._collection, apply_sub_slice(self._bounds(), key))
        if isinstance(key, int):
            s = self._bounds()
            docs = self._collection().docs[s.start:s.stop:s.step]
            try:
                return docs[key]
            except IndexError:
                raise IndexError((s, slice_idx(s, key))) from None
        raise TypeError("key must be int or slice")


class CollectionDocs(BaseDocs):
    def __init__(self, collection: LazyCollection, doc_cls: type = Doc, namespace: str = "mlirkit",
                 lang: str | None = None) -> None:
        self._collection = collection
        self._cls = doc_cls
        self._namespace = namespace
        self._lang = lang

    def docs_iter(self) -> DocsIter:
        return DocsIter(self._collection)

    def docs_count(self) -> int:
        return len(self._collection().docs)

    def docs_cls(self) -> type:
        return self._cls

    def docs_namespace(self) -> str:
        return self._namespace

    def docs_lang(self) -> str | None:
        """The one language of every document, or None for a multilingual corpus (read ``doc.lang``)."""
        return self._lang if self._lang is not None else _single_lang(self._collection().doc_langs())

    def docs_store(self, field: str = "doc_id", options=None) -> Docstore:
        return _DictDocstore(self._collection, self._cls)


class CollectionQueries(BaseQueries):
    def __init__(self, collection: LazyCollection, namespace: str = "mlirkit", lang: str | None = None,
                 query_cls: type = Query) -> None:
        self._collection = collection
        self._cls = query_cls
        self._namespace = namespace
        self._lang = lang

    def queries_iter(self) -> Iterator[Query]:
        return iter(self._collection().queries)

    def queries_count(self) -> int:
        return len(self._collection().queries)

    def queries_cls(self) -> type:
        return self._cls

    def queries_namespace(self) -> str:
        return self._namespace

    def queries_lang(self) -> str | None:
        """The query language of a single-language query set, else None (read ``query.lang``)."""
        return self._lang if self._lang is not None else _single_lang(self._collection().query_langs())


class CollectionQrels(BaseQrels):
    def __init__(self, collection: LazyCollection) -> None:
        self._collection = collection

    def qrels_iter(self) -> Iterator[TrecQrel]:
        return iter(self._collection().qrels)

    def qrels_count(self) -> int:
        return len(self._collection().qrels)

    def qrels_cls(self) -> type:
        return TrecQrel

    def qrels_defs(self) -> dict[int, str]:
        return dict(QRELS_DEFS)


class CollectionDocPairs(BaseDocPairs):
    """The training triples of a collection: ``(query_id, doc_id_a, doc_id_b)``, ``a`` relevant, ``b`` not."""

    def __init__(self, collection: LazyCollection) -> None:
        self._collection = collection

    def docpairs_iter(self) -> Iterator[GenericDocPair]:
        return iter(self._collection().docpairs)

    def docpairs_count(self) -> int:
        return len(self._collection().docpairs)

    def docpairs_cls(self) -> type:
        return GenericDocPair


def qrels_from_dict(qrels: dict[str, dict[str, int]]) -> list[TrecQrel]:
    """``{qid: {doc_id: 1}}`` -> sorted ``TrecQrel`` list (binary relevance, iteration "0")."""
    return [TrecQrel(qid, did, int(qrels[qid][did]), "0") for qid in sorted(qrels) for did in sorted(qrels[qid])]


__all__ = ["Collection", "CollectionDocPairs", "CollectionDocs", "CollectionQrels", "CollectionQueries",
           "LazyCollection", "qrels_from_dict"]
