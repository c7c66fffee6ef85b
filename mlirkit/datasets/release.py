"""Reader for the SHIFT authors' processed release (HF dataset ``yjoonjang/mlir-benchmarks``).

Layout under a data root (see :mod:`mlirkit.datasets.sources`)::

    mlir-benchmarks/MLIR-{en,zh,vi,hi}/{Belebele,MLQA,XQuAD,MultiEup}_test/{queries,corpus,qrels}.jsonl
    mlir-benchmarks/MMLIR/<same benchmark folders>      (queries in every language, with "lang")

``queries.jsonl``: ``{"_id", "text"[, "lang"]}`` (or ``{qid: text}``); ``corpus.jsonl``:
``{doc_id: {"text", "lang"}}``; ``qrels.jsonl``: ``{qid: {doc_id: 1, ...}}`` (the SHIFT authors' release layout).
"""
from __future__ import annotations

from mlirkit.base.errors import format_error

from mlirkit.datasets._io import read_jsonl
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.io.records import Doc, Query
from mlirkit.datasets.sources import SourceFile, all_local, fetch

RELEASE_DIR = "mlir-benchmarks"
RELEASE_URL = "https://huggingface.co/datasets/yjoonjang/mlir-benchmarks"
RELEASE_QUERY_LANGS = ("en", "zh", "vi", "hi")


def variant_dir(query_lang: str | None) -> str:
    """``MMLIR`` for multilingual queries (``query_lang=None``), else ``MLIR-{lang}``."""
    return "MMLIR" if query_lang is None else f"MLIR-{query_lang}"


def release_files(benchmark: str, query_lang: str | None) -> list[SourceFile]:
    base = f"{RELEASE_DIR}/{variant_dir(query_lang)}/{benchmark}"
    how = f"{RELEASE_URL} (folder {variant_dir(query_lang)}/{benchmark})"
    return [SourceFile(f"{base}/{name}.jsonl", None, how) for name in ("queries", "corpus", "qrels")]


def release_available(benchmark: str, query_lang: str | None) -> bool:
    if query_lang is not None and query_lang not in RELEASE_QUERY_LANGS:
        return False
    return all_local(release_files(benchmark, query_lang))


def where_release(benchmark: str, query_lang: str | None) -> str:
    return (f"put the SHIFT authors' processed release ({RELEASE_URL}) folder {variant_dir(query_lang)}/{benchmark} "
            f"at {RELEASE_DIR}/{variant_dir(query_lang)}/{benchmark}/ under a data root")


def read_release(benchmark: str, query_lang: str | None) -> Collection:
    """The release folder as a :class:`Collection`; mono-language queries get ``lang = query_lang``."""
    qpath, cpath, rpath = (fetch(sf, download=False) for sf in release_files(benchmark, query_lang))
    queries = []
    for line, obj in read_jsonl(qpath):
        if "_id" in obj:
            qid, text = obj["_id"], obj.get("text")
            lang = obj.get("lang") or query_lang
        elif len(obj) == 1:
            (qid, text), lang = next(iter(obj.items())), query_lang
        else:
            raise format_error(qpath, line, "expected {\"_id\", \"text\"} or {qid: text}")
        if not isinstance(text, str) or not lang:
            raise format_error(qpath, line, "query needs a string 'text' and a language ('lang' in MMLIR)")
        queries.append(Query(str(qid), text, str(lang)))
    docs = []
    for line, obj in read_jsonl(cpath):
        for doc_id, rec in obj.items():
            if not isinstance(rec, dict) or not isinstance(rec.get("text"), str) or not rec.get("lang"):
                raise format_error(cpath, line, f"document {doc_id!r} needs 'text' and 'lang'")
            docs.append(Doc(str(doc_id), rec["text"], str(rec["lang"]).lower()))
    qrels: dict[str, dict[str, int]] = {}
    for line, obj in read_jsonl(rpath):
        for qid, rels in obj.items():
            if not isinstance(rels, dict):
                raise format_error(rpath, line, f"qrels of {qid!r} should be an object {{doc_id: 1}}")
            qrels.setdefault(str(qid), {}).update({str(d): int(r) for d, r in rels.items()})
    return Collection(docs, queries, qrels_from_dict(qrels))


__all__ = ["RELEASE_QUERY_LANGS", "read_release", "release_available", "release_files", "variant_dir",
           "where_release"]
