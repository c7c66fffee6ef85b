"""Model families: pooling, normalisation and query/document prompts of known HF encoders.

The table follows the models' own cards (the setups the SHIFT authors evaluated): multilingual-e5
("query: " / "passage: ", mean pooling), bge-m3 (CLS, no prompt), Qwen3-Embedding and gte-Qwen2
(last-token pooling, an instruction on the query side only, ending in ``"Query: "`` as in the SHIFT
authors' ``src/shift/models.py``), llama-nemotron-embed ("query: " /
"passage: ", mean pooling) and EmbeddingGemma ("task: search result | query: " / "title: none | text: ",
mean pooling). All are L2-normalised by their reference pipelines.

A model id is matched against each family's explicit list of HF ids and ``org/name`` glob patterns
(case-insensitive, whole id); nothing is guessed from substrings. Explicit options given to the
encoder always win over the family's defaults.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from mlirkit.base.registry import Registry

#: the web-search retrieval instruction of the Qwen3-Embedding / gte-Qwen2 / e5-instruct model cards
WEB_SEARCH_TASK = "Given a web search query, retrieve relevant passages that answer the query"

POOLINGS = ("mean", "cls", "last")


@dataclass(frozen=True)
class ModelFamily:
    """Defaults shared by a family of encoders."""

    name: str
    patterns: tuple[str, ...]  # HF ids or fnmatch globs over the whole lower-cased "org/name"
    pooling: str
    normalize: bool
    query_prefix: str = ""
    doc_prefix: str = ""
    note: str = ""

    def matches(self, model_id: str) -> bool:
        key = model_id.strip().lower()
        return any(fnmatch.fnmatchcase(key, p.lower()) for p in self.patterns)


FAMILIES: Registry[ModelFamily] = Registry("model family")


def _register(family: ModelFamily) -> None:
    FAMILIES.register(family.name, family)


_register(ModelFamily(
    "multilingual-e5",
    ("intfloat/multilingual-e5-small", "intfloat/multilingual-e5-base", "intfloat/multilingual-e5-large",
     "intfloat/e5-small-v2", "intfloat/e5-base-v2", "intfloat/e5-large-v2",
     "intfloat/e5-small", "intfloat/e5-base", "intfloat/e5-large"),
    pooling="mean", normalize=True, query_prefix="query: ", doc_prefix="passage: ",
))
_register(ModelFamily(
    "multilingual-e5-instruct",
    ("intfloat/multilingual-e5-large-instruct",),
    pooling="mean", normalize=True, query_prefix=f"Instruct: {WEB_SEARCH_TASK}\nQuery: ", doc_prefix="",
))
_register(ModelFamily(
    "bge-m3", ("baai/bge-m3",), pooling="cls", normalize=True,
    note="dense vectors only (no sparse or multi-vector output)",
))
_register(ModelFamily(
    "qwen3-embedding", ("qwen/qwen3-embedding-0.6b", "qwen/qwen3-embedding-4b", "qwen/qwen3-embedding-8b"),
    pooling="last", normalize=True, query_prefix=f"Instruct: {WEB_SEARCH_TASK}\nQuery: ", doc_prefix="",
    # "Query: " with its space, as the SHIFT authors' code writes it for Qwen3-Embedding and gte-Qwen2
    # (QWEN_QUERY_PROMPT, src/shift/models.py, github.com/yjoonjang/SHIFT @ c610626); the model card's
    # own prompt (config_sentence_transformers.json, the st encoder's) ends in "Query:" without it
))
_register(ModelFamily(
    "gte-qwen2", ("alibaba-nlp/gte-qwen2-1.5b-instruct", "alibaba-nlp/gte-qwen2-7b-instruct"),
    pooling="last", normalize=True, query_prefix=f"Instruct: {WEB_SEARCH_TASK}\nQuery: ", doc_prefix="",
    note="needs trust_remote_code=True",
))
_register(ModelFamily(
    "llama-nemotron-embed", ("nvidia/llama-nemotron-embed-1b-v2", "nvidia/llama-3.2-nv-embedqa-1b-v2"),
    pooling="mean", normalize=True, query_prefix="query: ", doc_prefix="passage: ",
    note="needs trust_remote_code=True",
))
_register(ModelFamily(
    "embeddinggemma", ("google/embeddinggemma-300m",),
    pooling="mean", normalize=True,
    query_prefix="task: search result | query: ", doc_prefix="title: none | text: ",
    note="the hf encoder does not apply the sentence-transformers Dense projection (768->3072->768) "
         "that the SHIFT authors' SentenceTransformer pipeline applies: use --encoder-class st (the "
         "default for a directory with modules.json when sentence-transformers is installed)",
))


def family_for(model_id: str | None) -> ModelFamily | None:
    """The family whose patterns match ``model_id`` (an HF id), or None."""
    if not model_id:
        return None
    hits = [FAMILIES.get(n) for n in FAMILIES.names() if FAMILIES.get(n).matches(model_id)]
    if len(hits) > 1:  # the table is wrong; tests check this never happens
        raise ValueError(f"model id {model_id!r} matches several families: {[h.name for h in hits]}")
    return hits[0] if hits else None


__all__ = ["FAMILIES", "ModelFamily", "POOLINGS", "WEB_SEARCH_TASK", "family_for"]
