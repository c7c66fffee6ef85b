"""Language centering (Libovicky et al., 2020, "On the Language Neutrality of Pre-trained Multilingual
Representations"): subtract the language's mean embedding, ``x' = x - alpha * mu_l`` (alpha = 1 is the
published method), ``mu_l`` the mean of language l's embeddings over the passages fitted on (the parallel
passages: with ``groups``, only those of ids with a source-language row).
Applied to documents by document language and to queries by query language (the source language too).

Fitting streams ``S_l = sum_i f(D_i^l)`` and ``N_l`` in float64; ``mu_l = S_l / N_l``.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from mlirkit.transforms.transform import OffsetTransform

__all__ = ["CenteringTransform", "LanguageSums", "rows_by_language"]


def rows_by_language(x: np.ndarray, langs: np.ndarray):
    """``(lang, x[rows of lang] as float64)`` for every known language of the block (``""``: unknown, skipped)."""
    x = np.asarray(x, dtype=np.float64)
    for lang in np.unique(langs):
        if lang:
            yield str(lang), x[langs == lang]


class LanguageSums:
    """Running float64 sums and counts per language (rows of unknown language, ``""``, ignored)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.sums: dict[str, np.ndarray] = {}
        self.counts: Counter[str] = Counter()

    def update(self, x: np.ndarray, langs: np.ndarray, groups: Any = None) -> None:
        for lang, xl in rows_by_language(x, langs):
            self.sums[lang] = self.sums.get(lang, 0.0) + xl.sum(axis=0)
            self.counts[lang] += len(xl)

    def means(self) -> dict[str, np.ndarray]:
        return {lang: (s / self.counts[lang]).astype(np.float32) for lang, s in self.sums.items()}


class CenteringTransform(OffsetTransform):
    """``params_[lang]``: ``mu_lang`` (d,)."""

    method = "centering"
    sides = ("doc", "query")
    tensor_prefix = "mean"
    transforms_source = True

    def _new_stats(self, dim: int) -> LanguageSums:
        return LanguageSums(dim)

    def _finalize(self, stats: LanguageSums) -> dict[str, np.ndarray]:
        self.fit_info_ = {"pairs": dict(stats.counts)}
        return stats.means()
