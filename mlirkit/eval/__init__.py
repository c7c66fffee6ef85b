"""Evaluation that shows language bias: ranx metrics plus TLR@k, per-language breakdowns, paired
significance tests, reports and plots. ``python -m mlirkit.eval --help``.

Public API: :func:`evaluate`, :func:`tlr_at_k`, :func:`write_report`, :mod:`mlirkit.eval.plots`.
Imports are lazy so ``import mlirkit.eval`` stays cheap. ranx, imported on first use, keeps its compiled
kernels in ``$MLIRKIT_CACHE/numba`` unless ``NUMBA_CACHE_DIR`` is set (:mod:`mlirkit.base.numba_cache`), so
they are compiled once and shared with the CLIs.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "evaluate": "mlirkit.eval.api",
    "EvaluationResult": "mlirkit.eval.result",
    "tlr_at_k": "mlirkit.eval.tlr",
    "TLRResult": "mlirkit.eval.tlr",
    "write_report": "mlirkit.eval.report",
    "read_query_langs": "mlirkit.eval.query_langs",
    "parse_metric": "mlirkit.eval.metrics",
    "METRICS": "mlirkit.eval.metrics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mlirkit.eval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
