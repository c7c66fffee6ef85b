"""TLR@k, target-language recall: how much of the relevant material written in *other* languages
than the query's a system retrieves (the SHIFT authors' definition, as in their released code).

For a query ``q`` written in language ``L_q``::

    R_q     = { d : rel(q, d) > 0  and  lang(d) not in {L_q, unknown} }
    TLR@k   = (1 / |Q'|) * sum_{q in Q'} |top_k(q) ∩ R_q| / |R_q|,      Q' = { q : R_q non-empty }

Queries with an empty ``R_q`` (all relevant documents in the query's language or of unknown
language) are *excluded*, not counted as 0; the number of counted queries ``|Q'|`` is reported
and TLR@k is undefined (``None``) when ``Q'`` is empty. mlirkit also excludes queries whose own
language is unknown (``L_q`` undefined), and ranks by ``(-score, docid)``.

Worked example (docs/design.md, "TLR@k"): qrels ``{q1: {d_en, d_de, d_fr}}``, query language ``en``,
top-2 = ``{d_en, d_de}``: ``R_q1 = {d_de, d_fr}``, ``|top_2 ∩ R_q1| = 1``, TLR@2 = 1/2. A query
whose only relevant document is English is excluded.
"""
from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np

from mlirkit.eval.ranking import Judged, Ranking


class TLRResult(NamedTuple):
    mean: float | None  # None when no query has a non-empty target set
    per_query: dict[str, float]  # counted queries only
    counted: int


def target_sizes(judged: Judged) -> np.ndarray:
    """(Q,) ``|R_q|``; 0 for queries of unknown language (they are never counted)."""
    qlang = judged.query_lang_codes[judged.q]
    target = judged.relevant & (judged.lang != qlang) & (judged.lang != 0) & (qlang != 0)
    return np.bincount(judged.q[target], minlength=judged.n_queries)


def tlr_scores(ranking: Ranking, k: int) -> np.ndarray:
    """(Q,) TLR@k of each evaluated query; NaN where ``R_q`` is empty (query not counted)."""
    judged = ranking.judged
    sizes = target_sizes(judged)
    rows = np.flatnonzero(ranking.top(k))
    q = ranking.q[rows]
    lang = ranking.vocab_lang[ranking.doc[rows]]
    qlang = judged.query_lang_codes[q]
    hit = ranking.rows_relevant(rows) & (lang != qlang) & (lang != 0)
    found = np.bincount(q[hit], minlength=judged.n_queries)
    out = np.full(judged.n_queries, np.nan)
    counted = sizes > 0
    out[counted] = found[counted] / sizes[counted]
    return out


def tlr_at_k(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], k: int,
             doc_langs: Mapping[str, str], query_langs: Mapping[str, str] | str) -> TLRResult:
    """TLR@k of one run (see the module docstring for the formula and the worked example).

    ``qrels`` ``{qid: {docid: rel}}``, ``run`` ``{qid: {docid: score}}``, ``doc_langs``
    ``{docid: lang}`` (missing documents are of unknown language), ``query_langs`` one language
    for all queries or ``{qid: lang}``.
    """
    from mlirkit.eval.query_langs import resolve_query_langs

    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    judged = Judged.from_qrels(qrels)
    judged.set_languages(doc_langs, resolve_query_langs(judged.qids, query_langs))
    scores = tlr_scores(Ranking(judged, run), k)
    counted = np.flatnonzero(~np.isnan(scores))
    per_query = {judged.qids[i]: float(scores[i]) for i in counted}
    mean = float(scores[counted].mean()) if len(counted) else None
    return TLRResult(mean, per_query, len(counted))


__all__ = ["TLRResult", "target_sizes", "tlr_at_k", "tlr_scores"]
