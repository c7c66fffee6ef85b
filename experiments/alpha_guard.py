"""A label-free alpha per language that never lowers a language's retrievability below alpha 0.

Source-language documents stand in for queries (probes, as in :mod:`mlirkit.transforms.alpha_select`; a
probe never retrieves itself). Two label-free quantities of a language ``l`` under a per-language alpha
vector ``a`` (documents transformed with ``a``, L2-normalised, cosine):

- **retrievability** ``R_l(a)``: the share of ``l``'s documents that appear in the top ``k`` of at
  least one probe (the label-free analogue of "this language's documents can be found at all by
  source-language queries"; Azzopardi & Vinay 2008 call the query-side version *retrievability*);
- **excess same-language share** ``gap_l(alpha)`` on the two-language sub-corpus (source + ``l``,
  only ``l``'s documents move): the share of source-language documents among the probes' ``k``
  nearest minus the share expected without language bias, as in :mod:`mlirkit.transforms.alpha_select`.

Selection (``grid`` must contain 0):

1. per language, on its two-language sub-corpus, the admissible alphas are those with
   ``R_l^(2)(alpha) >= R_l^(2)(0)``; the candidate is the admissible alpha of smallest ``gap_l``
   (ties: the smaller alpha). Alpha 0 is always admissible, so each language's alpha can differ.
2. on the whole corpus with every language at its candidate: any language with
   ``R_l(a) < R_l(0)`` (``0`` = every language at alpha 0) steps down to its next smaller admissible
   alpha (when every such language is at 0 already, the others crowd it out, and every language
   above 0 steps down instead); repeat until no language is below. This terminates (each round lowers
   an alpha; at all zeros equality holds), so the result **never lowers a language's
   retrievability** relative to alpha 0 by this criterion, jointly.
With ``criterion="pseudo-recall"`` the guarded quantity is the **pseudo-recall** ``PR_l`` of
:mod:`experiments.pseudo_recall` (share of ``l``'s pseudo-relevant documents - mutual ratio-margin
pairs with probes, mined at alpha 0 - in their probe's top ``k``) instead of ``R_l``, and the candidate of
step 1 is the admissible alpha of largest ``PR_l^(2)`` (ties: smaller ``gap_l``, then the smaller alpha);
a language without pseudo-relevant pairs stays at 0. Steps 2 and 3 are unchanged, so the result never
lowers a language's pseudo-recall below alpha 0.

**Query probes** (``probes=``, retrievability guard only): unlabelled source-language *query*
embeddings (an (m, d) array from the index's encoder, e.g. a query log or a dev split's queries without
their qrels) replace the probe documents in both criteria: ``R_l(a)`` = share of ``l``'s documents in the
top ``k`` of at least one probe query, and ``gap_l`` = share of source-language documents among the probe
queries' ``k`` nearest minus ``n_src / (n_src + n_l)``. Queries are less same-language-biased than
documents, so the guard sees harm document probes miss; still label-free (no qrels).

3. a chosen alpha at the largest grid value is flagged ``at_edge: "upper"`` (the minimum may lie
   beyond the grid: widen it), one at 0 ``at_edge: "lower"`` (no correction chosen), with a warning.

What it cannot know: whether topics differ by language. If the vector carries topic, moving a
language's documents onto the source language's topics raises both criteria; the cure is a vector
without topic (mined pairs, :mod:`mlirkit.transforms.mining`), not a different alpha.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.vectors import l2_normalize
from mlirkit.transforms.alpha_select import DEFAULT_GRID, DEFAULT_K, DEFAULT_MAX_PROBES, checked_grid, known_rows
from experiments.pseudo_recall import pseudo_recall, pseudo_relevant_pairs
from mlirkit.transforms import LanguageTransform

logger = logging.getLogger(__name__)

GUARD_CRITERIA = ("retrievability", "pseudo-recall")


@dataclass
class GuardedAlphas:
    """Per-language alphas chosen by the guarded criterion, with the curves and the checks."""

    per_language: dict[str, float]
    candidates: dict[str, float]
    gap_curve: dict[str, dict[float, float]]
    retrievability_curve: dict[str, dict[float, float]]
    retrievability: dict[str, dict[str, float]]
    at_edge: dict[str, str | None]
    repairs: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def alpha_spec(self) -> dict[str, float]:
        """The ``--alpha`` dict form; languages without a vector (``"*"``) get 0 (unmoved)."""
        return {"*": 0.0, **self.per_language}

    def as_dict(self) -> dict[str, Any]:
        return {"per_language": self.per_language, "candidates": self.candidates,
                "alpha_arg": " ".join(["0", *(f"{l}={a:g}" for l, a in self.per_language.items())]),
                "at_edge": {l: e for l, e in self.at_edge.items() if e},
                "retrievability": {l: {k: round(v, 6) for k, v in r.items()} for l, r in self.retrievability.items()},
                "repairs": self.repairs,
                "gap_curve": {l: {f"{a:g}": round(v, 6) for a, v in c.items()} for l, c in self.gap_curve.items()},
                "retrievability_curve": {l: {f"{a:g}": round(v, 6) for a, v in c.items()}
                                         for l, c in self.retrievability_curve.items()}, **self.info}


def _top_k(probes: np.ndarray, docs: np.ndarray, self_rows: np.ndarray | None, k: int,
           chunk_rows: int) -> np.ndarray:
    """``(p, k)`` rows of ``docs`` nearest to each probe by inner product (probe ``i`` = ``docs[self_rows[i]]``,
    excluded; ``self_rows=None``: external probes, nothing excluded)."""
    out = np.empty((len(probes), k), dtype=np.intp)
    for a in range(0, len(probes), chunk_rows):
        scores = probes[a:a + chunk_rows] @ docs.T  # (p, n)
        if self_rows is not None:
            scores[np.arange(scores.shape[0]), self_rows[a:a + chunk_rows]] = -np.inf
        out[a:a + chunk_rows] = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    return out


def _retrievability(top: np.ndarray, codes: np.ndarray, n_codes: int, counts: np.ndarray) -> np.ndarray:
    """Per code: share of its rows among the union of ``top``."""
    hit = np.zeros(len(codes), dtype=bool)
    hit[top.ravel()] = True
    return np.bincount(codes[hit], minlength=n_codes) / np.maximum(counts, 1)


def select_guarded_alphas(embs: np.ndarray, langs: Sequence[str | None], transform: LanguageTransform, *,
                          grid: Sequence[float] = DEFAULT_GRID, k: int = DEFAULT_K,
                          max_probes: int = DEFAULT_MAX_PROBES, seed: int = 0, retrievability_k: int | None = None,
                          chunk_rows: int = 1024, criterion: str = "retrievability",
                          probes: np.ndarray | None = None) -> GuardedAlphas:
    """Per-language alphas for ``transform`` on documents ``embs`` (n, d, untransformed) (module docstring).

    ``k`` is the neighbourhood of the gap criterion, ``retrievability_k`` (default ``k``) that of the
    retrievability guard (or of the pseudo-recall with ``criterion="pseudo-recall"``). ``probes``: (m, d)
    unlabelled source-language query embeddings used as probes instead of source-language documents
    (retrievability guard only; at most ``max_probes`` of them, sampled with ``seed``).
    """
    if criterion not in GUARD_CRITERIA:
        raise MlirkitError(f"unknown guard criterion {criterion!r} (choose from {', '.join(GUARD_CRITERIA)})")
    grid = checked_grid(grid)
    if grid[0] != 0.0:
        raise MlirkitError("the guarded alpha needs 0 in the grid (retrievability is compared with alpha 0)")
    if transform.touches("query") or transform.transforms_source:
        raise MlirkitError(f"the guarded per-language alpha is for transforms that move only non-source "
                           f"documents (shift), not {transform.method}")
    if probes is not None and criterion != "retrievability":
        raise MlirkitError("query probes work with the retrievability guard only (pseudo-recall pairs probe documents)")
    embs, lang_list = known_rows(embs, langs)
    if probes is not None:
        probes = np.asarray(probes)
        if probes.ndim != 2 or probes.shape[1] != embs.shape[1] or len(probes) == 0:
            raise MlirkitError(f"query probes must be a non-empty (m, {embs.shape[1]}) array (the index's encoder), "
                               f"got shape {probes.shape}")
        if not np.isfinite(probes).all():
            raise MlirkitError("query probes hold non-finite values")
    counts = Counter(lang_list)
    src = transform.source_lang
    n = len(lang_list)
    if counts.get(src, 0) < 2:
        raise MlirkitError(f"the guarded alpha needs at least 2 source-language ({src}) documents, "
                           f"found {counts.get(src, 0)}")
    if not 1 <= k < n:
        raise MlirkitError(f"k={k} must be in [1, {n - 1}]")
    rk = k if retrievability_k is None else int(retrievability_k)
    if not 1 <= rk < n:
        raise MlirkitError(f"retrievability_k={rk} must be in [1, {n - 1}]")
    languages = sorted(counts)
    codes = np.array([languages.index(l) for l in lang_list], dtype=np.intp)
    code_counts = np.bincount(codes, minlength=len(languages))
    src_code = languages.index(src)
    src_rows = np.flatnonzero(codes == src_code)
    if len(src_rows) > max_probes:
        src_rows = np.sort(np.random.default_rng(seed).choice(src_rows, size=max_probes, replace=False))
    if probes is None:
        external = False
        probes = l2_normalize(embs[src_rows].astype(np.float64)).astype(np.float32)
    else:
        external = True
        if len(probes) > max_probes:
            probes = probes[np.sort(np.random.default_rng(seed).choice(len(probes), size=max_probes, replace=False))]
        probes = l2_normalize(probes.astype(np.float64)).astype(np.float32)
    moved = [l for l in languages if l in transform.params_ and l != src]
    if not moved:
        raise MlirkitError("the transform has no vector for any non-source language of these documents")
    pairs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if criterion == "pseudo-recall":
        pairs = pseudo_relevant_pairs(embs, codes, src_rows, [languages.index(l) for l in moved])

    def shifted(alpha: float | dict[str, float]) -> np.ndarray:
        return l2_normalize(transform.transform(embs.copy(), lang_list, "doc", alpha)).astype(np.float32)

    # 1. per language on the two-language sub-corpus
    gap: dict[str, dict[float, float]] = {l: {} for l in moved}
    retr2: dict[str, dict[float, float]] = {l: {} for l in moved}
    subsets = {}
    for l in moved:
        rows = np.flatnonzero((codes == src_code) | (codes == languages.index(l)))
        subsets[l] = (rows, np.searchsorted(rows, src_rows), (codes[rows] == src_code).astype(np.intp))
        if pairs:
            x_rows, pos = pairs[languages.index(l)]
            subsets[l] += ({1: (np.searchsorted(rows, x_rows), pos)},)
    for alpha in grid:
        docs = shifted(alpha)
        for l in moved:
            rows, position, two = subsets[l][:3]
            sub_k = min(k, len(rows) - 1)
            top = _top_k(probes, docs[rows], None if external else position, sub_k, chunk_rows)
            src_share = float(two[top].mean())
            sub_rk = min(rk, len(rows) - 1)
            if sub_rk != sub_k and not pairs:  # the pseudo-recall guard ranks on its own
                top = _top_k(probes, docs[rows], None if external else position, sub_rk, chunk_rows)
            own = 0 if external else 1  # a probe document is not among its own neighbours
            gap[l][alpha] = src_share - (counts[src] - own) / (counts[src] + counts[l] - own)
            is_l = 1 - two  # 1 for l's rows
            if pairs:
                retr2[l][alpha] = (pseudo_recall(docs[rows], position, subsets[l][3], sub_rk)[1]
                                   if len(subsets[l][3][1][0]) else 0.0)
            else:
                retr2[l][alpha] = float(_retrievability(top, is_l, 2, np.bincount(is_l, minlength=2))[1])
    admissible = {l: [a for a in grid if retr2[l][a] >= retr2[l][0.0] - 1e-12] for l in moved}
    if pairs:
        for l in moved:
            if not len(pairs[languages.index(l)][0]):
                admissible[l] = [0.0]  # no pseudo-relevant pairs: no evidence, no correction
        candidates = {l: min(admissible[l], key=lambda a: (-retr2[l][a], gap[l][a], a)) for l in moved}
    else:
        candidates = {l: min(admissible[l], key=lambda a: (gap[l][a], a)) for l in moved}

    # 2. joint check on the whole corpus
    def joint_retrievability(alpha: dict[str, float]) -> np.ndarray:
        if pairs:
            pr = pseudo_recall(shifted(alpha), src_rows, pairs, rk, chunk_rows=chunk_rows)
            out = np.zeros(len(languages))
            for code, v in pr.items():
                out[code] = 0.0 if np.isnan(v) else v
            return out
        return _retrievability(_top_k(probes, shifted(alpha), None if external else src_rows, rk, chunk_rows),
                               codes, len(languages),
                               code_counts)

    base = joint_retrievability({"*": 0.0})
    chosen = dict(candidates)
    repairs: list[dict[str, Any]] = []
    while True:
        now = joint_retrievability({"*": 0.0, **chosen})
        below = [l for l in moved if now[languages.index(l)] < base[languages.index(l)] - 1e-12]
        if not below:
            break
        # the languages below step down; one already at 0 is crowded out by the others, which then step down
        movable = [l for l in below if chosen[l] > 0.0] or [l for l in moved if chosen[l] > 0.0]
        for l in movable:
            lower = [a for a in admissible[l] if a < chosen[l]]
            new = max(lower) if lower else 0.0
            repairs.append({"lang": l, "from": chosen[l], "to": new, "because": below,
                            "retrievability": round(float(now[languages.index(l)]), 6),
                            "at_alpha_0": round(float(base[languages.index(l)]), 6)})
            chosen[l] = new
    edges: dict[str, str | None] = {}
    for l in moved:
        edges[l] = "upper" if chosen[l] == grid[-1] and len(grid) > 1 else ("lower" if chosen[l] == 0.0 else None)
        if edges[l] == "upper":
            logger.warning("%s: the guarded alpha sits at the top of the grid (%g): the best may lie beyond it",
                           l, grid[-1])
        elif edges[l] == "lower":
            logger.warning("%s: the guarded alpha is 0 (no correction keeps its %s and lowers the gap)", l, criterion)
    retrievability = {l: {"alpha_0": float(base[languages.index(l)]), "chosen": float(now[languages.index(l)])}
                      for l in moved}
    info = {"criterion": "guarded", "guard": criterion, "k": k, "retrievability_k": rk, "probes": int(len(probes)),
            "probe_kind": "queries" if external else "documents", "documents": n,
            "grid": grid,
            "method": transform.method, "source_lang": src,
            "retrievability_definition": (f"share of a language's documents in the top {rk} of at least one "
                                          + (f"{src} probe query" if external else
                                             f"{src} document (itself excluded)")) if not pairs else
                                         (f"pseudo-recall: share of a language's pseudo-relevant documents (mutual "
                                          f"ratio-margin pairs with {src} documents at alpha 0) in their {src} "
                                          f"document's top {rk}"),
            **({"pseudo_pairs": {l: int(len(pairs[languages.index(l)][0])) for l in moved}} if pairs else {})}
    logger.info("guarded per-language alphas: %s (repairs: %d)", chosen, len(repairs))
    return GuardedAlphas(chosen, candidates, gap, retr2, retrievability, edges, repairs, info)
