"""The records that flow through mlirkit: every document and query carries its language.

They are also the record types of mlirkit's ir_datasets ids. This module deliberately does not use
``from __future__ import annotations``: ir_datasets reads the field annotations at runtime (its
``export`` command writes blank lines for fields whose annotation is a string), so they must be real types.
"""
from typing import NamedTuple


class Doc(NamedTuple):
    """A document with its language (e.g. ``de``; :data:`mlirkit.base.langs.UNKNOWN` when not known;
    ``dt`` for Dutch in mMARCO-derived data)."""

    doc_id: str
    text: str
    lang: str

    def default_text(self) -> str:
        return self.text


class Query(NamedTuple):
    """A query with its language (:data:`mlirkit.base.langs.UNKNOWN` when not known)."""

    query_id: str
    text: str
    lang: str

    def default_text(self) -> str:
        return self.text


class ParallelDoc(NamedTuple):
    """One language version of an aligned group: ``doc_id = f"{group_id}/{lang}"``."""

    doc_id: str
    text: str
    lang: str
    group_id: str

    def default_text(self) -> str:
        return self.text


class ParallelQuery(NamedTuple):
    """A query that is one language version of a translated question: ``group_id`` names the question,
    shared by its translations. A paired test moves a group's queries together
    (:mod:`mlirkit.eval.query_groups`); ``mlirkit/ddtp/...`` queries are of this type."""

    query_id: str
    text: str
    lang: str
    group_id: str

    def default_text(self) -> str:
        return self.text


__all__ = ["Doc", "ParallelDoc", "ParallelQuery", "Query"]
