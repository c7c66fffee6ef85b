"""Topic (query) readers: BEIR ``queries.jsonl``, TSV, or an ir_datasets id.

- BEIR JSONL: ``_id`` (or ``id``), ``text``, optional ``lang``.
- TSV: ``qid<TAB>text[<TAB>lang]`` (Pyserini's topic TSV, with an optional language column).
- a BEIR dataset folder: its ``queries.jsonl`` (:mod:`mlirkit.io.folders`).
- ir_datasets id: ``query_id``, ``text``, language from the record's ``lang`` or ``queries_lang()``.

Topics whose records carry ``group_id`` (BEIR JSONL field ``group_id``; ir_datasets records of type
:class:`~mlirkit.io.records.ParallelQuery`, e.g. ``mlirkit/ddtp/multi/test``) are read as
:class:`~mlirkit.io.records.ParallelQuery`: the translations of one question share a group. Every query
of such topics must carry a non-empty ``group_id``.

A query without a language gets ``default_lang`` (``--default-lang``), else :data:`~mlirkit.base.langs.UNKNOWN`;
``"unknown"`` and ``"und"`` are read as unknown too. Ids, texts and languages are checked as in
:mod:`mlirkit.io.corpus` (:mod:`mlirkit.io.fields`: an integer id becomes its decimal text, any other
non-string id or text is an error).
"""
from __future__ import annotations

import os

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.base.langs import UNKNOWN, check_lang, is_unknown
from mlirkit.io.fields import check_id, check_text
from mlirkit.io.corpus import id_text_lang_tsv, ir_dataset_part
from mlirkit.io.files import read_jsonl_objects
from mlirkit.io.records import ParallelQuery, Query
from mlirkit.io.sources import SourceKind, file_format, source_kind


def read_topics(source: str | os.PathLike, *, default_lang: str | None = None) -> list[Query | ParallelQuery]:
    """The queries of ``source`` (module docstring): :class:`Query`, or :class:`ParallelQuery` for topics
    whose records carry a ``group_id``."""
    if source_kind(source) is SourceKind.DIRECTORY:
        from mlirkit.io.folders import beir_file

        source = beir_file(source, "queries")
    if source_kind(source) is SourceKind.FILE:
        rows = _jsonl(source) if file_format(source) == "jsonl" else (
            (*row, None) for row in id_text_lang_tsv(source, "qid"))
    else:
        rows = _ir_datasets(str(source))
    default = check_lang(default_lang, "query language") if default_lang is not None else UNKNOWN
    queries: list[Query | ParallelQuery] = []
    seen: set[str] = set()
    for where, qid, text, lang, group in rows:
        qid = check_id(qid, where, "query id")
        lang = check_lang(lang, where)
        if qid in seen:
            raise MlirkitError(f"{where}: duplicate query id {qid!r}")
        seen.add(qid)
        if not text.strip():
            raise MlirkitError(f"{where}: empty text for query {qid!r}")
        if queries and (group is not None) != isinstance(queries[0], ParallelQuery):
            raise MlirkitError(f"{where}: query {qid!r} " + ("has a group_id, the queries before it have none"
                                                             if group is not None else "has no group_id"))
        lang = default if is_unknown(lang) else lang
        queries.append(Query(qid, text, lang) if group is None
                       else ParallelQuery(qid, text, lang, check_id(group, where, "group_id")))
    if not queries:
        raise MlirkitError(f"{source}: no queries")
    return queries


def _jsonl(path):
    for line_no, obj in read_jsonl_objects(path):
        qid = obj.get("_id", obj.get("id"))
        if qid is None:
            raise format_error(path, line_no, "missing field '_id'")
        text = obj.get("text")
        if text is None:
            raise format_error(path, line_no, "missing field 'text'")
        where = f"{path}:{line_no}"
        yield where, check_id(qid, where, "query id"), check_text(text, where), obj.get("lang"), obj.get("group_id")


def _ir_datasets(dataset_id: str):
    queries, default = ir_dataset_part(dataset_id, "queries")
    for n, q in enumerate(queries, start=1):
        fields = q._asdict()
        yield (f"{dataset_id} (query {n})", q.query_id, fields.get("text", ""), fields.get("lang") or default,
               fields.get("group_id"))


__all__ = ["read_topics"]
