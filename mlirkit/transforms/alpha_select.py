"""Choosing a transform's alpha without relevance labels, from the index's document embeddings alone.

**kNN language mixing, every language's documents as probes** (``criterion="knn"``, the default). For each
alpha of a grid and each document language ``s``, documents of ``s`` stand in for queries of ``s`` and are
scored as ``mlirkit.search --query-shift`` scores a query of ``s`` (SHIFT: the re-based vectors
``V_{l|s} = V_l - V_s``, i.e. documents ``d - alpha (V_l - V_s)``, then L2-normalised; other methods: the
query side applied to the probes). Among each probe's ``k`` nearest documents (itself excluded) the
*excess own-language share*

    gap_s(alpha) = obs_s(alpha) - (n_s - 1) / (N - 1)

is the share of language-``s`` documents beyond the share expected if language played no part (the corpus's
share; the label-free analogue of the same-language share of the top k), and

    gap(alpha) = mean_s gap_s(alpha)

averages it over the document languages (as a benchmark averages over query languages). Too little
correction leaves each language apart (large gap); the gap falls as languages mix and then flattens: near
its minimum further correction mixes the languages a little more while it displaces each document from its
own translations, which is what retrieval pays for (measured in docs/results.md: the retrieval optimum sits
where the flat part begins, the minimum 0.1-0.4 further). So the chosen alpha is the **start of the
plateau**, the smallest alpha whose gap has come down to within ``tolerance`` of the whole fall:

    alpha* = min { a : gap(a) <= gap_min + tolerance * (gap(a_0) - gap_min) },  a_0 the grid's smallest alpha

with ``tolerance`` = :data:`DEFAULT_TOLERANCE` (0.1; 0 gives the minimum itself).

**Source-language probes** (``criterion="knn-source"``; the earlier rule, kept for comparison): source-language
documents only are the probes, the transform applied by the pivot (no re-basing), the alpha of smallest
gap (``tolerance`` 0). It over-corrects vectors that carry topic or corpus structure (corpus-fitted and
partly corpus-fitted vectors) and it alone offers per-language alphas (``per_language=True``): the same
gap on the two-language sub-corpus of the source language and ``l``. Those are not offered by the CLI:
on XQuAD-R they score below the global alpha (a language whose documents sit near every probe at alpha 0,
a hub, looks best unshifted).

**Centroid distance** (``criterion="centroid"``): ``sum_l n_l/N * || c_l(alpha) - c_src(alpha) ||`` with
``c_l`` the mean of language l's transformed, normalised documents. For corpus-fitted vectors at
alpha 1 the unnormalised means coincide by construction, so this criterion says little about them;
it is reported for pair-fitted vectors.

No criterion knows whether topics differ by language: on a corpus whose languages cover different
subjects, equal mixing is not the ideal (measured in docs/shift.md and docs/results.md).
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
from mlirkit.base.top_k import top_k_columns
from mlirkit.transforms.alpha import ALPHA_MAX, ALPHA_MIN
from mlirkit.transforms.transform import LanguageTransform

__all__ = ["AlphaSelection", "CRITERIA", "DEFAULT_GRID", "DEFAULT_K", "DEFAULT_MAX_PROBES", "DEFAULT_TOLERANCE",
           "checked_grid", "known_rows", "plateau_start", "select_alpha"]

logger = logging.getLogger(__name__)

CRITERIA = ("knn", "knn-source", "centroid")
DEFAULT_GRID = tuple(round(0.1 * i, 1) for i in range(0, 21))  # 0.0 ... 2.0
DEFAULT_K = 20
DEFAULT_MAX_PROBES = 2000
DEFAULT_TOLERANCE = 0.1


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
        out = {"criterion": self.criterion, "alpha": self.alpha,
               "alpha_arg": " ".join([f"{self.alpha:g}", *(f"{l}={a:g}" for l, a in self.per_language.items())]),
               "curve": {f"{a:g}": round(v, 6) for a, v in self.curve.items()},
               "expected_share": {l: round(v, 6) for l, v in self.expected_share.items()}, **self.info}
        if self.per_language:
            out["per_language"] = self.per_language
        if self.per_language_curve:
            out["per_language_curve"] = {l: {f"{a:g}": round(v, 6) for a, v in c.items()}
                                         for l, c in self.per_language_curve.items()}
        return out


def _argmin(curve: Mapping[float, float]) -> float:
    best = min(curve.values())
    return min(a for a, v in curve.items() if v <= best + 1e-12)


def plateau_start(curve: Mapping[float, float], tolerance: float) -> float:
    """The smallest alpha whose value is within ``tolerance`` of the curve's whole fall from its first
    alpha to its minimum: ``min {a : c(a) <= c_min + tolerance * (c(a_0) - c_min)}`` (0: the minimum)."""
    best = min(curve.values())
    threshold = best + tolerance * max(curve[min(curve)] - best, 0.0) + 1e-12
    return min(a for a, v in curve.items() if v <= threshold)


def _neighbour_shares(probes: np.ndarray, docs: np.ndarray, self_rows: np.ndarray, codes: np.ndarray,
                      n_codes: int, k: int, chunk_rows: int) -> np.ndarray:
    """Share of each code among the ``k`` nearest ``docs`` of every probe (probe ``i`` is ``docs[self_rows[i]]``,
    excluded), pooled over the probes."""
    hits = np.zeros(n_codes, dtype=np.int64)
    for a in range(0, len(probes), chunk_rows):
        scores = probes[a:a + chunk_rows] @ docs.T  # (p, n)
        scores[np.arange(scores.shape[0]), self_rows[a:a + chunk_rows]] = -np.inf  # not itself
        top = top_k_columns(scores, k)
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
                 max_probes: int = DEFAULT_MAX_PROBES, seed: int = 0, tolerance: float | None = None,
                 per_language: bool = False, chunk_rows: int = 1024) -> AlphaSelection:
    """Choose alpha for ``transform`` on documents ``embs`` (n, d, untransformed) with languages ``langs``.

    ``max_probes``: probe documents in all, a seeded sample (``knn``: shared evenly by the languages;
    ``knn-source``: source-language documents); ``tolerance``: of the plateau rule (default
    :data:`DEFAULT_TOLERANCE` for ``knn``, 0 for the others: the minimum); ``per_language``: per-language
    alphas, ``knn-source`` and ``centroid`` only (see the module docstring for the criteria and why).
    """
    if criterion not in CRITERIA:
        raise MlirkitError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    if per_language and criterion == "knn":
        raise MlirkitError("per-language alphas come from the criteria knn-source and centroid (measured below the "
                           "global alpha; docs/results.md), not from knn")
    tolerance = (DEFAULT_TOLERANCE if criterion == "knn" else 0.0) if tolerance is None else float(tolerance)
    if not 0.0 <= tolerance < 1.0:
        raise MlirkitError(f"tolerance must be in [0, 1), got {tolerance}")
    grid = checked_grid(grid)
    embs, lang_list = known_rows(embs, langs)
    counts = Counter(lang_list)
    src = transform.source_lang_
    if criterion != "centroid" and transform.transforms_source and transform.touches("doc") \
            and not transform.touches("query"):
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
    expected = {l: (counts[l] - 1) / (n - 1) for l in languages}
    rng = np.random.default_rng(seed)
    probe_langs = languages if criterion == "knn" else [src]
    per_lang_probes = max(1, max_probes // len(probe_langs))
    probes_of: dict[str, np.ndarray] = {}
    for l in probe_langs:
        rows = np.flatnonzero(lang_codes == languages.index(l))
        if len(rows) > per_lang_probes:
            rows = np.sort(rng.choice(rows, size=per_lang_probes, replace=False))
        probes_of[l] = rows
    # per-language alphas (knn-source) for the languages the transform moves relative to the source-language probes
    shifted_langs = [l for l in languages if l in transform.languages and l != src] if per_language else []

    curve: dict[float, float] = {}
    lang_curve: dict[str, dict[float, float]] = {l: {} for l in shifted_langs}
    for alpha in grid:
        docs = embs.copy()
        if transform.touches("doc"):
            docs = transform.transform(docs, lang_list, "doc", alpha, out=docs)
        if criterion == "centroid":
            docs = l2_normalize(docs)
            centroids = {l: docs[lang_codes == i].mean(axis=0) for i, l in enumerate(languages)}
            dist = {l: float(np.linalg.norm(centroids[l] - centroids[src])) for l in languages}
            curve[alpha] = float(sum(counts[l] / n * dist[l] for l in languages))
            for t_lang in shifted_langs:
                lang_curve[t_lang][alpha] = dist[t_lang]
            continue
        gaps = []
        for l in probe_langs:
            rows = probes_of[l]
            view = _rebased(docs, lang_list, transform, l, alpha) if criterion == "knn" else docs
            view = l2_normalize(view)
            probes = embs[rows].copy()
            if transform.touches("query"):
                probes = transform.transform(probes, [l] * len(rows), "query", alpha, out=probes)
            probes = l2_normalize(probes)
            obs = _neighbour_shares(probes, view, rows, lang_codes, len(languages), k, chunk_rows)
            gaps.append(float(obs[languages.index(l)] - expected[l]))
            for t_lang in shifted_langs:  # knn-source: l is the source language
                code = languages.index(t_lang)
                sub = np.flatnonzero((lang_codes == languages.index(src)) | (lang_codes == code))
                position = np.searchsorted(sub, rows)  # probes are source rows, all inside ``sub``
                two = (lang_codes[sub] == languages.index(src)).astype(np.intp)
                share = _neighbour_shares(probes, view[sub], position, two, 2, min(k, len(sub) - 1), chunk_rows)[1]
                lang_curve[t_lang][alpha] = float(share - (counts[src] - 1) / (counts[src] + counts[t_lang] - 1))
        curve[alpha] = float(np.mean(gaps))
    chosen = plateau_start(curve, tolerance)
    per_lang = {l: _argmin(c) for l, c in lang_curve.items()}
    info = {"k": k, "probes": {l: int(len(r)) for l, r in probes_of.items()} if criterion != "centroid" else None,
            "tolerance": tolerance, "documents": n, "grid": grid, "method": transform.method, "source_lang": src}
    logger.info("label-free alpha (%s): %g%s", criterion, chosen, f"; per language {per_lang}" if per_lang else "")
    return AlphaSelection(criterion, chosen, per_lang, curve, lang_curve, expected, info)


def _rebased(docs: np.ndarray, langs: Sequence[str], transform: LanguageTransform, lang: str,
             alpha: float) -> np.ndarray:
    """The documents as a query of ``lang`` sees them: for SHIFT with a vector for ``lang``, ``x + b V_lang``
    with ``x`` the pivot-shifted documents and ``b = alpha`` for every document the shift moves (or the
    pivot's), i.e. ``d - alpha (V_l - V_lang)`` as in ``mlirkit.search.query_shift``; else ``docs`` itself."""
    from mlirkit.transforms.shift_transform import ShiftTransform

    if not isinstance(transform, ShiftTransform) or lang not in transform.params_ or alpha == 0:
        return docs
    meet = {la: transform.vector_lang(la) is not None or transform.is_source(la) for la in set(langs)}
    moved = np.fromiter((meet[la] for la in langs), dtype=bool, count=len(langs))
    out = docs.copy()
    out[moved] += np.float32(alpha) * transform.params_[lang]
    return out
