"""Run fusion through ranx, and a fusion that keeps the language balance of a debiased run.

- :func:`fuse`: ``ranx.fuse`` (RRF, weighted sum, CombMNZ, ...; :data:`METHODS`, :data:`NORMS`) with
  mlirkit's input checks; :func:`tune`: the method's parameters chosen on judged dev runs
  (``ranx.optimize_fusion``);
- :func:`keep_languages`: re-order a fused run so that every rank keeps the document language of an
  anchor run (the dense run whose language bias SHIFT removed): lexical evidence reorders documents
  within a language, never trades one language for another;
- ``python -m mlirkit.fuse``: the same on TREC files.

Importing this package imports neither ranx nor numba (they load on first use).
"""
from __future__ import annotations

from mlirkit.fuse.fusion import fuse, tune
from mlirkit.fuse.language_slots import keep_languages
from mlirkit.fuse.methods import METHODS, NORMS

__all__ = ["METHODS", "NORMS", "fuse", "keep_languages", "tune"]
