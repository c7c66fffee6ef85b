"""MRC@k, mean rank correlation (Yang, Jiang & Baldwin, EMNLP MRL 2024, the MultiEuP-v2 paper): does a
question get the same ranking whatever language it is asked in?

For a question asked in several languages (a query group: :mod:`mlirkit.eval.query_groups`), its version
``q_a`` in language ``a`` and each version ``q_b`` in another language ``b``::

    U_ab      = top_k(q_a) ∪ top_k(q_b)
    rho_ab    = Spearman correlation of ( s(q_a, d) )_{d in U_ab} and ( s(q_b, d) )_{d in U_ab}
    RC(q_a)   = mean over the group's versions q_b in other languages of rho_ab   (undefined rho_ab left out)
    MRC@k(a)  = 100 * mean over the questions asked in a of RC(q_a)
    MRC@k     = mean over query languages of MRC@k(a)                   (range -100 ... 100, higher = more consistent)

``s`` is the retrieval score; ``top_k`` ranks by ``(-score, docid)``; Spearman uses average ranks for ties
and is undefined (left out) when either side is constant. A query whose group has no version in another
language is not counted. Per query the value is ``100 * RC(q)``, so MRC@k is the macro mean of
:mod:`mlirkit.eval.means` and the grouped paired test applies to it as to any metric.

**Scores on the union.** ``rho_ab`` needs ``q_a``'s scores on ``q_b``'s top k, which a run of ``q_a``
holds only when it is deep enough: :func:`mrc_scores` computes MRC from runs and refuses (one line) when a
score is missing; :func:`mrc_from_scores` (a score function, e.g. the embeddings' inner products) and
:func:`mrc_from_index` (an index directory searched as ``mlirkit.search`` searches it) compute it
from every score; ``python -m mlirkit.eval --mrc-from-index`` does so for each run with the searcher its
provenance sidecar records (:func:`mlirkit.search.replay.searcher_for_run`), checking the run's own scores. The SHIFT authors' follow-up (MIMO, ``compute_mrc``) computes the same figure from a
query x document similarity matrix.

Worked example (docs/evaluation.md): documents x, y, z, w; ``q_en`` scores (4, 3, 2, 1), ``q_de`` scores
(3, 4, 1, 2). k = 2: both top 2 are {x, y}, U = {x, y}, rho = -1, MRC@2 = -100. k = 3: the top 3 are
{x, y, z} and {y, x, w}, U = {x, y, z, w}, rho = 1 - 6 * 4 / (4 * 15) = 0.6: MRC@3 = 60 in both languages.
"""
from __future__ import annotations

import logging
from typing import Callable, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.top_k import top_k_columns
from mlirkit.eval.ranking import Ranking

logger = logging.getLogger(__name__)

#: queries per block of :func:`mrc_from_scores` (a block's scores are queries x documents)
QUERY_BLOCK = 1024


def rank_correlations(x: np.ndarray, y: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(P,) Spearman correlation of rows ``x[p]`` and ``y[p]`` over the columns where ``valid[p]``
    (average ranks for ties; NaN where either side is constant or fewer than 2 columns)."""
    from scipy.stats import rankdata

    rx = rankdata(np.where(valid, x, np.nan), axis=1, nan_policy="omit")
    ry = rankdata(np.where(valid, y, np.nan), axis=1, nan_policy="omit")
    n = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(valid, rx - np.nansum(rx, axis=1, keepdims=True) / n[:, None], 0.0)
        dy = np.where(valid, ry - np.nansum(ry, axis=1, keepdims=True) / n[:, None], 0.0)
        sxy, sxx, syy = (dx * dy).sum(axis=1), (dx * dx).sum(axis=1), (dy * dy).sum(axis=1)
        rho = sxy / np.sqrt(sxx * syy)
    rho[(n < 2) | (sxx <= 0) | (syy <= 0)] = np.nan
    return np.clip(rho, -1.0, 1.0)


def parallel_pairs(groups: Sequence[str], langs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Ordered pairs ``(a, b)`` of query positions: same group, different (known) languages."""
    from mlirkit.base.langs import canonical, is_unknown

    group_codes = np.unique(np.asarray(list(groups), dtype=object).astype(str), return_inverse=True)[1]
    lang_codes = np.unique(np.asarray([canonical(x) for x in langs], dtype=object).astype(str), return_inverse=True)[1]
    known = np.array([not is_unknown(x) for x in langs], dtype=bool)
    order = np.argsort(group_codes, kind="stable")
    bounds = np.flatnonzero(np.diff(group_codes[order])) + 1
    pa, pb = [], []
    for members in np.split(order, bounds):
        members = members[known[members]]
        if len(members) < 2:
            continue
        a, b = np.meshgrid(members, members, indexing="ij")
        keep = lang_codes[a] != lang_codes[b]
        pa.append(a[keep])
        pb.append(b[keep])
    if not pa:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(pa).astype(np.int64), np.concatenate(pb).astype(np.int64)


def union_columns(top_a: np.ndarray, top_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, 2k)`` documents of ``top_a ∪ top_b`` (rows of document codes, -1 = none) and which are valid
    (the second half without the documents already in the first)."""
    cols = np.concatenate([top_a, top_b], axis=1)
    dup = (top_b[:, :, None] == top_a[:, None, :]).any(axis=2)
    valid = cols >= 0
    valid[:, top_a.shape[1]:] &= ~dup
    return cols, valid


def _per_query(rho: np.ndarray, pa: np.ndarray, n_queries: int) -> np.ndarray:
    """(Q,) ``100 * mean rho`` over each query's pairs with a defined rho; NaN for none."""
    ok = ~np.isnan(rho)
    n = np.bincount(pa[ok], minlength=n_queries)
    total = np.bincount(pa[ok], weights=rho[ok], minlength=n_queries)
    out = np.full(n_queries, np.nan)
    out[n > 0] = 100.0 * total[n > 0] / n[n > 0]
    return out


# ------------------------------------------------------------------------------------------- from runs
def _top_codes(ranking: Ranking, k: int) -> np.ndarray:
    """(Q, k) document codes of each query's top k (-1 beyond a short ranking)."""
    top = np.full((ranking.judged.n_queries, k), -1, dtype=np.int64)
    rows = np.flatnonzero(ranking.top(k))
    top[ranking.q[rows], ranking.pos[rows]] = ranking.doc[rows]
    return top


def mrc_scores(ranking: Ranking, k: int, groups: Mapping[str, str], query_langs: Sequence[str], *,
               run_name: str = "run") -> np.ndarray:
    """(Q,) MRC@k of each evaluated query of a run (``100 * RC(q)``; NaN: no version in another language);
    ``groups`` ``{qid: question}``, ``query_langs`` one per evaluated query. A score the union needs and the
    run lacks is refused with one line that says how to get it (a deeper run, or :func:`mrc_from_index`)."""
    judged = ranking.judged
    qids = judged.qids
    pa, pb = parallel_pairs([groups[q] for q in qids], query_langs)
    top = _top_codes(ranking, k)
    cols, valid = union_columns(top[pa], top[pb])
    keys = ranking.q * ranking.n_vocab + ranking.doc
    order = np.argsort(keys)
    keys, scores = keys[order], ranking.score[order]

    def lookup(queries: np.ndarray) -> np.ndarray:
        want = queries[:, None] * ranking.n_vocab + np.maximum(cols, 0)
        at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        found = (keys[at] == want) if len(keys) else np.zeros(want.shape, dtype=bool)
        missing = valid & ~found
        if missing.any():
            p, j = np.argwhere(missing)[0]
            depth = int(ranking.lens.max()) if len(ranking.lens) else 0
            raise MlirkitError(
                f"mrc@{k}: run {run_name!r} has no score of query {qids[queries[p]]!r} for document "
                f"{ranking.vocab[cols[p, j]]!r}, which is in the top {k} of the same question in another language; "
                f"MRC needs each query's scores on the union of its and its translations' top {k}, and this run "
                f"holds {depth} hits per query: write runs that rank every document (mlirkit.search --hits "
                "<corpus size>) or compute MRC from the index's embeddings (mlirkit.eval --mrc-from-index, or "
                "mlirkit.eval.mrc.mrc_from_index)")
        return np.where(valid, scores[at] if len(keys) else 0.0, np.nan)

    rho = rank_correlations(lookup(pa), lookup(pb), valid)
    return _per_query(rho, pa, judged.n_queries)


# ----------------------------------------------------------------------------------- from every score
def mrc_from_scores(score_rows: Callable[[np.ndarray], np.ndarray], query_ids: Sequence[str],
                    query_langs: Sequence[str], groups: Mapping[str, str] | Sequence[str], doc_ids: Sequence[str],
                    k: int, *, block: int = QUERY_BLOCK) -> dict[str, float]:
    """``{qid: MRC@k}`` (``100 * RC(q)``; queries without a version in another language left out) from
    every score: ``score_rows(rows)`` gives the scores of the queries at positions ``rows`` for every
    document of ``doc_ids`` (an array ``len(rows) x len(doc_ids)``). Groups are scored together, in
    blocks of about ``block`` queries."""
    query_ids = list(query_ids)
    group_list = [groups[q] for q in query_ids] if isinstance(groups, Mapping) else list(groups)
    if len(group_list) != len(query_ids) or len(query_langs) != len(query_ids):
        raise ValueError("one group and one language per query expected")
    doc_rank = np.empty(len(doc_ids), dtype=np.int64)
    doc_rank[np.argsort(np.asarray(list(doc_ids), dtype=object))] = np.arange(len(doc_ids))
    pa_all, pb_all = parallel_pairs(group_list, query_langs)
    out = np.full(len(query_ids), np.nan)
    group_codes = np.unique(np.asarray(group_list, dtype=object).astype(str), return_inverse=True)[1]
    members = np.unique(pa_all)  # queries with a version in another language, a group's queries together
    members = members[np.argsort(group_codes[members], kind="stable")]
    ends = [*(np.flatnonzero(np.diff(group_codes[members])) + 1), len(members)]
    start = 0
    for end in ends:
        if end - start < block and end != len(members):
            continue
        rows = members[start:end]
        local = np.full(len(query_ids), -1, dtype=np.int64)
        local[rows] = np.arange(len(rows))
        sel = np.isin(pa_all, rows)
        pa, pb = local[pa_all[sel]], local[pb_all[sel]]
        scores = np.asarray(score_rows(rows))
        if scores.dtype not in (np.float32, np.float64):
            scores = scores.astype(np.float64)
        top = top_k_columns(scores, k, doc_rank)
        cols, valid = union_columns(top[pa], top[pb])
        x = scores[pa[:, None], cols].astype(np.float64)  # (P, 2k): no (P, n) copy, no float64 copy of the block
        y = scores[pb[:, None], cols].astype(np.float64)
        out[rows] = _per_query(rank_correlations(x, y, valid), pa, len(rows))
        start = end
    return {query_ids[i]: float(out[i]) for i in np.flatnonzero(~np.isnan(out))}


def mrc_from_embeddings(query_embeddings: np.ndarray, doc_embeddings: np.ndarray, query_ids: Sequence[str],
                        query_langs: Sequence[str], groups: Mapping[str, str] | Sequence[str],
                        doc_ids: Sequence[str], k: int) -> dict[str, float]:
    """:func:`mrc_from_scores` with inner-product scores (cosine for normalised vectors)."""
    docs = np.asarray(doc_embeddings, dtype=np.float32)
    queries = np.asarray(query_embeddings, dtype=np.float32)
    return mrc_from_scores(lambda rows: queries[rows] @ docs.T, query_ids, query_langs, groups, doc_ids, k)


def mrc_from_index(index_dir, topics, k: int, *, query_groups: Mapping[str, str] | str | None = None,
                   **searcher_options) -> dict[str, float]:
    """``{qid: MRC@k}`` of the topics searched in an index directory exactly as
    :class:`mlirkit.search.Searcher` searches it (``searcher_options``: ``query_shift``, ``alpha``,
    ``transform``, ``encoder``, ...), every document scored. ``topics``: records or a topics source;
    groups: the topics' ``group_id``, else ``query_groups`` (a mapping or a rule name)."""
    from mlirkit.search import Searcher

    return mrc_from_searcher(Searcher(index_dir, **searcher_options), topics, k, query_groups=query_groups)


#: largest difference allowed between a run's scores and the same scores recomputed from its index
#: (runs hold exact floats; the same bf16 encoder on another kind of CPU moves a score by about 1e-5)
SCORE_TOLERANCE = 1e-3


def mrc_from_searcher(searcher, topics, k: int, *, query_groups: Mapping[str, str] | str | None = None,
                      run: Mapping[str, Mapping[str, float]] | None = None, run_name: str = "run") -> dict[str, float]:
    """:func:`mrc_from_index` with an open :class:`mlirkit.search.Searcher` (e.g. the one a run came from,
    :func:`mlirkit.search.replay.searcher_for_run`). With ``run`` (``{qid: {docid: score}}``), every score the
    run holds for a query that is scored is checked against the recomputed one; a difference above
    :data:`SCORE_TOLERANCE` is one error (the run did not come from this searcher and these topics)."""
    from mlirkit.eval.query_groups import resolve_query_groups, topic_groups
    from mlirkit.io.topics import read_topics

    queries = read_topics(topics) if not isinstance(topics, (list, tuple)) else list(topics)
    qids, langs = [q.query_id for q in queries], [q.lang for q in queries]
    groups = topic_groups(queries) if query_groups is None else resolve_query_groups(qids, query_groups, langs)
    if groups is None:
        raise MlirkitError("MRC needs the questions' language versions: topics with group_id, or query_groups")
    vectors = searcher.encode_queries(queries)
    doc_ids = list(searcher.index.docids)
    if searcher.shift is not None:
        def scores_of(rows: np.ndarray) -> np.ndarray:
            return searcher.shift.scores(vectors[rows], [langs[i] for i in rows], searcher.shift_alpha)
    else:
        shards = getattr(searcher.index, "shards", None) or [searcher.index]
        docs = np.concatenate([np.asarray(s.indexed_vectors(), dtype=np.float32) for s in shards])

        def scores_of(rows: np.ndarray) -> np.ndarray:
            return vectors[rows] @ docs.T
    score_rows = scores_of if run is None else _checked_against(scores_of, run, qids, doc_ids, run_name,
                                                                k if _exhaustive(searcher) else 0)
    return mrc_from_scores(score_rows, qids, langs, groups, doc_ids, k)


def _exhaustive(searcher) -> bool:
    """Whether ``searcher`` ranks every document exactly (flat shards, no candidate re-scoring): only then is a
    run's own top k the top k of the recomputed scores."""
    from mlirkit.index.types import spec_of

    shards = getattr(searcher.index, "shards", None) or [searcher.index]
    return all(spec_of(s).name == "flat" for s in shards) and not getattr(searcher, "shift_candidates", None)


def _checked_against(scores_of: Callable[[np.ndarray], np.ndarray], run: Mapping[str, Mapping[str, float]],
                     qids: Sequence[str], doc_ids: Sequence[str], run_name: str,
                     k: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """``scores_of`` that compares each block's scores with the ones ``run`` holds (see :func:`mrc_from_searcher`)
    and, with ``k``, the run's own top k with the recomputed ranking: no document the run lacks may score above
    the lowest of the run's top k (a run of another index with the same documents, its scores all right, fails
    here)."""
    column = {d: j for j, d in enumerate(doc_ids)}

    def checked(rows: np.ndarray) -> np.ndarray:
        scores = scores_of(rows)
        for i, row in enumerate(rows):
            hits = run.get(qids[row]) or {}
            cols = [column.get(d, -1) for d in hits]
            if -1 in cols:
                raise MlirkitError(f"run {run_name!r}: document {list(hits)[cols.index(-1)]!r} of query {qids[row]!r} "
                                   "is not in the index the run's provenance names")
            diff = np.abs(scores[i, cols] - np.fromiter(hits.values(), dtype=np.float64, count=len(hits)))
            if len(diff) and diff.max() > SCORE_TOLERANCE:
                j = int(diff.argmax())
                raise MlirkitError(
                    f"run {run_name!r}: query {qids[row]!r} scores document {list(hits)[j]!r} "
                    f"{list(hits.values())[j]:.6g} in the run and {scores[i, cols[j]]:.6g} from its index: the run "
                    "was not searched with these topics in this index")
            top = sorted(hits.values(), reverse=True)[:k]
            if top:
                above = scores[i] > top[-1] + SCORE_TOLERANCE
                above[cols] = False
                if above.any():
                    j = int(np.flatnonzero(above)[np.argmax(scores[i][above])])
                    raise MlirkitError(
                        f"run {run_name!r}: query {qids[row]!r}: document {doc_ids[j]!r} scores {scores[i, j]:.6g} "
                        f"in the index its provenance names, above the run's top {len(top)} (down to {top[-1]:.6g}), "
                        "but the run does not hold it: the run was not searched in this index")
        return scores
    return checked


__all__ = ["QUERY_BLOCK", "SCORE_TOLERANCE", "mrc_from_embeddings", "mrc_from_index", "mrc_from_scores", "mrc_from_searcher", "mrc_scores", "parallel_pairs",
           "rank_correlations", "union_columns"]
