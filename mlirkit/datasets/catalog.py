"""mlirkit's own catalogue of its ir_datasets ids (languages, sizes, licence, offline availability).

:func:`register` adds a collection both to ``ir_datasets.registry`` and to :data:`DATASETS`, which the
``python -m mlirkit.datasets list`` command and :func:`mlirkit.datasets.parallel_rows` read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from mlirkit.base.registry import Registry

from mlirkit.datasets.records import (CollectionDocPairs, CollectionDocs, CollectionQrels, CollectionQueries,
                                      LazyCollection)
from mlirkit.io.records import Doc, Query


@dataclass(frozen=True)
class DatasetInfo:
    dataset_id: str
    family: str  # "belebele", "ddtp", "parallel", ...
    description: str
    doc_langs: tuple[str, ...]
    query_langs: tuple[str, ...] = ()
    size: str = ""  # human readable, e.g. "6,832 docs, 900 queries"
    licence: str = ""
    available_offline: Callable[[], bool] = field(default=lambda: False, compare=False)
    rows: Callable[[], Iterator[tuple[str, str, str]]] | None = field(default=None, compare=False)


DATASETS: Registry[DatasetInfo] = Registry("mlirkit dataset")


def register(info: DatasetInfo, collection: LazyCollection, *, doc_cls: type = Doc, query_cls: type = Query,
             with_queries: bool = True, docs_lang: str | None = None, queries_lang: str | None = None,
             with_docpairs: bool = False) -> None:
    """Register ``info.dataset_id`` with ir_datasets (docs, and queries + qrels unless ``with_queries``
    is False, docpairs if ``with_docpairs``; ``query_cls``: :class:`~mlirkit.io.records.ParallelQuery`
    for translated queries).
    Registering an id twice is a no-op (re-import safe)."""
    from mlirkit.io.sources import import_ir_datasets

    ir_datasets = import_ir_datasets()
    from ir_datasets.datasets.base import Dataset

    if info.dataset_id in DATASETS:
        return
    namespace = info.dataset_id
    parts = [CollectionDocs(collection, doc_cls, namespace, docs_lang)]
    if with_queries:
        parts += [CollectionQueries(collection, namespace, queries_lang, query_cls), CollectionQrels(collection)]
    if with_docpairs:
        parts.append(CollectionDocPairs(collection))
    ir_datasets.registry.register(info.dataset_id, Dataset(*parts))
    DATASETS.register(info.dataset_id, info)


__all__ = ["DATASETS", "DatasetInfo", "register"]
