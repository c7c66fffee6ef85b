"""PEER@k, the probability of equal expected rank (Yang, Jänich, Mayfield & Lawrie, "Language Fairness in
Multilingual Information Retrieval", SIGIR 2024, arXiv 2405.00978): are the documents of one relevance
level ranked alike whatever their language?

For a query ``q``, each relevance level ``r`` with weight ``w_r`` and the documents ``D_{q,r}`` of that
level (of known language)::

    rank_k(d)   = the position of d in the ranking when it is in the top k, else k + 1 (one tied tail)
    p_{q,r}     = p value of the Kruskal-Wallis test of  H0: every language of D_{q,r} has the same
                  expected rank_k,  the samples being rank_k(d) of D_{q,r} grouped by language(d)
                = chi2_{G-1}.sf(H),  H = (N - 1) * sum_g n_g (rbar_g - rbar)^2 / sum_d (r_d - rbar)^2
                  over the rank-transformed values r_d (average ranks for ties; the tie-corrected H)
    PEER(q)     = sum_r w_r p_{q,r}        (higher = fairer; 1 = no evidence of unequal treatment)
    PEER@k      = mean over queries of PEER(q)

``G`` is the number of languages with a document of level ``r``: with fewer than two, or with every
rank tied (no relevant document in the top k), there is nothing to test and ``p_{q,r} = 1``; a weighted
level the query has no document of also counts ``p = 1``. Default weights: equal over the relevance
levels >= 1 of the qrels (binary qrels: ``w_1 = 1``). Level 0, when a weight is given to it, holds the
judged non-relevant documents and the unjudged documents of the top k.

The authors' own code (PyPI ``peer-measure`` 0.0.1, an ``ir_measures`` plugin) departs from this where a
language has several documents of one level: it computes H on the raw positions without the rank
transformation (a different value as soon as the level's positions are not 1 ... N, all of them in the top
k or not) and puts the unretrieved documents at ``N + (U + 1) / 2`` (``N`` documents of the level, ``U`` of
them unretrieved) instead of after the top k (NaN when that value is the one retrieved position, every value
equal); its level 0 holds only the documents of the top k; a weighted
level the query has no document of adds 0; with qrels that hold no 0 level it stops with a ``KeyError`` at
the first unjudged retrieved document. Where each language has one document of a level (XQuAD-R, MLQA-R,
LAReQA, DDTP: one relevant version per language), both give the same value but for that NaN (docs/evaluation.md,
``tests/eval/test_fairness_references.py``).

``peer-mimo@k`` is the variant of the SHIFT authors' follow-up (MIMO, ``compute_peer``): binary relevance
(every level >= 1 one group, weight 1), and a query with relevant documents in fewer than two languages
is not counted (NaN) instead of counting 1.

Worked example (docs/evaluation.md): relevant ``a1, a2`` (language a) and ``b1, b2`` (b); the top 3 is
``a1, x, a2``. rank_3 = a: {1, 3}, b: {4, 4}; rank-transformed a: {1, 2}, b: {3.5, 3.5}; H = 3 * 4 / 4.5
= 2.667 (one degree of freedom), PEER@3 = chi2_1.sf(2.667) = 0.1025. With one relevant document per
language every group is a single value, so ``H = N - 1`` whatever the ranks: PEER(q) is
``chi2_{N-1}.sf(N - 1)`` (0.4289 for 8 languages) as soon as one relevant document is in the top k, and
1 when none is.
"""
from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.ranking import REL_LEVEL, Judged, Ranking

#: metric family -> variant
VARIANTS = {"peer": "paper", "peer-mimo": "mimo"}


class PEERResult(NamedTuple):
    mean: float | None  # None when no query is counted
    per_query: dict[str, float]
    counted: int


def default_weights(judged: Judged) -> dict[int, float]:
    """Equal weights over the relevance levels >= 1 of the qrels."""
    levels = sorted(int(r) for r in np.unique(judged.rel[judged.relevant]))
    return {r: 1.0 / len(levels) for r in levels}


def check_weights(weights: Mapping[int, float]) -> dict[int, float]:
    out = {int(r): float(w) for r, w in weights.items()}
    if not out or any(w < 0 for w in out.values()) or not np.isclose(sum(out.values()), 1.0):
        raise MlirkitError(f"PEER weights must be non-negative and sum to 1, got {dict(weights)}")
    return out


def _items(ranking: Ranking, k: int, levels: dict[int, int], with_zero: bool):
    """``(query, doc code, level index)`` of every document PEER ranks: the judged documents of the weighted
    levels and, for level 0, the unjudged documents of the top k."""
    j = ranking.judged
    level_of = np.full(len(j.rel), -1, dtype=np.int64)
    for r, i in levels.items():
        level_of[j.rel == r] = i
    keep = level_of >= 0
    q, doc, lev = j.q[keep], ranking.judged_doc[keep], level_of[keep]
    if with_zero:
        rows = np.flatnonzero(ranking.top(k))
        judged_keys = np.unique(j.q * ranking.n_vocab + ranking.judged_doc)
        unjudged = rows[~np.isin(ranking.q[rows] * ranking.n_vocab + ranking.doc[rows], judged_keys)]
        q = np.concatenate([q, ranking.q[unjudged]])
        doc = np.concatenate([doc, ranking.doc[unjudged]])
        lev = np.concatenate([lev, np.full(len(unjudged), levels[0], dtype=np.int64)])
    return q, doc, lev


def cut_ranks(ranking: Ranking, k: int, q: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """(n,) ``rank_k`` of documents ``doc`` for queries ``q``: their position (from 1) in the top k, else k + 1."""
    rows = np.flatnonzero(ranking.top(k))
    keys = ranking.q[rows] * ranking.n_vocab + ranking.doc[rows]
    order = np.argsort(keys)
    keys, pos = keys[order], ranking.pos[rows][order] + 1
    want = q * ranking.n_vocab + doc
    if not len(keys):
        return np.full(len(want), k + 1.0)
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return np.where(keys[at] == want, pos[at], k + 1).astype(np.float64)


def kruskal_p(unit: np.ndarray, group: np.ndarray, value: np.ndarray, n_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Per unit the Kruskal-Wallis p value of ``value`` grouped by ``group`` (tie-corrected H, chi-square
    with G - 1 degrees of freedom; as ``scipy.stats.kruskal``) and the number of groups G; p is NaN where
    G < 2 or every value of the unit is tied."""
    from scipy.stats import chi2

    p = np.full(n_units, np.nan)
    n_groups = np.zeros(n_units, dtype=np.int64)
    if not len(unit):
        return p, n_groups
    order = np.lexsort((value, unit))
    unit, group, value = unit[order], group[order], value[order]
    n = np.bincount(unit, minlength=n_units)
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    ordinal = np.arange(len(unit)) - start[unit] + 1.0
    new_run = np.concatenate([[True], (unit[1:] != unit[:-1]) | (value[1:] != value[:-1])])
    run = np.cumsum(new_run) - 1
    rank = (np.bincount(run, weights=ordinal) / np.bincount(run))[run]  # average rank of tied values
    mean = (n + 1) / 2.0
    sst = np.bincount(unit, weights=(rank - mean[unit]) ** 2, minlength=n_units)
    cells, cell = np.unique(unit * (group.max() + 1) + group, return_inverse=True)
    cell_unit = cells // (group.max() + 1)
    cell_n = np.bincount(cell)
    cell_mean = np.bincount(cell, weights=rank) / cell_n
    ssg = np.bincount(cell_unit, weights=cell_n * (cell_mean - mean[cell_unit]) ** 2, minlength=n_units)
    n_groups = np.bincount(cell_unit, minlength=n_units)
    ok = (n_groups >= 2) & (sst > 0)
    h = (n[ok] - 1) * ssg[ok] / sst[ok]
    p[ok] = chi2.sf(h, n_groups[ok] - 1)
    return p, n_groups


def peer_scores(ranking: Ranking, k: int, weights: Mapping[int, float] | None = None, *,
                variant: str = "paper") -> np.ndarray:
    """(Q,) PEER@k of each evaluated query (module docstring); NaN for a query not counted (``mimo``:
    relevant documents in fewer than two known languages). Needs document languages on the ranking."""
    judged = ranking.judged
    if variant not in VARIANTS.values():
        raise ValueError(f"unknown PEER variant {variant!r}")
    if variant == "mimo":
        if weights is not None:
            raise MlirkitError("peer-mimo takes no weights (binary relevance, weight 1)")
        levels = {int(r): 0 for r in np.unique(judged.rel[judged.relevant])}
        w = np.ones(1)
        with_zero = False
    else:
        weights = check_weights(weights if weights is not None else default_weights(judged))
        weights = {r: x for r, x in weights.items() if x > 0}
        levels = {r: i for i, r in enumerate(sorted(weights))}
        w = np.array([weights[r] for r in sorted(weights)])
        with_zero = any(r < REL_LEVEL for r in weights)
        if any(0 < r < REL_LEVEL or r < 0 for r in weights):
            raise MlirkitError(f"PEER weights are per relevance level (0, 1, 2, ...), got {sorted(weights)}")
    q, doc, lev = _items(ranking, k, levels, with_zero)
    lang = ranking.vocab_lang[doc]
    known = lang != 0
    q, doc, lev, lang = q[known], doc[known], lev[known], lang[known]
    n_levels = len(w)
    unit = q * n_levels + lev
    p, n_groups = kruskal_p(unit, lang, cut_ranks(ranking, k, q, doc), judged.n_queries * n_levels)
    p = np.where(np.isnan(p), 1.0, p).reshape(judged.n_queries, n_levels)
    out = p @ w
    if variant == "mimo":
        out[n_groups.reshape(judged.n_queries, n_levels)[:, 0] < 2] = np.nan
    return out


def relevant_rank_by_lang(ranking: Ranking, k: int) -> dict[str, tuple[float, int]]:
    """``{lang: (mean rank_k of the relevant documents of that language, documents)}``: where PEER's
    groups stand (rank k + 1 below the top k)."""
    judged = ranking.judged
    rel = judged.relevant
    q, doc = judged.q[rel], ranking.judged_doc[rel]
    lang = ranking.vocab_lang[doc]
    ranks = cut_ranks(ranking, k, q, doc)
    out = {}
    for code in np.unique(lang):
        if code != 0:
            sel = lang == code
            out[judged.languages.names[code]] = (float(ranks[sel].mean()), int(sel.sum()))
    return dict(sorted(out.items()))


def peer_at_k(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], k: int,
              doc_langs: Mapping[str, str], weights: Mapping[int, float] | None = None, *,
              variant: str = "paper") -> PEERResult:
    """PEER@k of one run (module docstring); ``weights`` ``{relevance level: weight}`` summing to 1."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    judged = Judged.from_qrels(qrels)
    judged.set_languages(doc_langs, ["und"] * judged.n_queries)
    scores = peer_scores(Ranking(judged, run), k, weights, variant=variant)
    counted = np.flatnonzero(~np.isnan(scores))
    return PEERResult(float(scores[counted].mean()) if len(counted) else None,
                      {judged.qids[i]: float(scores[i]) for i in counted}, len(counted))


__all__ = ["PEERResult", "VARIANTS", "default_weights", "kruskal_p", "peer_at_k", "peer_scores",
           "relevant_rank_by_lang"]
