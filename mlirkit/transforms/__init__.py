"""Language transforms as estimators: SHIFT, language centering, LIR, LSAR, LEACE.

>>> from mlirkit.transforms import ShiftTransform, load_transform
>>> t = ShiftTransform(source_lang="en").fit(embs, langs, groups)      # or load_transform("shift-e5.safetensors")
>>> docs = t.transform(raw_doc_embs, doc_langs, "doc")                  # then L2-normalise

The estimator contract is :class:`LanguageTransform` (:mod:`mlirkit.transforms.transform`); the methods are
the entries of :data:`TRANSFORMS` (each imported on first use, also as ``mlirkit.transforms.<Class>``). The
arrays a fit needs are built by :func:`fit_from_pairs` (translation pairs), by
:func:`mlirkit.shift.fit_from_index` (an index's own documents) and by :func:`import_shift_pt` (the SHIFT
authors' ``.pt`` vectors). The file format, language identification and the label-free alpha live here too;
applying a transform to an index and the ``python -m mlirkit.shift`` CLI live in :mod:`mlirkit.shift`. See
docs/shift.md. Importing this package is cheap (numpy only; scikit-learn loads with the estimators).
"""
from __future__ import annotations

import importlib
from typing import Any

from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.parallel import ParallelGroup, open_parallel
from mlirkit.transforms.registry import TRANSFORMS

#: names imported on first use (the estimator contract imports scikit-learn)
_LAZY = {"fit_from_pairs": "mlirkit.transforms.fit", "import_shift_pt": "mlirkit.transforms.import_pt",
         "select_alpha": "mlirkit.transforms.alpha_select", "hybrid_shift": "mlirkit.transforms.hybrid",
         "load_transform": "mlirkit.transforms.io", "read_shift_pt": "mlirkit.transforms.io",
         "save_transform": "mlirkit.transforms.io", "derive_source": "mlirkit.transforms.shift_transform",
         **{name: "mlirkit.transforms.transform" for name in ("LanguageTransform", "NotFittedError", "OffsetTransform",
                                                             "PerLanguageTransform", "ProjectionTransform")}}

__all__ = sorted(["TRANSFORMS", "Alpha", "ParallelGroup", "open_parallel", *_LAZY, *TRANSFORMS.class_names()])


def __getattr__(name: str) -> Any:
    """The method classes (by their registry entry) and the builders that import more, on first use."""
    method = TRANSFORMS.class_names().get(name)
    if method is not None:
        return TRANSFORMS.get(method)
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mlirkit.transforms' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
