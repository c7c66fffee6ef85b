"""``import mlirkit.pyserini.activate``: start the JVM and register mlirkit's encoder classes with Pyserini.

One import for scripts that use Pyserini's Python API; it costs what importing Pyserini costs (6-11 s).
"""
from __future__ import annotations

from mlirkit.pyserini.registration import register

CLASS_NAMES = register()

__all__ = ["CLASS_NAMES"]
