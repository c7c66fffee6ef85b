"""LEACE, least-squares concept erasure of the language (Belrose, Schneider-Joseph, Ravfogel, Cotterell, Raff &
Biderman, NeurIPS 2023, "LEACE: Perfect linear concept erasure in closed form"; applied to the language of
document embeddings by Fan et al., EMNLP 2025, "The Medium Is Not the Message: Deconfounding Document
Embeddings via Linear Concept Erasure"), through EleutherAI's ``concept-erasure`` package (``LeaceFitter``,
``LeaceEraser``, its defaults).

With ``z`` the one-hot language of a document, ``Sigma_xx`` the (shrunk) covariance of the embeddings and
``Sigma_xz`` their cross-covariance with ``z``, LEACE is the affine map
``r(x) = x - W^+ P_{W Sigma_xz} W (x - mu)`` (``W = Sigma_xx^{-1/2}``, ``P`` the orthogonal projection onto the
column space of ``W Sigma_xz``): the least change of ``x`` (in the whitened least-squares sense) after which no
linear classifier predicts ``z`` better than a constant, on the data fitted on. The package stores it as
``x - ((x - mu) R^T) L^T`` with ``L`` (d, k) and ``R`` (k, d) (``proj_left``, ``proj_right``); mlirkit keeps
those (the directions with a non-zero weight: ``left_``, ``right_``, ``bias_``) and scales the correction by
``alpha`` (1 = LEACE). Fitted on document embeddings with their language labels; applied to documents and
queries alike, whatever their language (the map does not depend on it).

Fitting streams the sufficient statistics in float64 (count, mean and centred scatter combined block by
block, Chan et al. 1979; per-language sums), and the package's ``LeaceFitter`` computes the eraser from them
(its ``n``, ``mean_x``, ``mean_z``, ``sigma_xx_``, ``sigma_xz_``: what its own ``update`` accumulates).

Erasure is linear: after L2 normalisation a probe can again find some of the language (norms differ by
language); measured in docs/design.md, "LEACE".
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.centering import LanguageSums
from mlirkit.transforms.transform import ProjectionTransform

__all__ = ["CovarianceStats", "LEACETransform", "ZERO_TOL", "leace_fitter"]

#: columns of ``proj_left`` (and rows of ``proj_right``) whose weight is below this fraction of the largest are
#: dropped (the package's trace-constrained eraser is stored as a full d x d factorisation, mostly zeros)
ZERO_TOL = 1e-9


class CovarianceStats:
    """Running float64 count, mean and centred scatter of every row, and per-language sums and counts."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.n = 0
        self.mean = np.zeros(dim)
        self.scatter = np.zeros((dim, dim))
        self.languages = LanguageSums(dim)

    def update(self, x: np.ndarray, langs: np.ndarray, groups: Any = None) -> None:
        known = langs != ""
        x = np.asarray(x, dtype=np.float64)[known]
        langs = langs[known]
        if not len(x):
            return
        n_b = len(x)
        mean_b = x.mean(axis=0)
        centred = x - mean_b
        delta = mean_b - self.mean
        total = self.n + n_b
        self.scatter += centred.T @ centred + np.outer(delta, delta) * (self.n * n_b / total)
        self.mean += delta * (n_b / total)
        self.n = total
        self.languages.update(x, langs)

    @property
    def counts(self) -> Counter[str]:
        return self.languages.counts


def leace_fitter(stats: CovarianceStats, langs: list[str]) -> Any:
    """The package's ``LeaceFitter`` (float64, its defaults) holding the statistics of ``stats`` for the
    one-hot classes ``langs``."""
    import torch
    from concept_erasure import LeaceFitter

    d, k = len(stats.mean), len(langs)
    fitter = LeaceFitter(d, k, dtype=torch.float64)
    counts = np.array([stats.counts[la] for la in langs], dtype=np.float64)
    sums = np.stack([stats.languages.sums[la] for la in langs], axis=1)  # (d, k)
    fitter.n = torch.tensor(stats.n)
    fitter.mean_x = torch.from_numpy(stats.mean.copy())
    fitter.mean_z = torch.from_numpy(counts / stats.n)
    fitter.sigma_xx_ = torch.from_numpy(stats.scatter.copy())
    # sum_i (x_i - mean_x)(z_i - mean_z)^T, column l: S_l - N_l mean_x
    fitter.sigma_xz_ = torch.from_numpy(sums - np.outer(stats.mean, counts))
    return fitter


class LEACETransform(ProjectionTransform):
    """``left_`` (d, k), ``right_`` (k, d), ``bias_`` (d,): the package's ``proj_left``, ``proj_right``, ``bias``."""

    method = "leace"
    sides = ("doc", "query")
    tensor_prefix = "leace"
    transforms_source = True

    def _new_stats(self, dim: int) -> CovarianceStats:
        return CovarianceStats(dim)

    def _finalize(self, stats: CovarianceStats) -> dict[str, np.ndarray]:
        langs = sorted(stats.counts)
        if len(langs) < 2:
            raise MlirkitError(f"LEACE needs the documents of at least two languages, got {', '.join(langs) or 'none'}")
        if stats.n < 3:
            raise MlirkitError(f"LEACE needs at least 3 documents, got {stats.n}")
        eraser = leace_fitter(stats, langs).eraser
        left = eraser.proj_left.double().numpy()
        right = eraser.proj_right.double().numpy()
        weight = np.linalg.norm(left, axis=0) * np.linalg.norm(right, axis=1)
        keep = weight > ZERO_TOL * max(float(weight.max()), 1e-300)
        self.languages_ = langs
        self.fit_info_ = {"pairs": None, "docs": {la: int(stats.counts[la]) for la in langs},
                          "directions": int(keep.sum()), "encoded_as": "documents",
                          "concept_erasure": {"version": _package_version(), "class": "LeaceFitter",
                                              "options": "defaults (method leace, affine, constrain_cov_trace, "
                                                         "shrinkage, svd_tol 0.01)", "labels": "one-hot language"}}
        return {"left": left[:, keep], "right": right[keep], "bias": eraser.bias.double().numpy()}


def _package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("concept-erasure")
    except PackageNotFoundError:
        return None
