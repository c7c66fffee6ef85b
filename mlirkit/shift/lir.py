"""LIR, language information removal (Yang et al., 2021, "A Simple and Effective Method To Eliminate the
Self Language Bias in Multilingual Representations"): per language l, the top-r right-singular vectors
``c_1..c_r`` of the (uncentred) matrix of l's embeddings; ``x' = x - alpha * sum_{i<=r} (c_i . x) c_i``
(alpha = 1 is the published method; r = 1 for retrieval). Documents and queries, the source language too.

The right-singular vectors of X are the eigenvectors of ``X^T X``, so fitting streams a float64 Gram
matrix per language and needs no stored embeddings.
"""
from __future__ import annotations

import numpy as np

from mlirkit.errors import MlirkitError
from mlirkit.shift.transform import TRANSFORMS, LanguageTransform


class LIRTransform(LanguageTransform):
    method = "lir"
    sides = ("doc", "query")
    tensor_prefix = "components"
    transforms_source = True

    def _check_param(self, lang: str, value: np.ndarray) -> None:
        if value.ndim != 2 or value.shape[0] < 1:
            raise MlirkitError(f"lir components of {lang!r} must be a (rank, dim) matrix, got shape {value.shape}")

    @property
    def rank(self) -> int:
        return next(iter(self.params.values())).shape[0]

    def _apply_lang(self, block: np.ndarray, lang: str, alpha: float) -> None:
        # x' = x - alpha * sum_i (c_i . x) c_i ; the dot product is a per-row reduction (no BLAS), so the
        # result for a row is the same whatever the block it arrives in
        comps = self.params[lang]  # (r, d)
        proj = np.zeros(block.shape, dtype=np.float32)  # (n, d)
        for c in comps:
            coef = np.multiply(block, c).sum(axis=1, dtype=np.float32)  # (n,)
            proj += coef[:, None] * c  # (n, d)
        if alpha != 1.0:
            proj *= np.float32(alpha)
        block -= proj


TRANSFORMS.register("lir", LIRTransform)
