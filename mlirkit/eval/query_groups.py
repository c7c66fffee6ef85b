"""Query groups: the unit of a paired test when queries are not independent.

The translations of one question share its difficulty: a system that answers the question well
usually does so in every language, so 8 translations of 240 questions are nearer 240 observations than
1,920. A test that counts them as independent overstates its evidence; with groups, the translations
of a question move together (:mod:`mlirkit.eval.significance`: one sign per group, the group's
statistic the mean over its queries).

``evaluate(query_groups=...)`` takes:

- ``None``: every query is its own unit;
- ``{qid: group}``: explicit groups, e.g. from topics whose records carry ``group_id``
  (:class:`~mlirkit.io.records.ParallelQuery`: ``mlirkit/ddtp/multi/test``; :func:`topic_groups`) or from
  a ``qid<TAB>group`` file (:func:`mlirkit.io.query_groups.read_query_groups`);
- the name of a rule from :data:`QUERY_GROUP_RULES` that derives the group from the query id and
  language: ``strip-lang`` drops the query's language where it is a whole leading or trailing part of
  the id (``q/123/de`` -> ``q/123``, ``de_56be4db0`` -> ``56be4db0``; an id without it is an error).

Every evaluated query must have a group. ``python -m mlirkit.eval --query-groups`` adds ``auto`` (the
default: the topics' groups when ``--topics`` carry them, else one unit per query), ``none`` and a file.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Mapping, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry
from mlirkit.eval.query_langs import how_to_give_query_langs

_SEPARATORS = ("/", "_", "-")


def strip_lang(qid: str, lang: str) -> str:
    """``qid`` without its language ``lang`` as a leading (``de_``, ``de/``, ``de-``) or trailing
    (``_de``, ``/de``, ``-de``) part."""
    for sep in _SEPARATORS:
        if qid.startswith(lang + sep) and len(qid) > len(lang) + 1:
            return qid[len(lang) + 1:]
    for sep in _SEPARATORS:
        if qid.endswith(sep + lang) and len(qid) > len(lang) + 1:
            return qid[:-len(lang) - 1]
    raise MlirkitError(f"query group rule strip-lang: query id {qid!r} does not start or end with its language "
                       f"{lang!r} (as '{lang}_...', '{lang}/...', '..._{lang}' or '.../{lang}'); "
                       "give the groups as a mapping or a qid<TAB>group file")


QUERY_GROUP_RULES: Registry[Callable[[str, str], str]] = Registry("query-group rule")
QUERY_GROUP_RULES.register("strip-lang", strip_lang)


def topic_groups(queries: Iterable) -> dict[str, str] | None:
    """``{qid: group_id}`` of topics read as :class:`~mlirkit.io.records.ParallelQuery`; None when the
    topics carry no groups."""
    groups = {q.query_id: q.group_id for q in queries if getattr(q, "group_id", None)}
    return groups or None


def resolve_query_groups(qids: Sequence[str], query_groups: Mapping[str, str] | str | None,
                         query_langs: Sequence[str] | None) -> dict[str, str] | None:
    """One group per evaluated query (``qids``; ``query_langs`` aligned with them, for a rule), or None
    for one unit per query."""
    if query_groups is None:
        return None
    if isinstance(query_groups, str):
        rule = QUERY_GROUP_RULES.get(query_groups)
        if query_langs is None:
            raise MlirkitError(f"query group rule {query_groups!r} needs query languages ({how_to_give_query_langs()})")
        return {q: rule(q, lang) for q, lang in zip(qids, query_langs)}
    if not isinstance(query_groups, Mapping):
        raise MlirkitError("query_groups must be a mapping {qid: group}, a rule name "
                           f"({', '.join(QUERY_GROUP_RULES.names())}) or None")
    missing = [q for q in qids if q not in query_groups]
    if missing:
        raise MlirkitError(f"no query group for {len(missing)} of {len(qids)} evaluated queries "
                           f"(e.g. {', '.join(map(repr, missing[:3]))})")
    out = {q: query_groups[q] for q in qids}
    bad = next((q for q, g in out.items() if not isinstance(g, str) or not g), None)
    if bad is not None:
        raise MlirkitError(f"query {bad!r}: its group must be a non-empty string, got {out[bad]!r}")
    return out


def describe_query_groups(groups: Mapping[str, str] | None, qids: Sequence[str], source: str | None) -> dict:
    """What a report says about the test unit: ``unit``, ``units``, ``queries`` and, for groups, their
    ``source`` and ``sizes`` (``{queries per group: groups}``)."""
    if groups is None:
        return {"unit": "query", "units": len(qids), "queries": len(qids)}
    sizes = Counter(Counter(groups[q] for q in qids).values())
    return {"unit": "query group", "source": source, "units": sum(sizes.values()), "queries": len(qids),
            "sizes": dict(sorted(sizes.items()))}


def unit_phrase(described: Mapping) -> str:
    """``"240 query groups (1,920 queries, 8 per group)"`` or ``"645 queries"``."""
    if described.get("unit") != "query group":
        return f"{described['units']:,} queries"
    sizes = described.get("sizes") or {}
    per = (f"{next(iter(sizes))} per group" if len(sizes) == 1
           else f"{min(sizes)}-{max(sizes)} per group")
    return f"{described['units']:,} query groups ({described['queries']:,} queries, {per})"


__all__ = ["QUERY_GROUP_RULES", "describe_query_groups", "resolve_query_groups", "strip_lang", "topic_groups",
           "unit_phrase"]
