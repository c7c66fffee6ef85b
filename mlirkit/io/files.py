"""Opening input files: the one gzip-aware opener and the strict UTF-8 line readers on top of it.

A file is gzip-compressed when it starts with the gzip magic bytes ``1f 8b``, whatever its name (a
``.txt`` may be compressed, a ``.gz`` may be plain). A missing or unreadable file, and a truncated or
corrupt gzip stream (noticed while reading), a directory given as a file and any ``OSError`` while
reading raise :class:`~mlirkit.base.errors.MlirkitError` naming the file; a line that is not valid
UTF-8 raises an error naming file and line. A UTF-8 byte-order mark at the start of a file (after
decompression) is dropped by the line readers, so the first id of a TSV, TREC or JSONL file is clean.
A JSON line nested too deeply or holding an integer too long to convert is an error naming file and line.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from pathlib import Path
from typing import IO, Iterator

from mlirkit.base.errors import MlirkitError, format_error

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def _unreadable(path: object, error: BaseException) -> MlirkitError:
    return MlirkitError(f"{path}: cannot read ({error})")


class _CheckedGzipFile(gzip.GzipFile):
    """A ``GzipFile`` whose read errors (truncated or corrupt stream) become :class:`MlirkitError`."""

    def __init__(self, path: Path) -> None:
        super().__init__(filename=str(path), mode="rb")
        self._path = path

    def _checked(self, method, *args):
        try:
            return method(*args)
        except (OSError, EOFError, zlib.error) as e:  # truncated or corrupt stream
            raise _unreadable(self._path, e) from None

    def read(self, size=-1):
        return self._checked(super().read, size)

    def read1(self, size=-1):
        return self._checked(super().read1, size)

    def readline(self, size=-1):
        return self._checked(super().readline, size)

    def peek(self, n=0):
        return self._checked(super().peek, n)


def is_gzip(path: str | os.PathLike) -> bool:
    """True when the file starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def open_binary(path: str | os.PathLike) -> IO[bytes]:
    """Open a file for binary reading, decompressing it when it is gzip (by content, not by name)."""
    path = Path(path)
    if path.is_dir():
        raise MlirkitError(f"{path}: no such file (it is a directory)")
    if not path.is_file():
        raise MlirkitError(f"{path}: no such file")
    try:
        return _CheckedGzipFile(path) if is_gzip(path) else open(path, "rb")
    except OSError as e:
        raise _unreadable(path, e) from None


def open_text(path: str | os.PathLike) -> IO[str]:
    """:func:`open_binary` decoded as strict UTF-8 (universal newlines, as ``open(path)``)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8")


def decode_line(raw: bytes, path: object, line_no: int) -> str:
    """One raw line as text without its line ending; invalid UTF-8 is an error naming file and line."""
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as e:
        raise format_error(path, line_no, f"invalid UTF-8 at byte {e.start}") from None


def iter_lines(path: str | os.PathLike, *, skip_comments: bool = False,
               keep_blank: bool = False) -> Iterator[tuple[int, str]]:
    """``(line number from 1, text)`` for each non-blank line (every line with ``keep_blank``),
    decoding UTF-8 strictly; ``skip_comments`` also skips lines whose first non-blank character is ``#``.
    A byte-order mark at the start of the file is dropped."""
    with open_binary(path) as f:
        for line_no, raw in enumerate(_raw_lines(f, path), start=1):
            if line_no == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM):]
            line = decode_line(raw, path, line_no)
            stripped = line.strip()
            if not keep_blank and (not stripped or (skip_comments and stripped.startswith("#"))):
                continue
            yield line_no, line


def _raw_lines(f: IO[bytes], path: object) -> Iterator[bytes]:
    """The raw lines of an open file; an ``OSError`` while reading (an I/O error, a truncated gzip
    stream) becomes :class:`MlirkitError` naming the file."""
    while True:
        try:
            raw = f.readline()
        except MlirkitError:
            raise
        except (OSError, EOFError, zlib.error) as e:
            raise _unreadable(path, e) from None
        if not raw:
            return
        yield raw


def read_lines(path: str | os.PathLike) -> list[str]:
    """Every line of a file, blank ones included (one value per line, as in an index's ``docid``)."""
    return [line for _, line in iter_lines(path, keep_blank=True)]


def file_sha256(path: str | os.PathLike, chunk: int = 1 << 22) -> str:
    """The sha256 of a file's bytes (hex), read in chunks: the one file hash of mlirkit (model weights,
    transform files, runs and their provenance)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_jsonl_objects(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines file; a line that is not
    valid UTF-8 or not a JSON object raises an error naming file and line."""
    for line_no, line in iter_lines(path):
        yield line_no, parse_json_object(line, path, line_no)


def parse_json_object(line: str, path: object, line_no: int) -> dict:
    """One JSON Lines record; anything but a JSON object is an error naming file and line."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise format_error(path, line_no, f"invalid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise format_error(path, line_no, "invalid JSON (nested too deeply)") from None
    except ValueError as e:  # e.g. an integer beyond Python's int max str digits
        raise format_error(path, line_no, f"invalid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise format_error(path, line_no, "expected a JSON object")
    return obj


__all__ = ["GZIP_MAGIC", "UTF8_BOM", "decode_line", "file_sha256", "is_gzip", "iter_lines", "open_binary", "open_text", "parse_json_object",
           "read_jsonl_objects", "read_lines"]
