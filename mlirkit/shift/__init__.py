"""Language transforms fitted from translation pairs: SHIFT, language centering, LIR.

>>> from mlirkit.shift import load_transform
>>> t = load_transform("shift-e5.safetensors")
>>> docs = t.apply(raw_doc_embs, doc_langs, "doc", alpha=0.6)   # then L2-normalise

See docs/shift.md. Importing this package is cheap (numpy only).
"""
from __future__ import annotations

from mlirkit.shift.centering import CenteringTransform
from mlirkit.shift.corpus_fit import OverallShiftTransform, fit_corpus_shift, fit_corpus_shift_from_index
from mlirkit.shift.fit import (fit_centering_from_embeddings, fit_from_groups, fit_lir_from_embeddings,
                               fit_shift_from_embeddings)
from mlirkit.shift.io import load_transform, read_shift_pt, save_transform
from mlirkit.shift.lir import LIRTransform
from mlirkit.shift.hybrid import hybrid_shift
from mlirkit.shift.mining import fit_mined_shift
from mlirkit.shift.shift import ShiftTransform, derive_source
from mlirkit.shift.transform import TRANSFORMS, LanguageTransform, parse_alpha, resolve_alpha


def __getattr__(name: str):
    if name == "ShiftedFaissIndexer":  # imports the encode package (faiss) lazily
        from mlirkit.shift.indexer import ShiftedFaissIndexer

        return ShiftedFaissIndexer
    raise AttributeError(name)


__all__ = [
    "TRANSFORMS", "CenteringTransform", "LIRTransform", "LanguageTransform", "OverallShiftTransform", "ShiftTransform",
    "ShiftedFaissIndexer", "derive_source", "fit_centering_from_embeddings", "fit_from_groups",
    "fit_corpus_shift", "fit_corpus_shift_from_index", "fit_lir_from_embeddings", "fit_shift_from_embeddings",
    "fit_mined_shift", "hybrid_shift", "load_transform", "parse_alpha",
    "read_shift_pt", "resolve_alpha", "save_transform",
]
