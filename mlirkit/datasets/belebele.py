"""Belebele as a multilingual retrieval benchmark, built as the SHIFT authors built it.

Source: ``facebook/belebele`` ``data/{flores_code}.jsonl`` (CC BY-SA 4.0). Construction (SHIFT
``build_benchmarks.py``): English rows anchor the query ids ``q_{md5(f"{link}_{question_number}")[:8]}``;
the corpus pools the ``flores_passage`` of every row of the 14 languages in the order below,
de-duplicated by md5 of the exact text, ids ``doc_{lang}_{n}`` with ``n`` the corpus size at insertion;
a query's relevant documents are its passage in every language. Multilingual variant: query ids
``{lang}_q_{h}``. SHIFT's "ar" is Mesopotamian Arabic ``acm_Arab``; "dt" is Dutch.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

from mlirkit.base.errors import format_error

from mlirkit.datasets import _benchmark
from mlirkit.datasets._io import field, read_jsonl
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.io.records import Doc, Query
from mlirkit.datasets.sources import SourceFile

NAME = "belebele"
RELEASE_NAME = "Belebele_test"
LICENCE = "CC BY-SA 4.0"
CONFIGS = {
    "ar": "acm_Arab", "de": "deu_Latn", "dt": "nld_Latn", "en": "eng_Latn",
    "es": "spa_Latn", "fr": "fra_Latn", "hi": "hin_Deva", "id": "ind_Latn",
    "it": "ita_Latn", "ja": "jpn_Jpan", "pt": "por_Latn", "ru": "rus_Cyrl",
    "vi": "vie_Latn", "zh": "zho_Hans",
}
LANGS = tuple(CONFIGS)
URL = "https://huggingface.co/datasets/facebook/belebele/resolve/main/data/{code}.jsonl"
SIZE = "up to 6,832 docs (14 x 488 passages), 900 queries per language, 14 relevant each"


def files() -> list[SourceFile]:
    return [SourceFile(f"belebele/data/{code}.jsonl", URL.format(code=code),
                       f"https://huggingface.co/datasets/facebook/belebele (data/{code}.jsonl, {LICENCE})")
            for code in CONFIGS.values()]


def _rows(path: Path, code: str) -> list[dict]:
    rows = []
    for line, obj in read_jsonl(path):
        for key in ("link", "flores_passage", "question"):
            field(obj, key, path, line)
        field(obj, "question_number", path, line, (int, str))
        dialect = obj.get("dialect")
        if dialect is not None and dialect != code:
            raise format_error(path, line, f"dialect {dialect!r} in the file for {code!r}")
        rows.append(obj)
    return rows


def build(paths: dict[str, Path], query_langs: list[str], multilingual: bool) -> Collection:
    data = {lang: _rows(paths[f"belebele/data/{code}.jsonl"], code) for lang, code in CONFIGS.items()}
    base_qid = {}
    for item in data["en"]:
        key = (item["link"], item["question_number"])
        base_qid[key] = hashlib.md5(f"{item['link']}_{item['question_number']}".encode()).hexdigest()[:8]

    docs: list[Doc] = []
    by_hash: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for lang in CONFIGS:
        for item in data[lang]:
            key = (item["link"], item["question_number"])
            if key not in base_qid:
                continue
            passage = item["flores_passage"]
            h = hashlib.md5(passage.encode()).hexdigest()
            doc_id = by_hash.get(h)
            if doc_id is None:
                doc_id = by_hash[h] = f"doc_{lang}_{len(docs)}"
                docs.append(Doc(doc_id, passage, lang))
            for q_lang in query_langs:
                qrels[f"{q_lang}_q_{base_qid[key]}" if multilingual else f"q_{base_qid[key]}"][doc_id] = 1

    queries: dict[str, Query] = {}
    for q_lang in query_langs:
        for item in data[q_lang]:
            key = (item["link"], item["question_number"])
            if key in base_qid:
                qid = f"{q_lang}_q_{base_qid[key]}" if multilingual else f"q_{base_qid[key]}"
                queries[qid] = Query(qid, item["question"], q_lang)
    qrels = {qid: rels for qid, rels in qrels.items() if qid in queries}
    return Collection(docs, [queries[q] for q in sorted(queries)], qrels_from_dict(qrels))


def load(query_lang: str | None) -> Collection:
    """``query_lang=None``: queries in all 14 languages (SHIFT's MMLIR variant)."""
    q_langs = list(LANGS) if query_lang is None else [query_lang]
    return _benchmark.load(files(), lambda p: build(p, q_langs, query_lang is None), RELEASE_NAME, query_lang)


def available(query_lang: str | None) -> bool:
    return _benchmark.available(files(), RELEASE_NAME, query_lang)


__all__ = ["CONFIGS", "LANGS", "LICENCE", "NAME", "SIZE", "available", "build", "files", "load"]
