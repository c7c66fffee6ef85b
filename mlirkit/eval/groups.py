"""Per-group tables: results by language family, genus, script or resource class of the queries.

As the DCL paper's Tables 5-6: each query's language is mapped to its group
(:mod:`mlirkit.base.language_metadata`: Glottolog family, WALS genus, ISO 15924 script, Joshi et al.
2020 resource class); a group's score for a run and metric is the **macro average over the group's
languages** of the per-language mean over queries,
``score(G) = mean_{l in G} mean_{q : lang(q) = l} m(q)``, so a language with many queries does not
dominate its group (``micro=True``: the plain mean over the group's queries instead; both from
:mod:`mlirkit.eval.means`). Per-query
scores come from :func:`mlirkit.eval.api.evaluate` (``EvaluationResult.per_query``; TLR@k and
samelang@k count only their counted queries). ``evaluate(..., group_by=[...])`` puts these tables in
the result and its reports (:mod:`mlirkit.eval.report`).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError
from mlirkit.base.language_metadata import GROUP_KEYS, UNKNOWN, language_group
from mlirkit.base.option_names import option
from mlirkit.eval.means import macro_mean, micro_mean
from mlirkit.eval.query_langs import how_to_give_query_langs


def group_scores(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], query_langs: Mapping[str, str] | str,
                 by: str, *, micro: bool = False) -> Any:
    """``{run: {metric: {qid: score}}}`` -> DataFrame indexed by group, columns ``(run, metric)``,
    plus ``languages`` (the group's languages present) and ``queries`` (their query count)."""
    import numpy as np
    import pandas as pd

    if by not in GROUP_KEYS:
        raise MlirkitError(f"{option('by', flag='--group-by')}: unknown key {by!r} (choose from {', '.join(GROUP_KEYS)})")
    if not per_query:
        raise MlirkitError("group_scores: no per-query scores")

    def lang_of(qid: str) -> str | None:
        return query_langs if isinstance(query_langs, str) else query_langs.get(qid)

    columns: dict[tuple[str, str], dict[str, float]] = {}
    members: dict[str, set[str]] = defaultdict(set)
    counts: dict[str, set[str]] = defaultdict(set)
    for run, metrics in per_query.items():
        for metric, scores in metrics.items():
            by_lang: dict[str, list[float]] = defaultdict(list)
            for qid, value in scores.items():
                lang = lang_of(qid)
                if lang is None or value is None:
                    continue
                by_lang[lang].append(float(value))
            groups: dict[str, list[tuple[str, list[float]]]] = defaultdict(list)
            for lang, values in by_lang.items():
                g = language_group(lang, by)
                groups[g].append((lang, values))
                members[g].add(lang)
            for qid in scores:
                lang = lang_of(qid)
                if lang is not None:
                    counts[language_group(lang, by)].add(qid)
            col = {}
            for g, items in groups.items():
                values = [v for _, vs in items for v in vs]
                col[g] = micro_mean(values) if micro else macro_mean(values, [la for la, vs in items for _ in vs])
            columns[(run, metric)] = col
    if not members:
        raise MlirkitError("group_scores: no query has a known language (give "
                           + how_to_give_query_langs() + ")")
    order = sorted(members, key=lambda g: (g == UNKNOWN, _sort_key(by, g)))
    table = pd.DataFrame({key: [col.get(g, np.nan) for g in order] for key, col in columns.items()}, index=order)
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["run", "metric"])
    table.index.name = by
    table[("", "languages")] = [", ".join(sorted(members[g])) for g in order]
    table[("", "queries")] = [len(counts[g]) for g in order]
    return table


def _sort_key(by: str, group: str) -> tuple:
    if by == "resource":
        return (-int(group.split()[-1]) if group.split()[-1].isdigit() else 0, group)
    if by == "resource_level":
        return ({"high": 0, "mid": 1, "low": 2}.get(group, 3), group)
    return (0, group)


__all__ = ["group_scores"]
