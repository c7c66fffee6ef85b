"""One persistent place for ranx's compiled kernels, so ranx compiles once, not in every environment.

ranx compiles its metric kernels with numba on first use (30-50 s on two idle cores). numba caches
them on disk: in ``NUMBA_CACHE_DIR`` when set, else beside ranx's sources (``site-packages/ranx/**/
__pycache__``, or a user-wide directory when those are read-only). numba picks a function's cache
directory when the function is decorated, that is while ranx is imported; :func:`import_ranx` (the one way
mlirkit imports ranx) points numba's setting at ``$MLIRKIT_CACHE/numba`` for exactly that import and
puts it back, so the CLIs, the benchmark and notebooks share one cache and the process's environment and
numba's configuration are left as they were. A ``NUMBA_CACHE_DIR`` the user set is kept.
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

logger = logging.getLogger(__name__)


def numba_cache_dir() -> str:
    """Where ranx's kernels are cached: ``$NUMBA_CACHE_DIR`` if the user set it, else ``cache_dir("numba")``
    (created by numba when it first writes a kernel)."""
    from mlirkit.base.cache import cache_dir

    return os.environ.get("NUMBA_CACHE_DIR") or str(cache_dir("numba", create=False))


def import_ranx():
    """``import ranx`` with its kernels cached in :func:`numba_cache_dir` (when this import is the first)."""
    return import_cached("ranx")


def import_cached(name: str):
    """``import name`` (a module whose numba kernels are ``cache=True``: ranx, or one of mlirkit's) with its
    kernels cached in :func:`numba_cache_dir` (when this import is the first)."""
    import importlib

    if name in sys.modules or os.environ.get("NUMBA_CACHE_DIR"):
        return importlib.import_module(name)
    import numba

    path, before = numba_cache_dir(), numba.config.CACHE_DIR
    numba.config.CACHE_DIR = path
    try:
        module = importlib.import_module(name)
    finally:
        numba.config.CACHE_DIR = before
    logger.debug("the kernels of %s are cached in %s", name, path)
    return module


_ANNOUNCED: set[str] = set()


def announce_first_compile(part: str, what: str) -> bool:
    """Say, once per process, that ranx's ``part`` kernels (``metrics``, ``fusion``) are about to be compiled
    because none are cached yet (the first evaluation or fusion with an empty cache spends about a minute
    there, with no progress bar): one INFO line. Returns whether it said so."""
    if part in _ANNOUNCED:
        return False
    _ANNOUNCED.add(part)
    path = Path(numba_cache_dir())
    if any(path.glob(f"{part}_*/*.nbi")):
        return False
    logger.info("ranx compiles its %s kernels with numba on this first use (about a minute of CPU; cached in %s "
                "for later runs)", what, path)
    return True


__all__ = ["announce_first_compile", "import_cached", "import_ranx", "numba_cache_dir"]
