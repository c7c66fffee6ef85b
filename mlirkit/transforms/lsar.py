"""LSAR, low-rank subspaces for language-agnostic representations (Xie, Zhao, Yu & Li, EMNLP 2022,
"Discovering Low-rank Subspaces for Language-agnostic Multilingual Representations", arXiv 2401.05792):
a rank-r language subspace found from the languages' mean embeddings, without parallel text, projected out
of every embedding: ``x' = x - alpha * U_r U_r^T x`` for documents and queries alike, whatever their language.

The subspace, as the authors' ``build_aligner("lsar+r")`` computes it (``src/alignment``: ``lsar`` then
``lir``), from ``W = [mu_1 ... mu_D]`` (d x D), the mean embeddings of the D languages fitted on:

1. ``w_c = W 1 / D``; the top-r SVD of the centred ``W - w_c 1^T = U S V^T`` gives ``W_s = U_r``,
   ``Gamma = V_r S_r``, and the best rank-r fit ``B = w_c 1^T + W_s Gamma^T``;
2. ``w_c' = (B^+)^T 1 / ||(B^+)^T 1||^2`` (the point of the columns' affine hull closest to the origin);
3. ``P = B - w_c' 1^T``, and ``U_r`` = its top-r left-singular vectors (unit columns);
4. ``x' = x - U_r U_r^T x`` (the authors' ``lir(embed, U, r)``; ``alpha`` scales it here, 1 = theirs).

Their published runs on LAReQA use ``r = D``: ``lsar+11`` on XQuAD-R (11 languages), ``lsar+7`` on MLQA-R
(7); ``rank=None`` (the default) is that setting, the number of languages fitted on. The columns of ``P``
are orthogonal to ``w_c'`` and span at most ``D - 1`` dimensions, so at ``r = D`` the last singular value is
zero up to rounding and its left-singular vector is whatever LAPACK returns for the null space (a direction
of the rounding noise): directions whose singular value is below ``NULL_TOL`` times the largest are not
removed (recorded in the metadata: ``subspace_rank`` r, ``directions`` removed, ``singular_values``). Everything up to there is the authors' computation, in
float64, on the float64 language means; the statistics are only the per-language sums and counts
(:class:`~mlirkit.transforms.centering.LanguageSums`), so fitting streams. mlirkit L2-normalises after the
projection, as after every transform (the authors score the projected vectors by inner product).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.centering import LanguageSums
from mlirkit.transforms.transform import ProjectionTransform

__all__ = ["LSARTransform", "NULL_TOL", "lsar_subspace"]

#: singular values of ``P`` below this fraction of the largest are null directions (not removed)
NULL_TOL = 1e-10


def lsar_subspace(means: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """``(U_r (d, r) float64 with unit columns, singular values of P)`` from the language means ``means``
    (D, d), steps 1-3 of the module docstring (the authors' ``lsar(W, k, returns_all=True)``)."""
    w = np.asarray(means, dtype=np.float64).T  # (d, D)
    d, n_langs = w.shape
    ones = np.ones(n_langs)
    wc = w @ ones / n_langs
    u, s, vh = np.linalg.svd(w - wc.reshape(-1, 1) @ np.ones((1, n_langs)))
    ws, gamma = u[:, :rank], vh.T[:, :rank] @ np.diag(s[:rank])
    best_fit = wc.reshape(-1, 1) @ np.ones((1, n_langs)) + ws @ gamma.T
    wc_new = np.linalg.pinv(best_fit).T @ ones
    wc_new /= (wc_new ** 2).sum()
    prod = best_fit - wc_new.reshape(-1, 1) @ np.ones((1, n_langs))
    u, s, _ = np.linalg.svd(prod)
    basis = u[:, :rank]
    return basis / np.linalg.norm(basis, axis=0, keepdims=True), s


class LSARTransform(ProjectionTransform):
    """``left_`` = ``U_r`` (d, r), ``right_`` = ``U_r^T``; ``rank``: r, None = the number of languages."""

    method = "lsar"
    sides = ("doc", "query")
    tensor_prefix = "lsar"
    transforms_source = True

    def __init__(self, source_lang: str = "en", rank: int | None = None) -> None:
        self.source_lang = source_lang
        self.rank = rank

    def check_params(self) -> None:
        super().check_params()
        rank = self.rank
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or int(rank) < 1):
            raise MlirkitError(f"LSAR rank must be a whole number >= 1 or None (the number of languages), got {rank!r}")

    @classmethod
    def recipe_from_meta(cls, meta: Any) -> dict[str, Any]:
        return {"rank": meta.get("rank")}

    def _new_stats(self, dim: int) -> LanguageSums:
        return LanguageSums(dim)

    def _finalize(self, stats: LanguageSums) -> dict[str, np.ndarray]:
        langs = sorted(stats.sums)
        if len(langs) < 2:
            raise MlirkitError(f"LSAR needs the documents of at least two languages, got {', '.join(langs) or 'none'}")
        rank = len(langs) if self.rank is None else int(self.rank)
        if rank > len(langs):
            raise MlirkitError(f"LSAR rank {rank} is larger than the number of languages fitted on ({len(langs)}: "
                               f"{', '.join(langs)}); the authors' lsar+r needs r <= the number of languages")
        means = np.stack([stats.sums[la] / stats.counts[la] for la in langs])  # (D, d) float64
        basis, s = lsar_subspace(means, rank)
        kept = int(np.sum(s[:rank] > NULL_TOL * s[0])) if s[0] > 0 else 0
        if kept == 0:
            raise MlirkitError("LSAR: the language means coincide, no language subspace to remove")
        basis = basis[:, :kept]
        self.languages_ = langs
        self.fit_info_ = {"pairs": None, "docs": {la: int(stats.counts[la]) for la in langs},
                          "rank": None if self.rank is None else int(self.rank),
                          "subspace_rank": rank, "directions": kept, "singular_values": [float(v) for v in s[:rank]],
                          "encoded_as": "documents"}
        return {"left": basis, "right": basis.T}
