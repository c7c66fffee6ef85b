"""Language centering (Libovicky et al., 2020, "On the Language Neutrality of Pre-trained Multilingual
Representations"): subtract the language's mean embedding, ``x' = x - alpha * mu_l`` (alpha = 1 is the
published method), ``mu_l`` the mean of language l's embeddings over the parallel passages.
Applied to documents by document language and to queries by query language (the source language too).
"""
from __future__ import annotations

import numpy as np

from mlirkit.shift.transform import TRANSFORMS, LanguageTransform


class CenteringTransform(LanguageTransform):
    method = "centering"
    sides = ("doc", "query")
    tensor_prefix = "mean"
    transforms_source = True

    def _apply_lang(self, block: np.ndarray, lang: str, alpha: float) -> None:
        # x' = x - alpha * mu_l
        delta = (np.float64(alpha) * self.params[lang].astype(np.float64)).astype(np.float32)  # (d,)
        block -= delta


TRANSFORMS.register("centering", CenteringTransform)
