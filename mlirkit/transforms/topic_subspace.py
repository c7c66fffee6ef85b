"""Topic-robust language vectors: the part of a vector that lies in the corpus's topic subspace removed.

A corpus-fitted vector ``mu_l - mu_src`` (:mod:`mlirkit.transforms.corpus_fit`) is the language offset
plus the difference of the two languages' topic means. Topic varies *within* a language, the language
offset does not, so the within-language scatter of the corpus shows where topic lives. With ``mu_l``
the mean of language ``l``'s documents (untransformed embeddings, every known language, ``L`` of them,
``N`` documents in all), the pooled within-language covariance is::

    S_w = 1 / (N - L) * sum_l sum_{x in l} (x - mu_l) (x - mu_l)^T          (d x d)

with eigenvalues ``s_1 >= ... >= s_d`` and unit eigenvectors ``u_1 ... u_d``. The topic subspace is
spanned by the top ``r`` eigenvectors ``U_r = [u_1 ... u_r]``, and a vector keeps only its part outside
it::

    V_l' = (I - U_r U_r^T) V_l

(applied to corpus-fitted vectors, or inside every round of the mining loop,
:func:`mlirkit.transforms.mining.mined_language_vector`). Measured on the bundled DDTP beds with e5-small
(experiments/notes/language-vectors.md): translation-pair vectors hold about as much of their energy in
the top 10 / 20 directions as a random direction would (3.4 % / 5.5 %), corpus-fitted vectors on the topic-skewed bed
twice as much (7.6 % / 10.7 %), so the projection removes mostly topic.

``rank="auto"`` chooses ``r`` without labels as the number of eigenvalues above the Marchenko-Pastur
upper edge of isotropic noise of the same total variance,
``s_i > (tr S_w / d) * (1 + sqrt(d / (N - L)))^2`` (Marchenko & Pastur 1967; the eigenvalues a sample
covariance of pure noise would not exceed): directions with more within-language variance than noise
can explain. This is the idea of linear discriminant analysis (Fisher 1936) turned around: LDA keeps
directions of large between-class and small within-class variance to *find* the class; here the
language offset is kept only where the within-language (topic) variance is small. The ridge
(shrinkage-LDA) form ``lambda (S_w + lambda I)^-1 V_l`` was measured too and did less well
(experiments/notes/language-vectors.md).

**Skew test** (optional, ``test_level``): whether the vectors carry topic at all. A direction with no
preference for the subspace puts a share ``e = ||U_r^T v||^2 / ||v||^2`` of its energy into it that is
Beta(r/2, (d-r)/2)-distributed, mean ``r/d``, variance ``2 r (d-r) / (d^2 (d+2))``. The projection is
applied only when the mean share over the ``L`` languages' vectors exceeds the one-sided normal
critical value ``r/d + z_{1-level} sqrt(2 r (d-r) / (d^2 (d+2)) / L)``; otherwise the vectors are
returned unchanged (recorded). Measured on e5-small (experiments/notes/language-vectors.md):
translation-pair vectors sit at or below ``r/d``; corpus-fitted vectors far above it when topics differ by
language (0.134 against 0.081 for r = 31) and at it when they do not (0.078 against 0.078; pooled parallel
slice 0.095 against 0.128). With USEM the test fires on every corpus (language offsets in its high-variance
directions): the ``mined`` recipe (:func:`mlirkit.transforms.mining.mined_recipe`) says when to project.

Memory: the ``d x d`` covariance (float64) and one chunk of rows at a time.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import is_unknown
from mlirkit.base.vectors import check_finite
from mlirkit.base.option_names import option

__all__ = ["AUTO", "TopicSubspace", "marchenko_pastur_rank", "skew_test", "topic_subspace",
           "within_language_covariance"]

logger = logging.getLogger(__name__)

AUTO = "auto"


@dataclass
class TopicSubspace:
    """The top ``rank`` eigenvectors ``basis`` (d, rank) of the pooled within-language covariance, with
    its eigenvalues (descending), how the rank was chosen and the noise edge of the auto rule."""

    basis: np.ndarray
    eigenvalues: np.ndarray
    rank: int
    rule: str
    edge: float
    documents: int
    languages: int

    def project_out(self, v: np.ndarray) -> np.ndarray:
        """``(I - U_r U_r^T) v`` for a vector (d,) or rows (n, d), in float64."""
        v = np.asarray(v, dtype=np.float64)
        return v - (v @ self.basis) @ self.basis.T

    def energy_in(self, v: np.ndarray) -> float:
        """Share of ``||v||^2`` inside the subspace, ``||U_r^T v||^2 / ||v||^2``."""
        v = np.asarray(v, dtype=np.float64)
        total = float(v @ v)
        return float(np.sum((self.basis.T @ v) ** 2) / total) if total > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        mean = float(self.eigenvalues.mean()) if len(self.eigenvalues) else 0.0
        return {"formula": "V_l' = (I - U_r U_r^T) V_l, U_r = top-r eigenvectors of the pooled within-language "
                           "covariance of the documents",
                "rank": int(self.rank), "rule": self.rule, "noise_edge": round(float(self.edge), 8),
                "documents": int(self.documents), "languages": int(self.languages),
                "top_eigenvalues_over_mean": [round(float(s) / mean, 4) for s in self.eigenvalues[:max(self.rank, 1) + 5]]
                if mean > 0 else []}


def within_language_covariance(embs: np.ndarray, langs: Sequence[str | None], *,
                               chunk_rows: int = 65536) -> tuple[np.ndarray, int, int]:
    """``(S_w (d, d) float64, N, L)``: the pooled within-language covariance (module docstring) over the
    rows of known language, streamed in chunks; ``N`` rows and ``L`` languages were used."""
    from mlirkit.transforms.corpus_fit import language_means

    means, counts = language_means(embs, langs, chunk_rows=chunk_rows)
    n, n_langs = int(sum(counts.values())), len(means)
    if n - n_langs < 1:
        raise MlirkitError(f"{n} documents in {n_langs} languages: too few to estimate a within-language covariance")
    lang_a = np.asarray([("" if is_unknown(l) else str(l)) for l in langs], dtype=object)
    d = int(embs.shape[1])
    scatter = np.zeros((d, d), dtype=np.float64)
    order = sorted(means)
    stacked = np.stack([means[l] for l in order])  # (L, d)
    code_of = {l: i for i, l in enumerate(order)}
    for a in range(0, embs.shape[0], chunk_rows):
        block = np.asarray(embs[a:a + chunk_rows], dtype=np.float64)
        check_finite("embeddings", block)
        known = np.flatnonzero(lang_a[a:a + chunk_rows] != "")
        if not len(known):
            continue
        codes = np.fromiter((code_of[l] for l in lang_a[a:a + chunk_rows][known]), dtype=np.intp, count=len(known))
        centred = block[known] - stacked[codes]  # (m, d)
        scatter += centred.T @ centred
    return scatter / (n - n_langs), n, n_langs


def marchenko_pastur_rank(eigenvalues: np.ndarray, n: int, d: int) -> tuple[int, float]:
    """``(rank, edge)``: the number of eigenvalues above ``mean(eigenvalues) * (1 + sqrt(d / n))^2``."""
    if n < 1 or d < 1:
        raise MlirkitError(f"need n >= 1 and d >= 1, got n={n}, d={d}")
    s = np.asarray(eigenvalues, dtype=np.float64)
    edge = float(s.mean()) * (1.0 + np.sqrt(d / n)) ** 2
    return int(np.sum(s > edge)), edge


def topic_subspace(embs: np.ndarray, langs: Sequence[str | None], rank: int | str = AUTO) -> TopicSubspace:
    """The topic subspace of documents ``embs`` (n, d) with languages ``langs``: ``rank`` top eigenvectors of
    the pooled within-language covariance, or ``"auto"`` (Marchenko-Pastur edge; module docstring)."""
    cov, n, n_langs = within_language_covariance(embs, langs)
    d = cov.shape[0]
    s, u = np.linalg.eigh(cov)
    s, u = s[::-1].clip(min=0.0), u[:, ::-1]
    auto_rank, edge = marchenko_pastur_rank(s, n - n_langs, d)
    if isinstance(rank, str):
        if rank != AUTO:
            raise MlirkitError(f"topic rank must be a whole number >= 0 or {AUTO!r}, got {rank!r}")
        r, rule = auto_rank, "marchenko-pastur"
    else:
        r, rule = int(rank), "given"
        if not 0 <= r < d:
            raise MlirkitError(f"topic rank ({option('rank', flag='--topic-rank')}) must be in [0, {d - 1}] (the embedding has {d} "
                               f"dimensions), got {rank}")
    logger.info("topic subspace: rank %d (%s; Marchenko-Pastur rank %d) from %d documents in %d languages",
                r, rule, auto_rank, n, n_langs)
    return TopicSubspace(np.ascontiguousarray(u[:, :r]), s, r, rule, edge, n, n_langs)


def skew_test(subspace: TopicSubspace, vectors: Sequence[np.ndarray], level: float) -> dict[str, Any]:
    """The skew test of the module docstring: ``{"mean_share", "null_mean", "critical", "level", "skewed"}``."""
    from statistics import NormalDist

    if not 0.0 < float(level) < 1.0:
        raise MlirkitError(f"the skew-test level must be in (0, 1), got {level}")
    if not len(vectors):
        raise MlirkitError("the skew test needs at least one vector")
    d, r = int(subspace.basis.shape[0]), int(subspace.rank)
    shares = [subspace.energy_in(v) for v in vectors]
    null_mean = r / d
    sd = float(np.sqrt(2.0 * r * (d - r) / (d * d * (d + 2.0)) / len(shares)))
    critical = null_mean + NormalDist().inv_cdf(1.0 - float(level)) * sd
    mean_share = float(np.mean(shares))
    return {"mean_share": round(mean_share, 6), "null_mean": round(null_mean, 6), "critical": round(critical, 6),
            "level": float(level), "vectors": len(shares), "skewed": bool(r > 0 and mean_share > critical)}
