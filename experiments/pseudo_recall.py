"""Pseudo-recall: a label-free stand-in for a language's recall, and the alpha that maximises it.

Source-language documents stand in for queries (probes, as in :mod:`mlirkit.transforms.alpha_select`; a
probe never retrieves itself). What they lack is a relevant document in each language; this module gives
them one from the corpus itself:

- **pseudo-relevant pairs** of a non-source language ``l``: the mutual best ratio-margin pairs (Artetxe &
  Schwenk 2019; :func:`mlirkit.transforms.mining.mine_pairs`, ``k`` = 4, margin >= 1) between ``l``'s
  documents and the probes, mined **once on the untransformed embeddings** (alpha 0). The pairs do not
  depend on the vector or the alpha being judged (the margin divides out each side's mean neighbour
  similarity, so the language offset does not decide who pairs with whom).
- **pseudo-recall** of ``l`` under alphas ``a`` (documents transformed, L2-normalised, cosine):

      PR_l(a) = #{(x, y) in pairs_l : s_a(y, x) >= s_a^(k)(y)} / #pairs_l

  with ``s_a^(k)(y)`` probe ``y``'s ``k``-th largest score over the whole corpus (itself excluded): the
  share of ``l``'s pseudo-relevant documents found in their probe's top ``k``, the label-free analogue
  of per-language recall@k of source-language queries. Too little correction leaves ``x`` behind the
  probe's own-language documents; too much pushes it past ``y`` and away (PR falls again), so PR has an
  interior maximum, unlike the retrievability of :mod:`experiments.alpha_guard`.
- the **pseudo-recall alpha**: among the alphas of largest ``mean_l PR_l(a)`` (macro mean over
  languages), the one of smallest kNN gap (:func:`mlirkit.transforms.alpha_select.select_alpha`'s
  criterion; ties to the smaller alpha). Pseudo-recall saturates on parallel corpora (every probe's
  translation is in its top ``k`` over a range of alphas), and the gap then picks inside that plateau;
  where the gap's own minimum lies outside the plateau (topic-skewed corpora: it over-corrects), the
  plateau wins. One at the grid's edge is flagged.

Measured in docs/shift.md ("A harm criterion that follows recall"): as a global alpha it finds the
labelled dev alpha for vectors that carry topic, where the kNN gap over-corrects; as a per-language
guard it does not protect a language's recall: its alpha-0 value is low for most languages (source-
language probes retrieve their own language first, so nearly every alpha passes), and a language close
to the source language at alpha 0 gets crowded out by the others moving in, which walks many vectors
back to alpha 0.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.vectors import l2_normalize
from mlirkit.transforms.alpha_select import (DEFAULT_GRID, DEFAULT_K, DEFAULT_MAX_PROBES, checked_grid, known_rows,
                                             select_alpha)
from experiments.mining_variants import mine_pairs
from mlirkit.transforms import LanguageTransform

logger = logging.getLogger(__name__)

PAIR_K = 4
PAIR_THRESHOLD = 1.0

Pairs = dict[int, tuple[np.ndarray, np.ndarray]]  # code -> (document rows, probe positions)


def _normalize(x: np.ndarray) -> np.ndarray:
    return l2_normalize(np.asarray(x, dtype=np.float64))


def pseudo_relevant_pairs(embs: np.ndarray, codes: np.ndarray, probe_rows: np.ndarray, targets: Sequence[int], *,
                          k: int = PAIR_K, threshold: float = PAIR_THRESHOLD) -> Pairs:
    """Per target code: ``(rows of its documents, positions in probe_rows of their probes)`` of the mutual
    best ratio-margin pairs between its untransformed documents and the probes (module docstring)."""
    probes = _normalize(embs[probe_rows])
    out: Pairs = {}
    for code in targets:
        rows = np.flatnonzero(codes == code)
        mined = mine_pairs(_normalize(embs[rows]), probes, k=k, threshold=threshold)
        out[int(code)] = (rows[mined.tgt].astype(np.intp), mined.src.astype(np.intp))
    return out


def pseudo_recall(docs: np.ndarray, probe_rows: np.ndarray, pairs: Pairs, k: int, *,
                  chunk_rows: int = 1024) -> dict[int, float]:
    """``PR_l`` per code of ``pairs`` for the transformed, L2-normalised ``docs`` (n, d); probe ``i`` is
    ``docs[probe_rows[i]]`` and never counts itself. ``k`` is capped at ``n - 1``."""
    n = docs.shape[0]
    k = max(1, min(int(k), n - 1))
    kth = np.empty(len(probe_rows))
    for a in range(0, len(probe_rows), chunk_rows):
        s = docs[probe_rows[a:a + chunk_rows]] @ docs.T
        s[np.arange(s.shape[0]), probe_rows[a:a + chunk_rows]] = -np.inf
        kth[a:a + chunk_rows] = -np.partition(-s, k - 1, axis=1)[:, k - 1]
    out = {}
    for code, (rows, pos) in pairs.items():
        if len(rows) == 0:
            out[code] = float("nan")
            continue
        score = np.einsum("ij,ij->i", docs[rows], docs[probe_rows[pos]])
        out[code] = float(np.mean(score >= kth[pos] - 1e-7))
    return out


@dataclass
class PseudoRecallAlpha:
    """The alpha of largest mean pseudo-recall (smallest gap among those), with the curves and the pairs' counts."""

    alpha: float
    curve: dict[float, float]
    gap_curve: dict[float, float]
    per_language_curve: dict[str, dict[float, float]]
    pairs: dict[str, int]
    at_edge: str | None
    info: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "at_edge": self.at_edge, "pairs": self.pairs,
                "curve": {f"{a:g}": round(v, 6) for a, v in self.curve.items()},
                "gap_curve": {f"{a:g}": round(v, 6) for a, v in self.gap_curve.items()},
                "per_language_curve": {l: {f"{a:g}": round(v, 6) for a, v in c.items()}
                                       for l, c in self.per_language_curve.items()}, **self.info}


def select_pseudo_recall_alpha(embs: np.ndarray, langs: Sequence[str | None], transform: LanguageTransform, *,
                               grid: Sequence[float] = DEFAULT_GRID, k: int = DEFAULT_K,
                               max_probes: int = DEFAULT_MAX_PROBES, seed: int = 0,
                               chunk_rows: int = 1024) -> PseudoRecallAlpha:
    """The global alpha of largest mean pseudo-recall@``k`` of the moved languages, the kNN gap deciding
    between equals (module docstring)."""
    grid = checked_grid(grid)
    if transform.touches("query") or transform.transforms_source:
        raise MlirkitError(f"the pseudo-recall alpha is for transforms that move only non-source documents "
                           f"(shift), not {transform.method}")
    embs, lang_list = known_rows(embs, langs)
    counts = Counter(lang_list)
    src = transform.source_lang
    if counts.get(src, 0) < 2:
        raise MlirkitError(f"the pseudo-recall alpha needs at least 2 source-language ({src}) documents, "
                           f"found {counts.get(src, 0)}")
    languages = sorted(counts)
    codes = np.array([languages.index(l) for l in lang_list], dtype=np.intp)
    probe_rows = np.flatnonzero(codes == languages.index(src))
    if len(probe_rows) > max_probes:
        probe_rows = np.sort(np.random.default_rng(seed).choice(probe_rows, size=max_probes, replace=False))
    moved = [l for l in languages if l in transform.params_ and l != src]
    pairs = pseudo_relevant_pairs(embs, codes, probe_rows, [languages.index(l) for l in moved])
    judged = [l for l in moved if len(pairs[languages.index(l)][0])]
    if not judged:
        raise MlirkitError("no pseudo-relevant pairs were found for any language the transform moves")
    per: dict[str, dict[float, float]] = {l: {} for l in judged}
    curve: dict[float, float] = {}
    for alpha in grid:
        docs = _normalize(transform.transform(embs.copy(), lang_list, "doc", alpha)).astype(np.float32)
        pr = pseudo_recall(docs, probe_rows, {languages.index(l): pairs[languages.index(l)] for l in judged}, k,
                           chunk_rows=chunk_rows)
        for l in judged:
            per[l][alpha] = pr[languages.index(l)]
        curve[alpha] = float(np.mean([per[l][alpha] for l in judged]))
    gap = select_alpha(embs, lang_list, transform, grid=grid, k=k, max_probes=max_probes, seed=seed,
                       criterion="knn-source").curve
    top = max(round(v, 12) for v in curve.values())
    best = min((a for a in grid if round(curve[a], 12) == top), key=lambda a: (gap[a], a))
    edge = "upper" if best == grid[-1] and len(grid) > 1 else ("lower" if best == grid[0] and len(grid) > 1 else None)
    if edge:
        logger.warning("the pseudo-recall alpha sits at the %s edge of the grid (%g)", edge, best)
    info = {"criterion": "pseudo-recall", "k": k, "probes": int(len(probe_rows)), "grid": grid, "source_lang": src,
            "pair_k": PAIR_K, "pair_threshold": PAIR_THRESHOLD,
            "definition": f"share of a language's pseudo-relevant documents (mutual ratio-margin pairs with {src} "
                          f"documents, mined at alpha 0) in their {src} document's top {k}"}
    logger.info("pseudo-recall alpha %g (mean pseudo-recall %.4f)", best, curve[best])
    return PseudoRecallAlpha(best, curve, gap, per, {l: int(len(pairs[languages.index(l)][0])) for l in moved}, edge, info)
