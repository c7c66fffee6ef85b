"""mlirkit's datasets as ir_datasets ids: :func:`register_datasets` registers them (no I/O, no network), and
so does importing this package (as ``import ir_datasets`` registers its own); ``import mlirkit`` does not.

    import ir_datasets, mlirkit
    mlirkit.register_datasets()
    ds = ir_datasets.load("mlirkit/belebele/en")    # docs/queries carry .lang; qrels binary

Ids (``python -m mlirkit.datasets list``; details in docs/datasets.md):

- ``mlirkit/belebele/<lang>`` (14), ``mlirkit/xquad-r/<lang>`` (8), ``mlirkit/mlqa/<lang>`` (7),
  ``mlirkit/multieup-v2/<lang>`` (6), each also ``.../multi`` (queries in every language);
- XQuAD-R's other constructions: ``mlirkit/xquad-r-11/<lang>``, ``mlirkit/lareqa-xquad-r/<lang>``
  (LAReQA's sentence pool), ``mlirkit/xquad-r-partial/<lang>`` (partly parallel), each with ``multi``;
  the zero-shot split for trained retrievers ``mlirkit/xquad-r-zs/train`` and ``.../test/<lang>``;
- ``mlirkit/mmarco-pairs/<lang>`` and ``mlirkit/mmarco-pairs/multi`` (+ ``/10k``);
- bundled, offline: ``mlirkit/ddtp/<lang>`` (+ ``/dev``, ``/test``; ``multi``),
  ``mlirkit/parallel/{libreoffice-help,gettext,ddtp,tatoeba}``; XQuAD-R's upstream files are bundled too.

:func:`parallel_rows` yields the aligned rows ``(group_id, lang, text)`` of a parallel set.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import MlirkitError

try:  # ir_datasets is imported here; an unusable IR_DATASETS_HOME is raised when the ids are used, so that
    # `python -m mlirkit.datasets` (which imports this package first) reports it as its one-line error
    from mlirkit.io.sources import import_ir_datasets

    import_ir_datasets()  # IR_DATASETS_HOME checked before ir_datasets makes directories there
    from mlirkit.datasets.catalog import DATASETS, DatasetInfo
except MlirkitError as _error:
    _unusable: MlirkitError | None = _error

    def __getattr__(name: str):
        raise _unusable
else:
    _unusable = None
from mlirkit.datasets.sources import MissingDataError
from mlirkit.io.records import Doc, ParallelDoc, Query

#: the record types of mlirkit's ids live in :mod:`mlirkit.io.records`; these earlier names stay as aliases
LangDoc = Doc
LangQuery = Query

__all__ = ["DATASETS", "DatasetInfo", "LangDoc", "LangQuery", "ParallelDoc", "MissingDataError",
           "parallel_rows", "dataset_ids", "register_datasets"]


def register_datasets() -> None:
    """Register every ``mlirkit/...`` id with ir_datasets and :data:`DATASETS` (idempotent, cheap: collections
    are built on first use). ir_datasets has no plugin discovery: like its other extension packages,
    mlirkit's ids are visible to ``ir_datasets.load`` once this ran (every mlirkit CLI calls it)."""
    from mlirkit.datasets import _register
    from mlirkit.datasets.ddtp_nonparallel import register_nonparallel

    _register.register_all()
    register_nonparallel()


def dataset_ids() -> list[str]:
    return DATASETS.names()


def parallel_rows(source: str | Path) -> Iterator[tuple[str, str, str]]:
    """Aligned rows ``(group_id, lang, text)``: rows with the same ``group_id`` are translations.

    ``source`` is a parallel-set id (``mlirkit/parallel/gettext``, ``mlirkit/mmarco-pairs/multi/10k``,
    any ir_datasets id whose documents carry ``group_id``), or a path to an aligned JSONL(.gz) file
    with one ``{"id": group, "lang": code, "text": ...}`` object per line.
    """
    from mlirkit.datasets.bundled import read_aligned_jsonl

    from mlirkit.io.sources import SourceKind, source_kind

    name = str(source)
    if name in DATASETS and DATASETS.get(name).rows is not None:
        return DATASETS.get(name).rows()
    if source_kind(name) is SourceKind.FILE:
        return read_aligned_jsonl(Path(name))
    if name in DATASETS:
        import ir_datasets

        ds = ir_datasets.load(name)
        if "group_id" not in ds.docs_cls()._fields:
            raise MlirkitError(f"{name} is not a parallel set (its documents carry no group_id); "
                               f"parallel sets: {', '.join(i for i in DATASETS.names() if DATASETS.get(i).rows)}")
        return ((d.group_id, d.lang, d.text) for d in ds.docs_iter())
    raise MlirkitError(f"{name!r} is neither a registered parallel set nor an aligned JSONL file"
                       + _did_you_mean(name))


def _did_you_mean(name: str) -> str:
    from mlirkit.base.registry import did_you_mean

    return did_you_mean(name, DATASETS.names())


if _unusable is None:
    register_datasets()
