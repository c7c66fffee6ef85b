"""One persistent place for numba's compiled kernels, so ranx compiles once, not in every environment.

ranx compiles its metric kernels with numba on first use (30-50 s on two idle cores). numba caches
them on disk: in ``NUMBA_CACHE_DIR`` when set, else beside ranx's sources (``site-packages/ranx/**/
__pycache__``, or a user-wide directory when those are read-only). mlirkit points ``NUMBA_CACHE_DIR`` at
``$MLIRKIT_CACHE/numba`` before numba is imported (``import mlirkit.eval`` does, and every CLI that
evaluates), so the CLIs, the benchmark and notebooks share one cache; a ``NUMBA_CACHE_DIR`` the user
set is kept.
"""
from __future__ import annotations

import logging
import os
import sys

logger = logging.getLogger(__name__)


def ensure_numba_cache_dir() -> str | None:
    """Point ``NUMBA_CACHE_DIR`` at ``cache_dir("numba")`` unless the user set it.

    Must run before numba is first imported (numba reads the variable once); returns the directory
    in effect, or None when numba was already imported without one. Creates nothing (numba creates
    the directory when it first writes a kernel).
    """
    current = os.environ.get("NUMBA_CACHE_DIR")
    if current:
        return current
    if "numba" in sys.modules:
        logger.debug("numba already imported without NUMBA_CACHE_DIR; its default cache location is used")
        return None
    from mlirkit.base.cache import cache_dir

    path = str(cache_dir("numba", create=False))
    os.environ["NUMBA_CACHE_DIR"] = path
    logger.debug("NUMBA_CACHE_DIR=%s", path)
    return path


def import_ranx():
    """``import ranx`` after :func:`ensure_numba_cache_dir`."""
    ensure_numba_cache_dir()
    import ranx

    return ranx
