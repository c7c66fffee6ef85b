"""The records that flow through mlirkit: every document and query carries its language."""
from __future__ import annotations

from typing import NamedTuple


class Doc(NamedTuple):
    doc_id: str
    text: str
    lang: str  # mlirkit.langs.UNKNOWN when not known


class Query(NamedTuple):
    query_id: str
    text: str
    lang: str  # mlirkit.langs.UNKNOWN when not known
