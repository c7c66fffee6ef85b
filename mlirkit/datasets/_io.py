"""Small strict readers for upstream files: errors name the file and line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import format_error
from mlirkit.datasets.sources import BundledFile
from mlirkit.io.files import open_binary, read_jsonl_objects


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line_no, object)`` for each non-blank line; a bad line raises an error naming file:line."""
    return read_jsonl_objects(path)


#: the largest JSON document read whole (LAReQA's and MLQA's files are a few MB each)
MAX_JSON_BYTES = 512 * 2**20


def read_json(path: Path | BundledFile, data: bytes | None = None) -> object:
    """One JSON document from a (gzip or plain) file, a bundled upstream file, or ``data`` read from ``path``;
    at most :data:`MAX_JSON_BYTES` (decompressed), nesting and integer size within Python's limits, or one line
    naming the file."""
    if isinstance(path, BundledFile):
        data = path.data
    if data is None:
        with open_binary(path) as f:
            data = f.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise format_error(path, None, f"larger than {MAX_JSON_BYTES // 2**20} MiB: refused as one JSON document")
    try:
        return json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise format_error(path, getattr(e, "lineno", None), f"invalid JSON: {e}") from None
    except RecursionError:
        raise format_error(path, None, "invalid JSON: nested too deeply") from None
    except ValueError as e:  # an integer beyond Python's digit limit
        raise format_error(path, None, f"invalid JSON: {' '.join(str(e).split())}") from None


def field(obj: dict, key: str, path: object, line: int | None, types: tuple = (str,)):
    """``obj[key]`` checked for presence and type."""
    if key not in obj:
        raise format_error(path, line, f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, types):
        names = "/".join(t.__name__ for t in types)
        raise format_error(path, line, f"field {key!r} should be {names}, got {type(value).__name__}")
    return value
