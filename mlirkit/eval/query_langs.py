"""The language of each query: one language for all (``--default-lang``) or per query from topics."""
from __future__ import annotations

import os
from typing import Mapping, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, check_lang
from mlirkit.base.option_names import in_cli


def how_to_give_query_langs() -> str:
    """Where query languages come from, for a message: ``--default-lang or --topics`` in a CLI, else ``query_langs``."""
    return "--default-lang or --topics" if in_cli() else "query_langs"


def resolve_query_langs(qids: Sequence[str], query_langs: Mapping[str, str] | str | None) -> list[str]:
    """One language per query id; a mapping must cover every query (the error names the missing ones)."""
    if query_langs is None:
        return [UNKNOWN] * len(qids)
    if isinstance(query_langs, str):
        if not query_langs.strip():
            raise MlirkitError(f"invalid query language {query_langs!r}")
        return [check_lang(query_langs, "query language")] * len(qids)
    if not isinstance(query_langs, Mapping):
        raise MlirkitError("query_langs must be a language code or a mapping {qid: lang}")
    missing = [q for q in qids if q not in query_langs]
    if missing:
        raise MlirkitError(f"no language for {len(missing)} of {len(qids)} evaluated queries "
                           f"(e.g. {', '.join(map(repr, missing[:3]))}); give "
                           + ("--default-lang or topics covering them" if in_cli() else "query_langs covering them"))
    return [check_lang(query_langs[q], f"language of query {q!r}") for q in qids]


def read_query_langs(topics: str | os.PathLike, default_lang: str | None = None) -> dict[str, str]:
    """``{qid: lang}`` from a topics file or ir_datasets id, via :func:`mlirkit.io.topics.read_topics`
    (BEIR ``queries.jsonl`` with ``lang``, TSV ``qid<TAB>text<TAB>lang``)."""
    from mlirkit.io.topics import read_topics

    return {q.query_id: q.lang for q in read_topics(topics, default_lang=default_lang)}


__all__ = ["read_query_langs", "resolve_query_langs"]
