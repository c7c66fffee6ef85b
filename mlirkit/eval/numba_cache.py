"""Keep numba's compilation cache persistent so ranx compiles once, not on every run (30-50 s cold)."""
from __future__ import annotations

import logging
import os
import sys

logger = logging.getLogger(__name__)


def ensure_numba_cache_dir() -> str | None:
    """Point ``NUMBA_CACHE_DIR`` at ``cache_dir("numba")`` unless the user set it.

    Must run before numba is first imported (numba reads the variable once); returns the directory
    in effect, or None when numba was already imported without one.
    """
    current = os.environ.get("NUMBA_CACHE_DIR")
    if current:
        return current
    if "numba" in sys.modules:
        logger.debug("numba already imported without NUMBA_CACHE_DIR; its default cache location is used")
        return None
    from mlirkit.base.cache import cache_dir

    path = str(cache_dir("numba"))
    os.environ["NUMBA_CACHE_DIR"] = path
    logger.debug("NUMBA_CACHE_DIR=%s", path)
    return path


def import_ranx():
    """``import ranx`` after :func:`ensure_numba_cache_dir`."""
    ensure_numba_cache_dir()
    import ranx

    return ranx
