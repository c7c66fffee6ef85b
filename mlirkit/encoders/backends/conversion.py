"""The conversion cache: a model converted for a backend once, under a lock, published atomically.

``cache_dir("converted", backend) / <digest of the key>/`` holds the converted files and, written
last, ``mlirkit_converted.json`` (the key). A process that finds the marker uses the directory; the
others take ``<digest>.lock`` (``filelock``), look again (a process that held the lock may have
converted meanwhile) and otherwise convert into a temporary sibling that is renamed into place, so
a crash or a concurrent reader never sees a half-written model. The key holds the model id, its
weights hash (the fingerprint's ``weights``), the backend, the runtime's version and a format number.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from mlirkit.base.cache import cache_dir
from mlirkit.encoders.base import fingerprint_digest
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option

logger = logging.getLogger(__name__)

MARKER = "mlirkit_converted.json"
#: conversions done by this process (tests read it: a second load must not convert again)
CONVERSIONS: list[Path] = []


def converted_path(backend: str, key: dict[str, Any], filename: str,
                   convert: Callable[[Path], None], *, timeout: float = 3600.0) -> Path:
    """``<cache>/converted/<backend>/<digest>/<filename>``, calling ``convert(tmp_dir)`` only when
    no finished conversion of ``key`` exists; concurrent callers wait for one conversion."""
    from filelock import FileLock

    root = cache_dir("converted", backend)
    digest = fingerprint_digest(key)
    final = root / digest
    if (final / MARKER).is_file():
        return final / filename
    with FileLock(str(root / f"{digest}.lock"), timeout=timeout):
        if (final / MARKER).is_file():  # converted by another process while we waited
            logger.info("using the %s conversion another process made: %s", backend, final)
            return final / filename
        tmp = Path(tempfile.mkdtemp(prefix=f".{digest}.tmp-", dir=root))
        try:
            start = time.perf_counter()
            logger.info("converting %s for the %s backend (once; cached in %s)", key.get("model"), backend, final)
            try:
                convert(tmp)
            except (RuntimeError, ValueError, TypeError, AttributeError) as e:  # tracing/export failures
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise MlirkitError(f"converting {key.get('model')} for the {backend} backend failed ({first}); "
                                   f"use {option('backend', 'torch', within='--encoder-option')}") from e
            if not (tmp / filename).is_file():
                raise RuntimeError(f"the {backend} conversion wrote no {filename}")
            (tmp / MARKER).write_text(json.dumps(key, indent=1, sort_keys=True) + "\n")
            os.chmod(tmp, 0o777 & ~_umask())
            if final.exists():  # an unfinished directory (no marker) from an older version
                shutil.rmtree(final)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        logger.info("converted in %.1f s", time.perf_counter() - start)
        CONVERSIONS.append(final)
    return final / filename


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["CONVERSIONS", "MARKER", "converted_path"]
