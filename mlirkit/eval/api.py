"""``evaluate(qrels, runs, metrics, ...)``: ranx metrics, TLR@k, PEER@k, MRC@k, language breakdowns and
paired tests for several runs at once, as one :class:`~mlirkit.eval.result.EvaluationResult`.

The main table's value of a metric is its macro mean over query languages, with the micro mean over
queries beside it (column ``"<metric> (micro)"``) when the queries have more than one language
(:mod:`mlirkit.eval.means`); with one query language the two are the same and only one is shown."""
from __future__ import annotations

import logging
import os
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.breakdowns import (doc_lang_recall, relevant_lang_share, samelang_expected, samelang_scores,
                                     topk_lang_share)
from mlirkit.eval.belonging import check_provenance, check_run_overlap
from mlirkit.eval.inputs import as_doc_langs, as_qrels, as_runs, run_sources
from mlirkit.eval.means import macro_mean, micro_column, micro_mean
from mlirkit.eval.metrics import MetricSpec, parse_metrics, ranx_per_query
from mlirkit.eval.mrc import mrc_scores
from mlirkit.eval.peer import VARIANTS, peer_scores, relevant_rank_by_lang
from mlirkit.eval.query_groups import describe_query_groups, resolve_query_groups
from mlirkit.eval.query_langs import how_to_give_query_langs, resolve_query_langs
from mlirkit.eval.ranking import Judged, Ranking
from mlirkit.eval.result import RESERVED_KEYS, EvaluationResult
from mlirkit.eval.significance import CORRECTIONS, TESTS, compare_runs
from mlirkit.eval.tlr import tlr_scores
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.option_names import option

logger = logging.getLogger(__name__)

EXPECTED_SUFFIX = " (expected)"


def expected_column(metric: str) -> str:
    """Column holding the share expected from the relevant set next to ``samelang@k``."""
    return metric + EXPECTED_SUFFIX


def _default_breakdown_k(specs: Sequence[MetricSpec]) -> int:
    for family in ("recall", "tlr", "samelang", "ndcg"):
        for s in specs:
            if s.family.name == family and s.k:
                return s.k
    return 20


def rank_table(k: int) -> str:
    """Title of the per-language table beside ``peer@k``: where each language's relevant documents rank."""
    return f"mean rank of the relevant documents by document language (top {k}; below it: {k + 1})"


def _from_mapping(values: Mapping[str, float], qids: list[str]) -> np.ndarray:
    return np.array([values.get(q, np.nan) for q in qids], dtype=np.float64)


def _to_dict(scores: np.ndarray, qids: list[str]) -> dict[str, float]:
    return {qids[i]: float(scores[i]) for i in np.flatnonzero(~np.isnan(scores))}


def evaluate(qrels: Mapping[str, Mapping[str, int]] | Any, runs: Mapping[str, Any] | Sequence[Any] | Any,
             metrics: Sequence[str], *, doc_langs: Mapping[str, str] | str | os.PathLike | None = None,
             query_langs: Mapping[str, str] | str | None = None, significance: str | None = "fisher",
             baseline: str | None = None, correction: str = "holm", max_p: float = 0.05,
             n_permutations: int = 1000, seed: int = 42, k: int | None = None,
             query_groups: Mapping[str, str] | str | None = None, group_by: Sequence[str] = (),
             group_micro: bool = False, allow_partial_overlap: bool = False,
             allow_provenance_mismatch: bool = False,
             precomputed: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None) -> EvaluationResult:
    """Evaluate ``runs`` (``{name: {qid: {docid: score}}}``) against ``qrels`` (``{qid: {docid: rel}}``).

    Each also comes as the user has it (:mod:`mlirkit.eval.inputs`): qrels as a ``ranx.Qrels``, a qrels
    file or an ir_datasets id; a run as :meth:`mlirkit.search.Searcher.search` results, a ``ranx.Run`` or
    a TREC run file, one alone or several in a dict or a list; ``doc_langs`` as an index directory, a
    corpus or an ir_datasets id. Anything else is refused with an error naming what was given.

    ``metrics`` are names such as ``ndcg@20 recall@20 mrr@10 map@100 precision@10 tlr@20 samelang@20 peer@20
    mrc@10`` (see :mod:`mlirkit.eval.metrics`). ``doc_langs`` ``{docid: lang}`` and ``query_langs`` (one
    language or ``{qid: lang}``) are needed for ``tlr``/``samelang`` and the per-language tables, ``doc_langs``
    for ``peer``; ``mrc`` needs ``query_langs`` and ``query_groups`` (the language versions of a question) and
    runs deep enough to hold the union of the versions' top k (:mod:`mlirkit.eval.mrc`), unless its per-query
    values come in ``precomputed`` (``{metric: {run: {qid: value}}}``, e.g. from
    :func:`mlirkit.eval.mrc.mrc_from_scores` on the embeddings).
    ``significance`` is ``"fisher"``, ``"student"`` or None; with ``baseline`` every run is tested
    against it, otherwise every pair; ``correction`` (``"holm"``, ``"bonferroni"``, ``"none"``)
    applies per metric across the comparisons; ``max_p`` is the threshold for the table marks.
    ``query_groups`` sets the unit of the tests (:mod:`mlirkit.eval.query_groups`): None (each query),
    ``{qid: group}`` (the translations of one question move together) or a rule name (``"strip-lang"``).
    ``group_by`` (``"family"``, ``"resource"``, ... of :mod:`mlirkit.eval.groups`) adds a table per key
    of query-language groups (``result.language_groups``; ``group_micro``: mean over the group's queries).
    Evaluated queries, tie-breaking and missing results: see :mod:`mlirkit.eval.ranking`.

    Runs and qrels that do not belong together are refused (:mod:`mlirkit.eval.belonging`): a run with
    results for fewer than half of the evaluated queries (``allow_partial_overlap=True`` scores it anyway),
    and a run file whose provenance sidecar names other topics or another collection than qrels given as a
    source (``allow_provenance_mismatch=True``).

    ``k``: the cut-off of the per-language recall and top-k share tables (default: the cut-off of the first
    recall, tlr, samelang or ndcg metric asked for, else 20).

    ``evaluate(...).to_ranx_report()`` is a ``ranx.Report`` (see :mod:`mlirkit.eval.ranx_interop`).
    """
    specs = parse_metrics(metrics)
    if significance is not None:
        TESTS.get(significance)
    CORRECTIONS.get(correction)
    if not 0 < max_p < 1:
        raise MlirkitError(f"max_p must be in (0, 1), got {max_p}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise MlirkitError(f"{option('seed')} must be an integer >= 0, got {seed!r}")
    qrels_source = qrels if isinstance(qrels, (str, os.PathLike)) else None
    sources = run_sources(runs)
    qrels = as_qrels(qrels)
    runs = as_runs(runs)
    if qrels_source is not None and sources:
        check_provenance(qrels_source, sources, runs, allow=allow_provenance_mismatch)
    doc_langs = as_doc_langs(doc_langs)
    for name in runs:
        if not isinstance(name, str) or not name or name in RESERVED_KEYS or name.startswith("_"):
            raise MlirkitError(f"invalid run name {name!r} (non-empty, not starting with '_')")
    if baseline is not None and baseline not in runs:
        from mlirkit.base.registry import did_you_mean

        raise MlirkitError(f"baseline {baseline!r} is not one of the runs{did_you_mean(baseline, list(runs))}")
    precomputed = dict(precomputed or {})
    for metric in precomputed:
        if metric not in [s.name for s in specs]:
            raise MlirkitError(f"precomputed scores of {metric!r}, which is not one of the metrics")
    needs_docs = [s for s in specs if s.kind in ("tlr", "samelang", "peer")]
    if needs_docs and doc_langs is None:
        raise MlirkitError(f"{needs_docs[0].name} needs document languages ({option('doc_langs')})")
    needs_queries = [s for s in specs if s.kind in ("tlr", "samelang", "mrc")]
    if needs_queries and query_langs is None:
        raise MlirkitError(f"{needs_queries[0].name} needs query languages ({how_to_give_query_langs()})")

    if group_by and query_langs is None:
        raise MlirkitError(f"{option('group_by')} needs query languages ({how_to_give_query_langs()})")

    judged = Judged.from_qrels(qrels)
    qids = judged.qids
    for name, run in runs.items():
        check_run_overlap(qids, run, name, allow=allow_partial_overlap)
    info: dict = {"queries_evaluated": judged.n_queries, "qrels_queries_without_relevant": judged.dropped_queries,
                  "runs": {}}
    q_langs = resolve_query_langs(qids, query_langs)  # all unknown without query_langs
    info["query_languages"] = {str(k): int(v) for k, v in zip(*np.unique(q_langs, return_counts=True))}
    multilingual = len(info["query_languages"]) > 1
    groups = resolve_query_groups(qids, query_groups, None if query_langs is None else q_langs)
    info["test_unit"] = describe_query_groups(groups, qids, query_groups if isinstance(query_groups, str)
                                              else None if groups is None else "mapping")
    mrc = [s for s in specs if s.kind == "mrc" and s.name not in precomputed]
    if mrc and groups is None:
        raise MlirkitError(f"{mrc[0].name} needs the language versions of each question: topics with group_id "
                           f"or {option('query_groups')}")
    with_langs = doc_langs is not None
    if with_langs:
        judged.set_languages(doc_langs, q_langs, refuse_unmet=any(s.kind in ("tlr", "samelang") for s in specs))
        unknown_rel = int((judged.relevant & (judged.lang == 0)).sum())
        info["relevant_docs_unknown_language"] = unknown_rel
        info["queries_unknown_language"] = int((judged.query_lang_codes == 0).sum())
        if unknown_rel:
            logger.warning("%d relevant judgements are for documents of unknown language "
                           "(excluded from TLR target sets)", unknown_rel)
    bk = k or _default_breakdown_k(specs)

    def mean(values: np.ndarray) -> float:
        return macro_mean(values, q_langs) if multilingual else micro_mean(values)

    per_query: dict[str, dict[str, dict[str, float]]] = {}
    rows: dict[str, dict[str, float]] = {}
    lang_recall: dict[str, dict[str, float]] = {}
    lang_recall_n: dict[str, int] = {}
    mix: dict[str, dict[str, float]] = {}
    counted: dict[str, int] = {}
    rank_by_lang: dict[int, dict[str, dict[str, float]]] = {}  # PEER's k -> run -> {doc lang: mean rank}
    expected = samelang_expected(judged) if any(s.kind == "samelang" for s in specs) else None
    for name, run in runs.items():
        ranking = Ranking(judged, run, name)
        scores: dict[str, np.ndarray] = {}
        if any(s.kind == "ranx" for s in specs):
            qrels_tl, run_tl = ranking.typed_lists()
            scores.update(ranx_per_query(qrels_tl, run_tl, specs))
        for s in specs:
            if s.kind == "tlr":
                scores[s.name] = tlr_scores(ranking, s.k)
            elif s.kind == "samelang":
                scores[s.name] = samelang_scores(ranking, s.k)
            elif s.kind == "peer":
                scores[s.name] = peer_scores(ranking, s.k, variant=VARIANTS[s.family.name])
            elif s.kind == "mrc":
                scores[s.name] = (_from_mapping(precomputed[s.name].get(name, {}), qids) if s.name in precomputed
                                  else mrc_scores(ranking, s.k, groups, q_langs, run_name=name))
            if s.family.counts:
                counted[s.name] = int((~np.isnan(scores[s.name])).sum())
        per_query[name] = {s.name: _to_dict(scores[s.name], qids) for s in specs}
        row: dict[str, float] = {}
        for s in specs:
            row[s.name] = mean(scores[s.name])
            if multilingual:
                row[micro_column(s.name)] = micro_mean(scores[s.name])
            if s.kind == "samelang":
                row[expected_column(s.name)] = mean(np.where(np.isnan(scores[s.name]), np.nan, expected))
        rows[name] = row
        info["runs"][name] = {"queries_without_results": ranking.missing_queries,
                              "queries_not_evaluated": ranking.ignored_queries,
                              **{f"{s.name} counted": int((~np.isnan(scores[s.name])).sum())
                                 for s in specs if s.kind == "samelang"}}
        if with_langs:
            by_lang = doc_lang_recall(ranking, bk)
            lang_recall[name] = {lang: v for lang, (v, _) in by_lang.items()}
            lang_recall_n.update({lang: n for lang, (_, n) in by_lang.items()})
            mix[name] = topk_lang_share(ranking, bk)
            for k in sorted({s.k for s in specs if s.kind == "peer"}):
                rank_by_lang.setdefault(k, {})[name] = {lang: v for lang, (v, _) in
                                                        relevant_rank_by_lang(ranking, k).items()}

    import pandas as pd

    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "run"
    per_language: dict[str, pd.DataFrame] = {}
    if with_langs:
        rec = pd.DataFrame.from_dict(lang_recall, orient="index").sort_index(axis=1)
        rec.loc["(queries)"] = pd.Series(lang_recall_n)
        per_language[f"recall@{bk} by document language"] = _ordered(rec)
        share = pd.DataFrame.from_dict(mix, orient="index").fillna(0.0)
        share.loc["(relevant)"] = pd.Series(relevant_lang_share(judged))
        per_language[f"top-{bk} language share"] = _ordered(share.fillna(0.0))
        for k, by_run in rank_by_lang.items():
            per_language[rank_table(k)] = _ordered(pd.DataFrame.from_dict(by_run, orient="index"))
    if multilingual:
        for lang in sorted(info["query_languages"]):
            subset = {q for q, ql in zip(qids, q_langs) if ql == lang}
            per_language[f"query language {lang}"] = _by_query_subset(per_query, specs, subset)
    language_groups = {}
    if group_by:
        from mlirkit.eval.groups import group_scores

        lang_of = dict(zip(qids, q_langs))
        language_groups = {key: group_scores(per_query, lang_of, key, micro=group_micro) for key in group_by}
    comparisons = []
    if significance is not None and len(runs) > 1:
        comparisons = compare_runs(per_query, [s.name for s in specs], test=significance, baseline=baseline,
                                   correction=correction, max_p=max_p, n_permutations=n_permutations, seed=seed,
                                   query_groups=groups)
    settings = {"metrics": [s.name for s in specs], "significance": significance, "baseline": baseline,
                "correction": correction, "max_p": max_p, "n_permutations": n_permutations, "seed": seed,
                "breakdown_k": bk if with_langs else None,
                "mean": "macro over query languages" if multilingual else "over queries",
                "query_groups": query_groups if isinstance(query_groups, str) or query_groups is None else "mapping",
                "group_by": list(group_by), "group_micro": group_micro}
    return EvaluationResult(table=table, per_query=per_query, per_language=per_language, significance=comparisons,
                            counted=counted, settings=settings, info=info, language_groups=language_groups)


def _ordered(df):
    """Columns by language name, ``und`` last."""
    cols = sorted(df.columns, key=lambda c: (c == UNKNOWN, str(c)))
    return df[cols]


def _by_query_subset(per_query, specs: Sequence[MetricSpec], subset: set[str]):
    import pandas as pd

    rows = {}
    for name, by_metric in per_query.items():
        rows[name] = {s.name: micro_mean({q: v for q, v in by_metric[s.name].items() if q in subset}) for s in specs}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.loc["(queries)"] = float(len(subset))
    return df


__all__ = ["evaluate", "expected_column", "rank_table"]
