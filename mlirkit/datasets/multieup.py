"""MultiEuP-v2 as a multilingual retrieval benchmark, built as the SHIFT authors built it.

Source: HF ``unimelb-nlp/MultiEup-v2`` file ``clean_all_with_did_qid.MEP.csv`` (CC BY 4.0), one row
per speech. Every cell is read as a string (the file has mixed-type columns, e.g. ``qid_GA``), an empty
cell counts as missing. Construction (SHIFT ``build_multieup``): keep speeches whose ``LANGUAGE``
lower-cased is one of SHIFT's 14 codes (so DE, EN, ES, FR, IT, PT: Dutch "NL" is dropped because
SHIFT's list says "dt"); documents = ``did`` -> ``TEXT`` with ``lang = LANGUAGE.lower()``; a debate is
the part of ``qid_EN`` before the first ``#``; query = ``title_{LANG}`` of a speech's debate, id = the
raw ``qid_{LANG}`` (multilingual variant: ``{lang}_{debate}``); relevant = every speech of the debate.
"""
from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

from mlirkit.base.errors import format_error

from mlirkit.datasets import _benchmark
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.io.records import Doc, Query
from mlirkit.datasets.sources import SourceFile

NAME = "multieup-v2"
RELEASE_NAME = "MultiEup_test"
LICENCE = "CC BY 4.0"
CSV_NAME = "clean_all_with_did_qid.MEP.csv"
SHIFT_LANGS = ("ar", "de", "dt", "en", "es", "fr", "hi", "id", "it", "ja", "pt", "ru", "vi", "zh")
LANGS = ("de", "en", "es", "fr", "it", "pt")  # SHIFT_LANGS that MultiEuP has (title_XX columns)
URL = f"https://huggingface.co/datasets/unimelb-nlp/MultiEup-v2/resolve/main/{CSV_NAME}"
SIZE = "speeches in DE, EN, ES, FR, IT, PT (10K-100K rows in the CSV); one query per debate"
REQUIRED = ("did", "TEXT", "LANGUAGE", "qid_EN")


def files() -> list[SourceFile]:
    return [SourceFile(f"multieup-v2/{CSV_NAME}", URL,
                       f"https://huggingface.co/datasets/unimelb-nlp/MultiEup-v2 ({CSV_NAME}, {LICENCE})")]


def _rows(path: Path) -> list[dict[str, str | None]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        for col in REQUIRED:
            if col not in header:
                raise format_error(path, 1, f"missing column {col!r} (header has {len(header)} columns)")
        rows = []
        try:
            for row in reader:
                rows.append({k: (v if v not in ("", None) else None) for k, v in row.items() if k is not None})
        except csv.Error as e:
            raise format_error(path, reader.line_num, f"CSV error: {e}") from None
    return rows


def build(path: Path, query_langs: list[str], multilingual: bool) -> Collection:
    entries = [e for e in _rows(path) if (e.get("LANGUAGE") or "").lower() in SHIFT_LANGS]
    docs: dict[str, Doc] = {}
    debate_docs: dict[str, set[str]] = defaultdict(set)
    for e in entries:
        did, text, qid_en = e.get("did"), e.get("TEXT"), e.get("qid_EN")
        if did is None or text is None or qid_en is None:
            continue
        docs[did] = Doc(did, text, e["LANGUAGE"].lower())
        debate_docs[qid_en.split("#")[0]].add(did)
    queries: dict[str, Query] = {}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for e in entries:
        for q_lang in query_langs:
            title, qid_raw = e.get(f"title_{q_lang.upper()}"), e.get(f"qid_{q_lang.upper()}")
            if title is None or qid_raw is None:
                continue
            debate = qid_raw.split("#")[0]
            qid = f"{q_lang}_{debate}" if multilingual else qid_raw
            queries[qid] = Query(qid, title, q_lang)
            for did in debate_docs[debate]:
                qrels[qid][did] = 1
    qrels = {q: r for q, r in qrels.items() if r}
    return Collection(list(docs.values()), [queries[q] for q in sorted(queries) if q in qrels], qrels_from_dict(qrels))


def load(query_lang: str | None) -> Collection:
    q_langs = list(SHIFT_LANGS) if query_lang is None else [query_lang]
    rel = files()[0].relpath
    return _benchmark.load(files(), lambda p: build(p[rel], q_langs, query_lang is None), RELEASE_NAME, query_lang)


def available(query_lang: str | None) -> bool:
    return _benchmark.available(files(), RELEASE_NAME, query_lang)


__all__ = ["CSV_NAME", "LANGS", "LICENCE", "NAME", "SIZE", "available", "build", "files", "load"]
