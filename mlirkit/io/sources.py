"""Resolve an input named on the command line: a local file, a directory, or an ir_datasets id.

:func:`source_kind` is the one place that decides what a source is; readers dispatch on its answer;
:func:`load_ir_dataset` the one place that looks an id up. mlirkit's own ids (``mlirkit/...``) are registered
by the datasets layer, above this one: the package root hands its registration in (:func:`on_first_lookup`),
and it runs before the first id is looked up, so every reader takes them and ``import mlirkit`` reads nothing.
"""
from __future__ import annotations

import os
import sys
import threading
from enum import Enum
from pathlib import Path
from typing import Callable

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


_registrars: list[Callable[[], None]] = []
_registrars_lock = threading.RLock()


def on_first_lookup(register: Callable[[], None]) -> None:
    """Call ``register()`` (once) before :func:`load_ir_dataset` first looks an id up."""
    with _registrars_lock:
        if register not in _registrars:
            _registrars.append(register)


def import_ir_datasets():
    """``import ir_datasets``, its home checked first: ir_datasets makes directories under
    ``$IR_DATASETS_HOME`` while it is imported, and a file in the way is then one error, not a traceback."""
    if "ir_datasets" not in sys.modules:
        from mlirkit.base.env import env_directory

        env_directory("IR_DATASETS_HOME", Path.home() / ".ir_datasets")
    import ir_datasets

    return ir_datasets


def load_ir_dataset(dataset_id: str):
    """``ir_datasets.load(id)``, mlirkit's ids included (:func:`on_first_lookup`), with a clear error for
    unknown ids."""
    ir_datasets = import_ir_datasets()
    with _registrars_lock:  # held while registering: no other thread looks an id up half-registered
        while _registrars:
            _registrars[0]()
            _registrars.pop(0)
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


__all__ = ["SourceKind", "file_format", "import_ir_datasets", "load_ir_dataset", "on_first_lookup", "source_kind"]
