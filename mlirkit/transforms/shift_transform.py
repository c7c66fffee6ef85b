"""SHIFT: subtract a relative language vector from every non-source-language document.

``V_l = (1/N) * sum_i ( f(D_i^l) - f(D_i^src) )`` over N translation pairs (source, l), passages
encoded as documents; at index time ``z' = z - alpha * V_l`` for documents of language ``l != src``.
Source-language and unknown-language documents and all queries are left unchanged; scores are the
cosine between the untouched query and ``z'`` (normalise after shifting).

Vectors for another source language s from the same (English-pivot) file: ``V_{l|s} = V_l - V_s``
(:func:`derive_source`), exact when the pairs are N-way aligned.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical
from mlirkit.transforms.transform import TRANSFORMS, OffsetTransform


class ShiftTransform(OffsetTransform):
    method = "shift"
    sides = ("doc",)
    tensor_prefix = "vector"
    transforms_source = False

    def __init__(self, params, *, encoder, source_lang, meta=None, langid=None) -> None:
        params = {lang: v for lang, v in params.items() if canonical(lang) != canonical(source_lang)}
        super().__init__(params, encoder=encoder, source_lang=source_lang, meta=meta, langid=langid)

    def vector(self, lang: str) -> np.ndarray:
        """``V_lang`` (zero for the source language; ``lang`` may be an alias, e.g. ``dt``)."""
        lang = canonical(lang)
        if lang == self.source_lang:
            return np.zeros(self.dim, dtype=np.float32)
        return self.params[lang]


def derive_source(t: ShiftTransform, new_source: str) -> ShiftTransform:
    """``V_{l|s} = V_l - V_s`` for every language l of ``t`` (and ``V_{src|s} = -V_s`` for the old source)."""
    if not isinstance(t, ShiftTransform):
        raise MlirkitError(f"derive works on shift transforms, not {t.method}")
    new_source = canonical(new_source)
    if new_source == t.source_lang:
        raise MlirkitError(f"the transform's source language is already {new_source!r}")
    if new_source not in t.params:
        raise MlirkitError(f"no vector for {new_source!r} in the transform (known: {', '.join(t.languages)})")
    v_s = t.params[new_source].astype(np.float64)
    params = {lang: (v.astype(np.float64) - v_s).astype(np.float32)
              for lang, v in t.params.items() if lang != new_source}
    params[t.source_lang] = (-v_s).astype(np.float32)
    pairs = t.meta.get("pairs") or {}
    meta: dict[str, Any] = {**t.meta, "source_lang": new_source,
                            "derived_from": {"source_lang": t.source_lang, "sha256": t.sha256,
                                             "formula": "V_{l|s} = V_l - V_s"},
                            "pairs": {lang: min(pairs.get(lang, 0), pairs.get(new_source, 0)) if pairs else None
                                      for lang in params}}
    return ShiftTransform(params, encoder=t.encoder, source_lang=new_source, meta=meta, langid=t.langid)


TRANSFORMS.register("shift", ShiftTransform)
