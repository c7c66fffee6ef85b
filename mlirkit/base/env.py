"""Directories named by environment variables (``MLIRKIT_CACHE``, ``IR_DATASETS_HOME``), checked where read.

A variable that points at a file, or at a place where no directory can be made, is one error naming the
variable and its value (a ``mkdir`` traceback deep inside mlirkit or ir_datasets otherwise).
"""
from __future__ import annotations

import errno
import os
from pathlib import Path

from mlirkit.base.errors import MlirkitError


def env_directory(var: str, default: Path, *parts: str) -> Path:
    """``$var/parts...`` (or ``default/parts...`` when ``var`` is unset or empty), created if missing."""
    value = os.environ.get(var)
    base = Path(value).expanduser() if value else default
    path = base.joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        reason = e.strerror or errno.errorcode.get(e.errno or 0, "") or type(e).__name__
        if isinstance(e, (FileExistsError, NotADirectoryError)):
            reason = "a file is in the way"
        where = f"{var}={value!r}" if value else f"the default {var} {base}"
        raise MlirkitError(f"{where}: cannot use {path} as a directory ({reason}); point {var} at a "
                           "writable directory") from None
    return path


__all__ = ["env_directory"]
