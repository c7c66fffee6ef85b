"""LIR, language information removal (Yang et al., 2021, "A Simple and Effective Method To Eliminate the
Self Language Bias in Multilingual Representations"): per language l, the top-r right-singular vectors
``c_1..c_r`` of the (uncentred) matrix of l's embeddings; ``x' = x - alpha * sum_{i<=r} (c_i . x) c_i``
(alpha = 1 is the published method; r = 1 for retrieval). Documents and queries, the source language too.

The right-singular vectors of X are the eigenvectors of ``X^T X``, so fitting streams a float64 Gram
matrix per language and needs no stored embeddings.
"""
from __future__ import annotations

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.transform import TRANSFORMS, LanguageTransform


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

    sub_rows = 8192

    def _tables(self, alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._param_stack(), alphas.astype(np.float32)  # (L+1, r, d), (L+1,)

    def _apply_codes(self, block: np.ndarray, codes: np.ndarray, tables, single: int | None) -> None:
        # x' = x - alpha * sum_i (c_i . x) c_i ; each dot product is a per-row reduction (no BLAS), so a
        # row's result does not depend on the block it arrives in
        comps, alphas = tables
        for a in range(0, len(codes), self.sub_rows):
            b = min(a + self.sub_rows, len(codes))
            x = block[a:b]  # (n, d) view
            sel = single if single is not None else codes[a:b]
            if single is not None and alphas[single] == 0:
                return
            proj = np.zeros(x.shape, dtype=np.float32)  # (n, d)
            for i in range(comps.shape[1]):
                c = comps[sel, i]  # (d,) or (n, d)
                coef = np.multiply(x, c).sum(axis=1, dtype=np.float32)  # (n,)
                proj += coef[:, None] * c  # (n, d)
            if single is not None:
                proj *= alphas[single]
            else:
                row_alpha = alphas[sel]  # (n,); 0 for rows left unchanged
                proj *= row_alpha[:, None]
                proj[row_alpha == 0] = 0.0  # +0.0, so those rows stay bit-identical (also -0.0 entries)
            x -= proj


TRANSFORMS.register("lir", LIRTransform)
