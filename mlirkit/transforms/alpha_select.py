"""Choosing a transform's alpha without relevance labels, from the index's document embeddings alone.

**kNN language mixing** (``criterion="knn"``, the default). Source-language documents stand in for
queries (as queries, so a transform's query side is applied to them; SHIFT leaves them unchanged). For
each alpha of a grid, documents are transformed and L2-normalised, and the ``k`` nearest documents of
each probe (itself excluded) are found by cosine. The criterion is the *excess same-language share*

    gap(alpha) = obs_src(alpha) - (n_src - 1) / (N - 1)

with ``obs_src`` the share of source-language documents among all those neighbours and the second term
the share expected if language played no part (the corpus's share; the label-free analogue of the
same-language share of the top-k). Too little correction leaves the other languages far from the
source-language texts (large gap); too much pushes them past and away again, so the gap is smallest
near the alpha that aligns the languages; on a parallel corpus it can go below 0 (translations are the
nearest neighbours). The global alpha minimises ``gap``; the per-language alpha of ``l`` minimises the
same gap on the two-language sub-corpus of the source-language and the language-``l`` documents (only
``l``'s documents move, so each language is chosen on its own). Ties go to the smaller alpha.

**Centroid distance** (``criterion="centroid"``): ``sum_l n_l/N * || c_l(alpha) - c_src(alpha) ||`` with
``c_l`` the mean of language l's transformed, normalised documents. For corpus-fitted vectors at
alpha 1 the unnormalised means coincide by construction, so this criterion says little about them;
it is reported for pair-fitted vectors.

Neither criterion knows whether topics differ by language: on a corpus whose languages cover different
subjects, equal mixing is not the ideal, and the chosen alpha over-corrects (measured in docs/shift.md).
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.vectors import l2_normalize
from mlirkit.base.langs import is_unknown
from mlirkit.transforms.alpha import ALPHA_MAX, ALPHA_MIN
from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)

CRITERIA = ("knn", "centroid")
DEFAULT_GRID = tuple(round(0.1 * i, 1) for i in range(0, 21))  # 0.0 ... 2.0
DEFAULT_K = 20
DEFAULT_MAX_PROBES = 2000


@dataclass
class AlphaSelection:
    """The chosen alphas and the curve they were chosen from."""

    criterion: str
    alpha: float
    per_language: dict[str, float]
    curve: dict[float, float]
    per_language_curve: dict[str, dict[float, float]] = field(default_factory=dict)
    expected_share: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def alpha_spec(self) -> dict[str, float]:
        """Per-language alphas in the ``--alpha`` dict form (``"*"`` = the global alpha)."""
        return {"*": self.alpha, **self.per_language}

    def as_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "alpha": self.alpha, "per_language": self.per_language,
                "alpha_arg": " ".join([f"{self.alpha:g}", *(f"{l}={a:g}" for l, a in self.per_language.items())]),
                "curve": {f"{a:g}": round(v, 6) for a, v in self.curve.items()},
                "per_language_curve": {l: {f"{a:g}": round(v, 6) for a, v in c.items()}
                                       for l, c in self.per_language_curve.items()},
                "expected_share": {l: round(v, 6) for l, v in self.expected_share.items()}, **self.info}


def _argmin(curve: Mapping[float, float]) -> float:
    best = min(curve.values())
    return min(a for a, v in curve.items() if v <= best + 1e-12)


def _neighbour_shares(probes: np.ndarray, docs: np.ndarray, self_rows: np.ndarray, codes: np.ndarray,
                      n_codes: int, k: int, chunk_rows: int) -> np.ndarray:
    """Share of each code among the ``k`` nearest ``docs`` of every probe (probe ``i`` is ``docs[self_rows[i]]``,
    excluded), pooled over the probes."""
    hits = np.zeros(n_codes, dtype=np.int64)
    for a in range(0, len(probes), chunk_rows):
        scores = probes[a:a + chunk_rows] @ docs.T  # (p, n)
        scores[np.arange(scores.shape[0]), self_rows[a:a + chunk_rows]] = -np.inf  # not itself
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        hits += np.bincount(codes[top].ravel(), minlength=n_codes)
    return hits / hits.sum()



def checked_grid(grid: Sequence[float]) -> list[float]:
    """The sorted, de-duplicated alpha grid; empty or outside [ALPHA_MIN, ALPHA_MAX] is an error."""
    out = sorted({float(a) for a in grid})
    if not out or any(not (ALPHA_MIN <= a <= ALPHA_MAX) for a in out):
        raise MlirkitError(f"alpha grid must be non-empty and inside [{ALPHA_MIN:g}, {ALPHA_MAX:g}]")
    return out


def known_rows(embs: np.ndarray, langs: Sequence[str | None]) -> tuple[np.ndarray, list[str]]:
    """``(float32 embeddings, languages)`` of the rows of known language (the label-free criteria ignore the rest)."""
    embs = np.asarray(embs, dtype=np.float32)
    if embs.ndim != 2 or len(langs) != embs.shape[0]:
        raise MlirkitError(f"need (n, d) embeddings with n languages, got {embs.shape} and {len(langs)}")
    keep = np.array([not is_unknown(l) for l in langs], dtype=bool)
    return embs[keep], [str(l) for l, kp in zip(langs, keep) if kp]

def select_alpha(embs: np.ndarray, langs: Sequence[str | None], transform: LanguageTransform, *,
                 criterion: str = "knn", grid: Sequence[float] = DEFAULT_GRID, k: int = DEFAULT_K,
                 max_probes: int = DEFAULT_MAX_PROBES, seed: int = 0, per_language: bool = True,
                 chunk_rows: int = 1024) -> AlphaSelection:
    """Choose alpha for ``transform`` on documents ``embs`` (n, d, untransformed) with languages ``langs``.

    ``max_probes`` source-language documents (a seeded sample when there are more) are the probes of
    the kNN criterion; see the module docstring for both criteria.
    """
    if criterion not in CRITERIA:
        raise MlirkitError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    grid = checked_grid(grid)
    embs, lang_list = known_rows(embs, langs)
    counts = Counter(lang_list)
    src = transform.source_lang
    if criterion == "knn" and transform.transforms_source and transform.touches("doc") and not transform.touches("query"):
        logger.warning("%s moves the source-language documents but not the queries: the kNN criterion keeps "
                       "rewarding pushing them away from source-language probes and over-corrects (measured in "
                       "docs/shift.md); prefer a dev-split alpha or alpha 1 for it", transform.method)
    n = len(lang_list)
    if counts.get(src, 0) < 2:
        raise MlirkitError(f"the label-free criterion needs at least 2 source-language ({src}) documents, "
                           f"found {counts.get(src, 0)}")
    if len(counts) < 2:
        raise MlirkitError("the label-free criterion needs documents of at least two languages")
    if not 1 <= k < n:
        raise MlirkitError(f"k={k} must be in [1, {n - 1}]")
    languages = sorted(counts)
    lang_codes = np.array([languages.index(l) for l in lang_list], dtype=np.intp)
    expected = {l: (counts[l] - (l == src)) / (n - 1) for l in languages}
    src_rows = np.flatnonzero(lang_codes == languages.index(src))
    if len(src_rows) > max_probes:
        src_rows = np.sort(np.random.default_rng(seed).choice(src_rows, size=max_probes, replace=False))
    probe_raw = embs[src_rows]
    # per-language alphas for the languages the transform moves relative to the source-language probes
    # (a transform that also moves the source language keeps the global alpha there)
    shifted_langs = [l for l in languages if l in transform.params and l != src]

    curve: dict[float, float] = {}
    lang_curve: dict[str, dict[float, float]] = {l: {} for l in shifted_langs}
    for alpha in grid:
        docs = embs.copy()
        if transform.touches("doc"):
            docs = transform.apply(docs, lang_list, "doc", alpha, out=docs)
        docs = l2_normalize(docs)
        if criterion == "centroid":
            centroids = {l: docs[lang_codes == i].mean(axis=0) for i, l in enumerate(languages)}
            dist = {l: float(np.linalg.norm(centroids[l] - centroids[src])) for l in languages}
            curve[alpha] = float(sum(counts[l] / n * dist[l] for l in languages))
            for l in shifted_langs:
                lang_curve[l][alpha] = dist[l]
            continue
        probes = probe_raw.copy()
        if transform.touches("query"):
            probes = transform.apply(probes, [src] * len(probes), "query", alpha, out=probes)
        probes = l2_normalize(probes)
        obs = _neighbour_shares(probes, docs, src_rows, lang_codes, len(languages), k, chunk_rows)
        src_code = languages.index(src)
        curve[alpha] = float(obs[src_code] - expected[src])
        if per_language:
            for l in shifted_langs:
                code = languages.index(l)
                rows = np.flatnonzero((lang_codes == src_code) | (lang_codes == code))
                sub_k = min(k, len(rows) - 1)
                position = np.searchsorted(rows, src_rows)  # probes are source rows, all inside ``rows``
                two = (lang_codes[rows] == src_code).astype(np.intp)
                share = _neighbour_shares(probes, docs[rows], position, two, 2, sub_k, chunk_rows)[1]
                lang_curve[l][alpha] = float(share - (counts[src] - 1) / (counts[src] + counts[l] - 1))
    chosen = _argmin(curve)
    per_lang = {l: _argmin(c) for l, c in lang_curve.items()} if per_language else {}
    info = {"k": k, "probes": int(len(src_rows)), "documents": n, "grid": grid,
            "method": transform.method, "source_lang": src}
    logger.info("label-free alpha (%s): %g; per language %s", criterion, chosen, per_lang)
    return AlphaSelection(criterion, chosen, per_lang, curve, lang_curve if per_language else {}, expected, info)
