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
    A byte-order mark at the start of the file is dropped.

    Lines are decoded a block at a time (:func:`_iter_blocks`); a block that does not decode, or a read that
    fails, hands over to the line-at-a-time reader (:func:`_iter_lines_one_by_one`) from the first line not
    yet yielded, so every error is the one-line reader's, raised at the same line."""
    for line_no, line in _every_line(path):
        if keep_blank or ((stripped := line.strip()) and not (skip_comments and stripped[0] == "#")):
            yield line_no, line


def _every_line(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Every line, blank ones included: :func:`_iter_blocks`, then, where it hands over, the lines of
    :func:`_iter_lines_one_by_one` after the last one it yielded."""
    done = 0
    try:
        for line_no, line in _iter_blocks(path):
            yield line_no, line
            done = line_no
    except _HandOver:
        yield from ((line_no, line) for line_no, line in _iter_lines_one_by_one(path) if line_no > done)


class _HandOver(Exception):
    """A block of lines the block reader leaves to the line-at-a-time reader (invalid UTF-8, a failed read)."""


#: bytes of whole lines read and decoded at once by :func:`iter_lines`
BLOCK_BYTES = 1 << 20


def _iter_blocks(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Every line (blank ones included) as ``(line number, text without line ending)``, ``BLOCK_BYTES`` of
    whole lines decoded at once; raises :class:`_HandOver` (before yielding any line of its block) where
    :func:`_iter_lines_one_by_one` must take over."""
    with open_binary(path) as f:
        line_no = 0
        while True:
            block = _read_block(f)
            if not block:
                return
            if line_no == 0 and block[0].startswith(UTF8_BOM):
                block[0] = block[0][len(UTF8_BOM):]
            try:
                text = b"".join(block).decode("utf-8")
            except UnicodeDecodeError:
                raise _HandOver() from None
            lines = text.split("\n")[:len(block)]  # no text after the last line ending
            if "\r" in text:
                lines = [line.rstrip("\r") for line in lines]
            for line_no, line in enumerate(lines, start=line_no + 1):
                yield line_no, line


def _read_block(f: IO[bytes]) -> list[bytes]:
    """The next raw lines of ``f``, about ``BLOCK_BYTES`` of them (``readline`` by ``readline``, as the
    one-line reader reads); a failed read raises :class:`_HandOver`."""
    block: list[bytes] = []
    size = 0
    readline = f.readline
    try:
        while size < BLOCK_BYTES and (raw := readline()):
            block.append(raw)
            size += len(raw)
    except Exception:  # noqa: BLE001 - the one-line reader raises its own error for it
        raise _HandOver() from None
    return block


def _iter_lines_one_by_one(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Every line as ``(line number, text)``, one ``readline`` and one decode at a time (blank ones included):
    the reference :func:`iter_lines` falls back on for the exact error of a bad line or a failed read."""
    with open_binary(path) as f:
        for line_no, raw in enumerate(_raw_lines(f, path), start=1):
            if line_no == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM):]
            yield line_no, decode_line(raw, path, line_no)


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
