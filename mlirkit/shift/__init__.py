"""``python -m mlirkit.shift``: the language transforms (SHIFT, centering, LIR, LSAR, LEACE) on an index: fit,
apply, inspect.

The transforms themselves (maths, fitting from pairs, the file format, ``load_transform``) live in
:mod:`mlirkit.transforms`; this package adds what needs an index:

>>> from mlirkit.shift import ShiftedFaissIndexer, apply_to_index

- :class:`ShiftedFaissIndexer`: index documents with a fitted transform applied (Pyserini-compatible output);
- :func:`apply_to_index`: the post-hoc form (same vectors, bit for bit, as index-time); it never fits, so
  the index's languages the transform has no vector for are first filled (or kept) by the fit step
  :func:`fill_missing_from_index`;
- :func:`fit_from_index`, :func:`select_alpha_for_index`: a transform fitted on the index's own documents (no
  parallel text: SHIFT's ``corpus`` and ``mined`` statistics, LSAR, LEACE) and the label-free alpha.

See docs/shift.md. Importing this package is cheap (faiss and the encoders load on use).
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "ShiftedFaissIndexer": "mlirkit.shift.indexer",
    "apply_to_index": "mlirkit.shift.posthoc",
    "fill_missing_from_index": "mlirkit.shift.posthoc",
    "fit_from_index": "mlirkit.shift.from_index",
    "select_alpha_for_index": "mlirkit.shift.from_index",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """Names that need the index (faiss) or encode layers are imported on first use."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mlirkit.shift' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
