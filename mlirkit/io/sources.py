"""Resolve an input named on the command line: a local file, a directory, or an ir_datasets id.

:func:`source_kind` is the one place that decides what a source is; readers dispatch on its answer.
"""
from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import did_you_mean


class SourceKind(str, Enum):
    FILE = "file"
    DIRECTORY = "directory"
    DATASET = "dataset"  # anything that is not an existing path: an ir_datasets id (maybe unknown)


def source_kind(source: str | os.PathLike) -> SourceKind:
    """An existing file, an existing directory, or else an ir_datasets id."""
    path = Path(source)
    if path.is_file():
        return SourceKind.FILE
    if path.is_dir():
        return SourceKind.DIRECTORY
    return SourceKind.DATASET


def load_ir_dataset(dataset_id: str):
    """``ir_datasets.load(id)`` with a clear error for unknown ids (``import mlirkit`` makes the
    ``mlirkit/...`` ids visible to ir_datasets; see :mod:`mlirkit._ir_datasets_hook`)."""
    import ir_datasets

    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        known = list(ir_datasets.registry)
        raise MlirkitError(f"{dataset_id!r} is neither an existing file nor an ir_datasets id"
                           f"{did_you_mean(dataset_id, known)}") from None


def file_format(path: str | os.PathLike) -> str:
    """"jsonl" or "tsv" from the file name (``.gz`` ignored)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for ext, fmt in ((".jsonl", "jsonl"), (".json", "jsonl"), (".tsv", "tsv"), (".txt", "tsv")):
        if name.endswith(ext):
            return fmt
    raise MlirkitError(f"{path}: unknown file type (expected .jsonl, .json, .tsv, optionally .gz)")


__all__ = ["SourceKind", "file_format", "load_ir_dataset", "source_kind"]
