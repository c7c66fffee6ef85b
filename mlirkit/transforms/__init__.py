"""Language transforms fitted from translation pairs or a corpus: SHIFT, language centering, LIR.

>>> from mlirkit.transforms import load_transform
>>> t = load_transform("shift-e5.safetensors")
>>> docs = t.apply(raw_doc_embs, doc_langs, "doc", alpha=0.6)   # then L2-normalise

The maths, the fitting, the transform file format, language identification and the label-free alpha
selection live here; applying a transform to an index and the ``python -m mlirkit.shift`` CLI live in
:mod:`mlirkit.shift`. See docs/shift.md. Importing this package is cheap (numpy only).
"""
from __future__ import annotations

from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.centering import CenteringTransform
from mlirkit.transforms.corpus_fit import OverallShiftTransform, fit_corpus_shift
from mlirkit.transforms.fit import (fit_centering_from_embeddings, fit_from_groups, fit_from_pairs,
                                    fit_lir_from_embeddings, fit_shift_from_embeddings)
from mlirkit.transforms.hybrid import hybrid_shift
from mlirkit.transforms.io import load_transform, read_shift_pt, save_transform
from mlirkit.transforms.lir import LIRTransform
from mlirkit.transforms.shift_transform import ShiftTransform, derive_source
from mlirkit.transforms.transform import TRANSFORMS, LanguageTransform

__all__ = [
    "TRANSFORMS", "Alpha", "CenteringTransform", "LIRTransform", "LanguageTransform", "OverallShiftTransform", "ShiftTransform",
    "derive_source", "fit_centering_from_embeddings", "fit_from_groups", "fit_from_pairs", "fit_corpus_shift",
    "fit_lir_from_embeddings", "fit_shift_from_embeddings", "hybrid_shift", "load_transform",
    "read_shift_pt", "save_transform",
]
