"""LIR, language information removal (Yang et al., 2021, "A Simple and Effective Method To Eliminate the
Self Language Bias in Multilingual Representations"): per language l, the top-r right-singular vectors
``c_1..c_r`` of the (uncentred) matrix of l's embeddings; ``x' = x - alpha * sum_{i<=r} (c_i . x) c_i``
(alpha = 1 is the published method; r = 1 for retrieval). Documents and queries, the source language too.

The right-singular vectors of X are the eigenvectors of ``X^T X`` (``X^T X = V S^2 V^T``), so fitting
streams a float64 Gram matrix ``G_l = sum_i f(D_i^l) f(D_i^l)^T`` (d x d) per language and needs no stored
embeddings.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.centering import rows_by_language
from mlirkit.transforms.transform import PerLanguageTransform

__all__ = ["GramMatrices", "LIRTransform"]

logger = logging.getLogger(__name__)


class GramMatrices:
    """Running float64 ``X_l^T X_l`` and counts per language."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.grams: dict[str, np.ndarray] = {}
        self.counts: Counter[str] = Counter()

    def update(self, x: np.ndarray, langs: np.ndarray, groups: Any = None) -> None:
        for lang, xl in rows_by_language(x, langs):  # xl: (n_l, d)
            if lang not in self.grams:
                self.grams[lang] = np.zeros((self.dim, self.dim))
            self.grams[lang] += xl.T @ xl  # (d, d)
            self.counts[lang] += len(xl)


class LIRTransform(PerLanguageTransform):
    """``params_[lang]``: the components ``(rank, d)``; ``rank``: how many are removed (``rank_``: as fitted or
    loaded)."""

    method = "lir"
    sides = ("doc", "query")
    tensor_prefix = "components"
    transforms_source = True
    sub_rows = 8192

    def __init__(self, source_lang: str = "en", rank: int = 1) -> None:
        self.source_lang = source_lang
        self.rank = rank

    def check_params(self) -> None:
        super().check_params()
        rank = self.rank
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or int(rank) < 1:
            raise MlirkitError(f"LIR rank must be a whole number >= 1, got {rank!r}")

    @classmethod
    def recipe_from_meta(cls, meta: Any) -> dict[str, Any]:
        rank = meta.get("rank")
        return {"rank": rank} if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 1 else {}

    def _check_param(self, lang: str, value: np.ndarray) -> None:
        if value.ndim != 2 or value.shape[0] < 1:
            raise MlirkitError(f"lir components of {lang!r} must be a (rank, dim) matrix, got shape {value.shape}")

    def _restore(self, tensors: dict[str, np.ndarray]) -> None:
        super()._restore(tensors)
        ranks = {v.shape[0] for v in self.params_.values()}
        if len(ranks) != 1:
            raise MlirkitError(f"lir components of different ranks {sorted(ranks)}")
        self.rank_: int = ranks.pop()

    def _new_stats(self, dim: int) -> GramMatrices:
        if int(self.rank) > dim:
            raise MlirkitError(f"LIR rank {self.rank} is outside [1, {dim}]")
        return GramMatrices(dim)

    def _finalize(self, stats: GramMatrices) -> dict[str, np.ndarray]:
        out = {}
        rank = int(self.rank)
        for lang, gram in stats.grams.items():
            if stats.counts[lang] < rank:
                logger.warning("LIR: %d passages of %r for rank %d", stats.counts[lang], lang, rank)
            _, vecs = np.linalg.eigh(gram)  # ascending eigenvalues
            comps = vecs[:, ::-1][:, :rank].T  # (r, d): top-r right-singular vectors
            signs = np.sign(comps[np.arange(rank), np.abs(comps).argmax(axis=1)])  # deterministic sign
            out[lang] = (comps * signs[:, None]).astype(np.float32)
        self.fit_info_ = {"pairs": dict(stats.counts), "rank": rank}
        return out

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
