"""Request and response shapes of the search service, with every limit declared (docs/serve.md)."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_QUERY_CHARS", "MAX_K", "MAX_BATCH", "MAX_LANG_CHARS", "SNIPPET_CHARS", "SearchRequest",
           "BatchQuery", "BatchRequest", "LanguageOut", "HitOut", "SearchResponse", "BatchResponse",
           "DocumentOut", "HealthOut"]

MAX_QUERY_CHARS = 1000  # characters of one query
MAX_K = 100             # hits per query
MAX_BATCH = 64          # queries in one batch request
MAX_LANG_CHARS = 35     # a BCP-47 code's longest useful length
SNIPPET_CHARS = 240     # characters of a hit's text snippet

Query = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the query text, any language")
Lang = Field(default=None, min_length=1, max_length=MAX_LANG_CHARS,
             description="the query's language (a code such as de); null: identified from the text")
K = Field(default=10, ge=1, le=MAX_K, strict=True, description="hits to return (a JSON integer: true is no count)")
Shift = Field(default=True, description="score with the query-time shift of the query's language (when the "
                                        "service has one)")
Alpha = Field(default=None, ge=0.0, le=1.0, description="the shift's strength for this request (null: the service's)")
Fusion = Field(default=False, description="fuse with BM25 (reciprocal rank fusion; when the service has a lexical index)")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(_Strict):
    query: str = Query
    k: int = K
    lang: Optional[str] = Lang
    shift: bool = Shift
    alpha: Optional[float] = Alpha
    fusion: bool = Fusion


class BatchQuery(_Strict):
    query: str = Query
    lang: Optional[str] = Lang


class BatchRequest(_Strict):
    queries: list[BatchQuery] = Field(min_length=1, max_length=MAX_BATCH, description="the queries")
    k: int = K
    shift: bool = Shift
    alpha: Optional[float] = Alpha
    fusion: bool = Fusion


class LanguageOut(BaseModel):
    lang: str
    how: str
    detected: Optional[str] = None
    confidence: Optional[float] = None


class HitOut(BaseModel):
    doc_id: str
    score: float
    lang: str
    snippet: Optional[str] = None


class SearchResponse(BaseModel):
    query: str
    language: LanguageOut
    shift: bool
    alpha: Optional[float] = None
    fusion: bool = False
    hits: list[HitOut]


class BatchResponse(BaseModel):
    results: list[SearchResponse]


class DocumentOut(BaseModel):
    doc_id: str
    lang: str
    text: Optional[str] = None


class HealthOut(BaseModel):
    status: Literal["ok", "loading"]
    index: str
    documents: int
    shift: bool
    lexical: bool
    texts: bool
