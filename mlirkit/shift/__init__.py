"""``python -m mlirkit.shift``: SHIFT (and centering, LIR) for users: fit, apply to an index, inspect.

This package is the user-facing entry point; it re-exports the transform API of
:mod:`mlirkit.transforms` (where the maths and the file format live) and adds what needs an index:

>>> from mlirkit.shift import load_transform, ShiftedFaissIndexer
>>> t = load_transform("shift-e5.safetensors")

- :class:`ShiftedFaissIndexer`: index documents with SHIFT applied (Pyserini-compatible output);
- :func:`apply_to_index`: the post-hoc form (same vectors, bit for bit, as index-time);
- :func:`fit_corpus_shift_from_index`, :func:`select_alpha_for_index`: corpus vectors and label-free alpha.

See docs/shift.md. Importing this package is cheap (numpy only; faiss and the encoders load on use).
"""
from __future__ import annotations

from mlirkit.transforms import (TRANSFORMS, CenteringTransform, LanguageTransform, LIRTransform,
                                OverallShiftTransform, ShiftTransform, derive_source, fit_centering_from_embeddings,
                                fit_corpus_shift, fit_from_groups, fit_lir_from_embeddings,
                                fit_shift_from_embeddings, hybrid_shift, load_transform, parse_alpha,
                                read_shift_pt, resolve_alpha, save_transform)
from mlirkit.transforms.mining import fit_mined_shift

_LAZY = {
    "ShiftedFaissIndexer": "mlirkit.shift.indexer",
    "apply_to_index": "mlirkit.shift.posthoc",
    "fit_corpus_shift_from_index": "mlirkit.shift.from_index",
    "select_alpha_for_index": "mlirkit.shift.from_index",
}


def __getattr__(name: str):
    """Names that need the index (faiss) or encode layers are imported on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mlirkit.shift' has no attribute {name!r}")


__all__ = [
    "TRANSFORMS", "CenteringTransform", "LIRTransform", "LanguageTransform", "OverallShiftTransform", "ShiftTransform",
    "ShiftedFaissIndexer", "apply_to_index", "derive_source", "fit_centering_from_embeddings", "fit_from_groups",
    "fit_corpus_shift", "fit_corpus_shift_from_index", "fit_lir_from_embeddings", "fit_shift_from_embeddings",
    "fit_mined_shift", "hybrid_shift", "load_transform", "parse_alpha", "read_shift_pt", "resolve_alpha", "save_transform",
    "select_alpha_for_index",
]
