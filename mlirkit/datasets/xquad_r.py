"""XQuAD-R (LAReQA) as a multilingual retrieval benchmark, built as the SHIFT authors built it.

Source: ``github.com/google-research-datasets/lareqa`` ``xquad-r/{lang}.json`` (CC BY-SA 4.0), SQuAD
v1.1 layout. Construction: the corpus holds every paragraph ``context`` of the 8 languages with id
``{lang}_{article_idx}_{paragraph_idx}`` (0-based); a query (SQuAD id, shared across languages) has as
relevant the paragraph that holds its id in every language. Multilingual variant: ids ``{lang}_{id}``.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from mlirkit.base.errors import format_error

from mlirkit.datasets import _benchmark
from mlirkit.datasets._io import read_json
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.io.records import Doc, Query
from mlirkit.datasets.sources import SourceFile

NAME = "xquad-r"
RELEASE_NAME = "XQuAD_test"
LICENCE = "CC BY-SA 4.0"
LANGS = ("ar", "de", "en", "es", "hi", "ru", "vi", "zh")
URL = "https://raw.githubusercontent.com/google-research-datasets/lareqa/master/xquad-r/{lang}.json"
SIZE = "1,920 docs (8 x 240 paragraphs), 1,190 queries per language, 8 relevant each"


def files() -> list[SourceFile]:
    return [SourceFile(f"xquad-r/{lang}.json", URL.format(lang=lang),
                       f"https://github.com/google-research-datasets/lareqa (xquad-r/{lang}.json, {LICENCE})")
            for lang in LANGS]


def _articles(path: Path) -> list[list[tuple[str, list[tuple[str, str]]]]]:
    """``[[(context, [(qa_id, question), ...]) per paragraph] per article]``."""
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise format_error(path, None, "expected a SQuAD document {\"data\": [...]}")
    out = []
    for i, art in enumerate(doc["data"]):
        paras = art.get("paragraphs") if isinstance(art, dict) else None
        if not isinstance(paras, list):
            raise format_error(path, None, f"data[{i}].paragraphs missing")
        plist = []
        for j, par in enumerate(paras):
            if not isinstance(par, dict) or not isinstance(par.get("context"), str) or not isinstance(par.get("qas"), list):
                raise format_error(path, None, f"data[{i}].paragraphs[{j}] needs 'context' and 'qas'")
            qas = []
            for k, qa in enumerate(par["qas"]):
                if not isinstance(qa, dict) or not isinstance(qa.get("id"), str) or not isinstance(qa.get("question"), str):
                    raise format_error(path, None, f"data[{i}].paragraphs[{j}].qas[{k}] needs 'id' and 'question'")
                qas.append((qa["id"], qa["question"]))
            plist.append((par["context"], qas))
        out.append(plist)
    return out


def build(paths: dict[str, Path], query_langs: list[str], multilingual: bool) -> Collection:
    data = {lang: _articles(paths[f"xquad-r/{lang}.json"]) for lang in LANGS}
    docs: list[Doc] = []
    qid_to_docs: dict[str, set[str]] = defaultdict(set)
    for lang, articles in data.items():
        for i, paras in enumerate(articles):
            for j, (context, qas) in enumerate(paras):
                doc_id = f"{lang}_{i}_{j}"
                docs.append(Doc(doc_id, context, lang))
                for qa_id, _ in qas:
                    qid_to_docs[qa_id].add(doc_id)
    queries: dict[str, Query] = {}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for q_lang in query_langs:
        for paras in data[q_lang]:
            for _, qas in paras:
                for qa_id, question in qas:
                    qid = f"{q_lang}_{qa_id}" if multilingual else qa_id
                    queries[qid] = Query(qid, question, q_lang)
                    for doc_id in qid_to_docs[qa_id]:
                        qrels[qid][doc_id] = 1
    return Collection(docs, [queries[q] for q in sorted(queries)], qrels_from_dict(qrels))


def load(query_lang: str | None) -> Collection:
    q_langs = list(LANGS) if query_lang is None else [query_lang]
    return _benchmark.load(files(), lambda p: build(p, q_langs, query_lang is None), RELEASE_NAME, query_lang)


def available(query_lang: str | None) -> bool:
    return _benchmark.available(files(), RELEASE_NAME, query_lang)
