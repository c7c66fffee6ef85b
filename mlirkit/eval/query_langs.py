"""The language of each query: one language for all (``--default-lang``) or per query from topics."""
from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, canonical, check_lang, did_you_mean_lang, is_unknown, meets
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


def check_query_langs_meet(query_langs: Sequence[str | None], doc_langs: Iterable[str | None]) -> None:
    """Refuse a known query language that meets no document language (:func:`mlirkit.base.langs.meets`):
    its samelang would be 0 and its TLR plain recall, a bias figure from tags that differ. The rule: every
    known query language must meet the language of at least one document (documents of unknown language
    meet nothing); a collection whose documents all have unknown language is not checked (no language
    figure is computed from it)."""
    docs = sorted({canonical(d) for d in doc_langs if not is_unknown(d)})  # type: ignore[type-var]
    if not docs:
        return
    for lang in sorted({q for q in query_langs if not is_unknown(q)}):  # type: ignore[type-var]
        if not any(meets(lang, d) for d in docs):
            flag = "--default-lang or the topics' languages" if in_cli() else "query_langs"
            raise MlirkitError(f"query language {lang!r} ({flag}) meets no document language: the documents' "
                               f"languages are {', '.join(docs)}{did_you_mean_lang(lang, docs)}")


def read_query_langs(topics: str | os.PathLike, default_lang: str | None = None) -> dict[str, str]:
    """``{qid: lang}`` from a topics file or ir_datasets id, via :func:`mlirkit.io.topics.read_topics`
    (BEIR ``queries.jsonl`` with ``lang``, TSV ``qid<TAB>text<TAB>lang``)."""
    from mlirkit.io.topics import read_topics

    return {q.query_id: q.lang for q in read_topics(topics, default_lang=default_lang)}


__all__ = ["check_query_langs_meet", "how_to_give_query_langs", "read_query_langs", "resolve_query_langs"]
