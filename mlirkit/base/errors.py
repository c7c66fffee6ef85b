"""User-facing errors: a CLI prints them as one line on stderr and exits non-zero, no traceback."""
from __future__ import annotations


class MlirkitError(Exception):
    """Bad input or a refused operation; the message names the file, line and field where known."""


class InputFormatError(MlirkitError):
    """A malformed input file. Build it with :func:`format_error` so it names file and line."""


def format_error(path: object, line: int | None, message: str) -> InputFormatError:
    """``InputFormatError('corpus.jsonl:12: missing field "text"')``."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return InputFormatError(f"{where}: {message}")


__all__ = ["InputFormatError", "MlirkitError", "format_error"]
