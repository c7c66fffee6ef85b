"""Resolve an input named on the command line: a local file, or an ir_datasets id."""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import IO, Iterator

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.base.registry import did_you_mean


def is_file_source(source: str | os.PathLike) -> bool:
    return Path(source).is_file()


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


def open_text(path: str | os.PathLike) -> IO[bytes]:
    """Open a (possibly gzipped) file for binary line reading; lines are decoded by :func:`decode_line`."""
    path = Path(path)
    if not path.is_file():
        raise MlirkitError(f"{path}: no such file")
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def decode_line(raw: bytes, path: object, line_no: int) -> str:
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as e:
        raise format_error(path, line_no, f"invalid UTF-8 at byte {e.start}") from None


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """``(line number from 1, text)`` for each non-blank line, decoding UTF-8 strictly."""
    with open_text(path) as f:
        for line_no, raw in enumerate(f, start=1):
            line = decode_line(raw, path, line_no)
            if line.strip():
                yield line_no, line


def read_jsonl_objects(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of a JSONL(.gz) file; a line that is not
    valid UTF-8 or not a JSON object raises an error naming file and line."""
    for line_no, line in iter_lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise format_error(path, line_no, f"invalid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(obj, dict):
            raise format_error(path, line_no, "expected a JSON object")
        yield line_no, obj


def file_format(path: str | os.PathLike) -> str:
    """"jsonl" or "tsv" from the file name (``.gz`` ignored)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for ext, fmt in ((".jsonl", "jsonl"), (".json", "jsonl"), (".tsv", "tsv"), (".txt", "tsv")):
        if name.endswith(ext):
            return fmt
    raise MlirkitError(f"{path}: unknown file type (expected .jsonl, .json, .tsv, optionally .gz)")


__all__ = ["decode_line", "file_format", "is_file_source", "iter_lines", "load_ir_dataset", "open_text",
           "read_jsonl_objects"]
