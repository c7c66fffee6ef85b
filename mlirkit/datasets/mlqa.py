"""MLQA as a multilingual retrieval benchmark, built as the SHIFT authors built it (partly parallel).

Source: ``MLQA_V1.zip`` (https://dl.fbaipublicfiles.com/MLQA/MLQA_V1.zip, CC BY-SA 3.0), files
``MLQA_V1/test/test-context-{c}-question-{q}.json`` (SQuAD layout), read from the zip or extracted.

Construction (SHIFT ``build_mlqa``), single query language ``q``: the corpus pools the contexts of the
files ``(c, q)`` for the 7 context languages, de-duplicated by md5 of the exact text, ids
``doc_{c}_{n}``; queries are the distinct stripped question texts in order of first appearance, ids
``q_{n}``; a query's relevant documents are the contexts it is asked about (only the languages where
MLQA has that instance: partly parallel). Multilingual variant: the corpus pools all 49 files; query
``{q}_{mlqa_id}`` has as relevant every context that carries that MLQA id.
"""
from __future__ import annotations

import hashlib
import zipfile
from collections import defaultdict

from mlirkit.base.errors import format_error

from mlirkit.datasets import release
from mlirkit.datasets._io import read_json
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.io.records import Doc, Query
from mlirkit.datasets.sources import SourceFile, all_local, fetch_all, locate

NAME = "mlqa"
RELEASE_NAME = "MLQA_test"
LICENCE = "CC BY-SA 3.0"
LANGS = ("ar", "de", "en", "es", "hi", "vi", "zh")
ZIP = SourceFile("mlqa/MLQA_V1.zip", "https://dl.fbaipublicfiles.com/MLQA/MLQA_V1.zip",
                 f"https://github.com/facebookresearch/MLQA (MLQA_V1.zip, {LICENCE})")
SIZE = "test split; en queries: 11,590 QA instances (fewer distinct questions); contexts of 7 languages"


def member(c: str, q: str) -> str:
    return f"MLQA_V1/test/test-context-{c}-question-{q}.json"


def pairs(query_langs: list[str], multilingual: bool) -> list[tuple[str, str]]:
    return [(c, q) for c in LANGS for q in (LANGS if multilingual else query_langs)]


def extracted_files(pair_list: list[tuple[str, str]]) -> list[SourceFile]:
    return [SourceFile(f"mlqa/{member(c, q)}", None, f"{member(c, q)} extracted from MLQA_V1.zip") for c, q in pair_list]


def _items(path: object, doc: object) -> list[tuple[str, str, str]]:
    """``[(context, qa_id, question)]`` in file order (as the HF ``mlqa`` loader yields rows)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise format_error(path, None, "expected a SQuAD document {\"data\": [...]}")
    out = []
    for i, art in enumerate(doc["data"]):
        for j, par in enumerate(art.get("paragraphs", []) if isinstance(art, dict) else []):
            if not isinstance(par, dict) or not isinstance(par.get("context"), str):
                raise format_error(path, None, f"data[{i}].paragraphs[{j}] needs 'context'")
            for k, qa in enumerate(par.get("qas", [])):
                if not isinstance(qa, dict) or not isinstance(qa.get("id"), str) or not isinstance(qa.get("question"), str):
                    raise format_error(path, None, f"data[{i}].paragraphs[{j}].qas[{k}] needs 'id' and 'question'")
                out.append((par["context"], qa["id"], qa["question"]))
    return out


def _read_pairs(pair_list: list[tuple[str, str]], alternative: str = "") -> dict[tuple[str, str], list]:
    extracted = extracted_files(pair_list)
    if all_local(extracted):
        return {(c, q): _items(locate(sf.relpath), read_json(locate(sf.relpath))) for (c, q), sf in zip(pair_list, extracted)}
    zpath = fetch_all([ZIP], alternative=alternative)[ZIP.relpath]
    out = {}
    try:
        with zipfile.ZipFile(zpath) as zf:
            names = set(zf.namelist())
            for c, q in pair_list:
                if member(c, q) not in names:
                    raise format_error(zpath, None, f"zip has no member {member(c, q)}")
                out[(c, q)] = _items(f"{zpath}!{member(c, q)}", read_json(zpath, zf.read(member(c, q))))
    except zipfile.BadZipFile as e:
        raise format_error(zpath, None, f"not a zip file ({e})") from None
    return out


def build(data: dict[tuple[str, str], list], query_langs: list[str], multilingual: bool) -> Collection:
    docs: list[Doc] = []
    by_hash: dict[str, str] = {}
    qid_to_docs: dict[str, set[str]] = defaultdict(set)
    for c, q in pairs(query_langs, multilingual):
        for context, qa_id, _ in data[(c, q)]:
            h = hashlib.md5(context.encode("utf-8")).hexdigest()
            doc_id = by_hash.get(h)
            if doc_id is None:
                doc_id = by_hash[h] = f"doc_{c}_{len(docs)}"
                docs.append(Doc(doc_id, context, c))
            qid_to_docs[qa_id].add(doc_id)
    queries: dict[str, Query] = {}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    if multilingual:
        for c, q in pairs(query_langs, True):
            for _, qa_id, question in data[(c, q)]:
                qid = f"{q}_{qa_id}"
                if qid in queries:
                    continue
                queries[qid] = Query(qid, question, q)
                for doc_id in qid_to_docs[qa_id]:
                    qrels[qid][doc_id] = 1
    else:
        q = query_langs[0]
        by_text: dict[str, str] = {}
        for c in LANGS:
            for context, _, question in data[(c, q)]:
                h = hashlib.md5(question.strip().encode("utf-8")).hexdigest()
                qid = by_text.get(h)
                if qid is None:
                    qid = by_text[h] = f"q_{len(queries)}"
                    queries[qid] = Query(qid, question, q)
                qrels[qid][by_hash[hashlib.md5(context.encode("utf-8")).hexdigest()]] = 1
    return Collection(docs, [queries[k] for k in sorted(queries)], qrels_from_dict(qrels))


def load(query_lang: str | None) -> Collection:
    q_langs = list(LANGS) if query_lang is None else [query_lang]
    multi = query_lang is None
    pair_list = pairs(q_langs, multi)
    local = all_local(extracted_files(pair_list)) or locate(ZIP.relpath) is not None
    if not local and release.release_available(RELEASE_NAME, query_lang):
        return release.read_release(RELEASE_NAME, query_lang)
    alternative = (f"extract MLQA_V1/test/*.json under mlqa/; or {release.where_release(RELEASE_NAME, query_lang)}"
                   if multi or query_lang in release.RELEASE_QUERY_LANGS else "extract MLQA_V1/test/*.json under mlqa/")
    return build(_read_pairs(pair_list, alternative), q_langs, multi)


def available(query_lang: str | None) -> bool:
    pair_list = pairs(list(LANGS) if query_lang is None else [query_lang], query_lang is None)
    return (all_local(extracted_files(pair_list)) or locate(ZIP.relpath) is not None
            or release.release_available(RELEASE_NAME, query_lang))


__all__ = ["LANGS", "LICENCE", "NAME", "SIZE", "available", "build", "load", "member"]
