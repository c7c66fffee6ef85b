"""Language-bias breakdowns (beyond the SHIFT paper), all per query then macro-averaged.

- ``samelang@k``: share of the top k written in the query's language,
  ``|{d in top_k(q) : lang(d) = L_q}| / |top_k(q)|``, over queries with a non-empty ranking and a
  known language. Its reference is the share *expected* from the relevant set,
  ``|{d : rel(q,d) > 0, lang(d) = L_q}| / |{d : rel(q,d) > 0}|``: an unbiased system that
  retrieved only relevant documents would match it.
- recall@k by document language: for language ``l``,
  ``|top_k(q) ∩ Rel_q^l| / |Rel_q^l|`` averaged over the queries with ``Rel_q^l`` non-empty.
- language mix of the top k: for each language, its share of each query's top k, averaged over queries.
"""
from __future__ import annotations

import numpy as np

from mlirkit.eval.ranking import Judged, Ranking


def samelang_scores(ranking: Ranking, k: int) -> np.ndarray:
    """(Q,) share of each query's top k in the query's language; NaN for empty rankings / unknown L_q."""
    judged = ranking.judged
    rows = np.flatnonzero(ranking.top(k))
    q = ranking.q[rows]
    return _same_language_share(judged, q, ranking.vocab_lang[ranking.doc[rows]])


def samelang_expected(judged: Judged) -> np.ndarray:
    """(Q,) share of each query's relevant documents in the query's language; NaN for unknown L_q."""
    rel = judged.relevant
    q = judged.q[rel]
    return _same_language_share(judged, q, judged.lang[rel])


def _same_language_share(judged: Judged, q: np.ndarray, doc_lang_codes: np.ndarray) -> np.ndarray:
    """(Q,) per query: the share of its documents (rows ``q``, languages ``doc_lang_codes``) in its own
    language; NaN for a query with no document or of unknown language."""
    same = doc_lang_codes == judged.query_lang_codes[q]
    n = np.bincount(q, minlength=judged.n_queries)
    hits = np.bincount(q[same], minlength=judged.n_queries)
    out = np.full(judged.n_queries, np.nan)
    ok = (n > 0) & (judged.query_lang_codes != 0)
    out[ok] = hits[ok] / n[ok]
    return out


def doc_lang_recall(ranking: Ranking, k: int) -> dict[str, tuple[float, int]]:
    """``{lang: (mean recall@k of that language's relevant documents, queries counted)}``."""
    judged = ranking.judged
    vocab_lang, judged_lang = ranking.vocab_lang, judged.lang  # may add language codes: before n_l
    n_l = len(judged.languages)
    rel = judged.relevant
    sizes = np.bincount(judged.q[rel] * n_l + judged_lang[rel], minlength=judged.n_queries * n_l)
    rows = np.flatnonzero(ranking.top(k))
    rows = rows[ranking.rows_relevant(rows)]
    found = np.bincount(ranking.q[rows] * n_l + vocab_lang[ranking.doc[rows]],
                        minlength=judged.n_queries * n_l)
    sizes = sizes.reshape(judged.n_queries, n_l)
    found = found.reshape(judged.n_queries, n_l)
    out: dict[str, tuple[float, int]] = {}
    for code in range(n_l):
        counted = sizes[:, code] > 0
        if counted.any():
            out[judged.languages.names[code]] = (float((found[counted, code] / sizes[counted, code]).mean()),
                                                 int(counted.sum()))
    return dict(sorted(out.items()))


def _macro_share(q: np.ndarray, lang: np.ndarray, n_q: int, names: list[str]) -> dict[str, float]:
    n_l = len(names)
    n = np.bincount(q, minlength=n_q)
    counts = np.bincount(q * n_l + lang, minlength=n_q * n_l).reshape(n_q, n_l)
    ok = n > 0
    if not ok.any():
        return {}
    share = (counts[ok] / n[ok, None]).mean(axis=0)
    return dict(sorted((names[c], float(share[c])) for c in range(n_l) if share[c] > 0))


def topk_lang_share(ranking: Ranking, k: int) -> dict[str, float]:
    """``{lang: mean share of the top k}`` over queries with a non-empty ranking (sums to 1)."""
    rows = np.flatnonzero(ranking.top(k))
    return _macro_share(ranking.q[rows], ranking.vocab_lang[ranking.doc[rows]], ranking.judged.n_queries,
                        ranking.judged.languages.names)


def relevant_lang_share(judged: Judged) -> dict[str, float]:
    """``{lang: mean share of the relevant documents}`` over the evaluated queries (sums to 1)."""
    rel, lang = judged.relevant, judged.lang
    return _macro_share(judged.q[rel], lang[rel], judged.n_queries, judged.languages.names)


__all__ = ["doc_lang_recall", "relevant_lang_share", "samelang_expected", "samelang_scores", "topk_lang_share"]
