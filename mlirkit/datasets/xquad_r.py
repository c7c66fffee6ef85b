"""XQuAD-R (LAReQA) as multilingual retrieval benchmarks: the SHIFT authors' paragraph pool and LAReQA's
own sentence pool.

Source: ``github.com/google-research-datasets/lareqa`` ``xquad-r/{lang}.json`` (CC BY-SA 4.0; XQuAD,
Artetxe et al. 2020, with sentence boundaries added by LAReQA, Roy et al. 2020): SQuAD v1.1 layout, 48
articles, 240 paragraphs and 1,190 questions in each of 11 languages, a question's ``id`` the same in
every language; each paragraph also carries ``sentences`` and ``sentence_breaks`` (half-open character
offsets into ``context``). mlirkit bundles the 11 files byte for byte (``resources/xquad-r.tar.xz``);
:mod:`mlirkit.datasets.sources` says when the bundled copy is read and when upstream is downloaded.

Constructions (each a family of ids ``mlirkit/<family>/<query lang>`` and ``.../multi``, queries in
every language of the family):

- ``xquad-r``: the SHIFT authors' (their ``build_benchmarks.py``): the corpus is every paragraph
  ``context`` of the 8 languages of the SHIFT paper, id ``{lang}_{article}_{paragraph}`` (0-based);
  a question's relevant documents are the paragraph holding it, in every language (8).
- ``xquad-r-11``: the same over all 11 languages (2,640 paragraphs, 11 relevant per question).
- ``lareqa-xquad-r``: LAReQA's (section 3.1 of the paper): the candidates are the sentences of all 11
  languages (the ``sentences`` field; 13,014), id ``{lang}_{article}_{paragraph}_{sentence}``; a
  question's relevant candidates are the sentence holding its answer in each of the 11 languages (the
  sentence whose break contains that language's ``answer_start``), 11 per question. Reported with mAP.
- ``xquad-r-partial``: a partly parallel bed, built like MLQA (every instance in English and in some
  other languages): each paragraph of the 8-language pool is kept in :data:`PARTIAL_SIZES` = 2-4
  languages, English and 1-3 others drawn at random (:func:`partial_langs`, seeded by
  :data:`PARTIAL_SEED`); the corpus holds only the kept versions, a question's relevant documents are
  its paragraph's kept versions, queries are in all 8 languages.

Query ids: the SQuAD id for one query language, ``{lang}_{id}`` for ``multi``; every query is a
:class:`~mlirkit.io.records.ParallelQuery` whose ``group_id`` is the SQuAD id, the question it
translates (a paired test moves a question's translations together).
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from mlirkit.base.errors import format_error

from mlirkit.datasets import _benchmark
from mlirkit.datasets._io import read_json
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.datasets.sources import BundledFile, SourceFile, all_local, bundled_available, bundled_source, fetch_all
from mlirkit.io.records import Doc, ParallelQuery

NAME = "xquad-r"
RELEASE_NAME = "XQuAD_test"
LICENCE = "CC BY-SA 4.0"
#: the 8 languages of the SHIFT paper's pool
LANGS = ("ar", "de", "en", "es", "hi", "ru", "vi", "zh")
#: the 11 languages of XQuAD-R
ALL_LANGS = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")
ARCHIVE = "xquad-r.tar.xz"
URL = "https://raw.githubusercontent.com/google-research-datasets/lareqa/master/xquad-r/{lang}.json"
SIZE = "1,920 docs (8 x 240 paragraphs), 1,190 queries per language, 8 relevant each"
#: the partly parallel bed: languages kept per paragraph, the language always kept, the registered seed
PARTIAL_SIZES = (2, 3, 4)
PARTIAL_PIVOT = "en"
PARTIAL_SEED = 0


class QA(NamedTuple):
    qa_id: str
    question: str
    answer_start: int


class Paragraph(NamedTuple):
    context: str
    sentences: tuple[str, ...]
    breaks: tuple[tuple[int, int], ...]
    qas: tuple[QA, ...]


@dataclass(frozen=True)
class Family:
    """One construction of retrieval from LAReQA's files (XQuAD-R, or MLQA-R: :mod:`mlirkit.datasets.mlqa_r`):
    its languages, its unit, whether it is partial, and the folder of the files (``{folder}/{lang}.json``)."""

    name: str
    langs: tuple[str, ...]
    unit: str  # "paragraph" or "sentence"
    partial: bool
    description: str
    size: str
    folder: str = NAME


FAMILIES = (
    Family(NAME, LANGS, "paragraph", False,
           "XQuAD-R paragraphs pooled over the SHIFT paper's 8 languages; query = SQuAD question", SIZE),
    Family("xquad-r-11", ALL_LANGS, "paragraph", False,
           "XQuAD-R paragraphs pooled over all 11 languages; query = SQuAD question",
           "2,640 docs (11 x 240 paragraphs), 1,190 queries per language, 11 relevant each"),
    Family("lareqa-xquad-r", ALL_LANGS, "sentence", False,
           "LAReQA's XQuAD-R: the sentences of 11 languages pooled, relevant = the answer sentence in each "
           "language (report mAP)", "13,014 sentences, 1,190 queries per language, 11 relevant each"),
    Family("xquad-r-partial", LANGS, "paragraph", True,
           "partly parallel XQuAD-R: each paragraph kept in 2-4 of the 8 languages (English and 1-3 others, "
           f"seed {PARTIAL_SEED}); query = SQuAD question",
           "721 docs (240 paragraphs x 2-4 languages), 1,190 queries per language, 2-4 relevant each"),
)


def family(name: str) -> Family:
    return next(f for f in FAMILIES if f.name == name)


def files(langs: tuple[str, ...] = LANGS) -> list[SourceFile]:
    return [bundled_source(f"xquad-r/{lang}.json", URL.format(lang=lang),
                           f"https://github.com/google-research-datasets/lareqa (xquad-r/{lang}.json, {LICENCE})",
                           ARCHIVE)
            for lang in langs]


def parse(path: Path | BundledFile) -> list[list[Paragraph]]:
    """``[[Paragraph per paragraph] per article]``; a structural error names the file and the record."""
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise format_error(path, None, "expected a SQuAD document {\"data\": [...]}")
    out = []
    seen: dict[str, str] = {}  # question id -> where it was
    for i, art in enumerate(doc["data"]):
        paras = art.get("paragraphs") if isinstance(art, dict) else None
        if not isinstance(paras, list):
            raise format_error(path, None, f"data[{i}].paragraphs missing")
        plist = []
        for j, par in enumerate(paras):
            where = f"data[{i}].paragraphs[{j}]"
            if not isinstance(par, dict) or not isinstance(par.get("context"), str) or not isinstance(par.get("qas"), list):
                raise format_error(path, None, f"{where} needs 'context' and 'qas'")
            sentences, breaks = par.get("sentences", []), par.get("sentence_breaks", [])
            if (not isinstance(sentences, list) or not isinstance(breaks, list) or len(sentences) != len(breaks)
                    or not all(isinstance(s, str) for s in sentences)
                    or not all(isinstance(b, list) and len(b) == 2 and all(isinstance(x, int) for x in b) for b in breaks)):
                raise format_error(path, None, f"{where}: 'sentences' and 'sentence_breaks' ([start, end] pairs) "
                                               "should be lists of the same length")
            context = par["context"]
            if any(not 0 <= a <= b <= len(context) for a, b in breaks):
                raise format_error(path, None, f"{where}.sentence_breaks: a break outside the context "
                                               f"(0 ... {len(context)})")
            qas = []
            for k, qa in enumerate(par["qas"]):
                answers = qa.get("answers") if isinstance(qa, dict) else None
                start = answers[0].get("answer_start") if isinstance(answers, list) and answers and isinstance(
                    answers[0], dict) else None
                if (not isinstance(qa, dict) or not isinstance(qa.get("id"), str) or not isinstance(qa.get("question"), str)
                        or not isinstance(start, int) or isinstance(start, bool)):
                    raise format_error(path, None, f"{where}.qas[{k}] needs 'id', 'question' and 'answers' "
                                                   "(a list) with an integer 'answer_start'")
                if not 0 <= start <= len(context):
                    raise format_error(path, None, f"{where}.qas[{k}].answers[0].answer_start: {start} is outside "
                                                   f"the context (0 ... {len(context)})")
                if not qa["id"].strip() or not qa["question"].strip():
                    raise format_error(path, None, f"{where}.qas[{k}]: an empty 'id' or 'question'")
                if qa["id"] in seen:
                    raise format_error(path, None, f"{where}.qas[{k}].id: {qa['id']!r} is also the id of "
                                                   f"{seen[qa['id']]}.qas: one question per id")
                seen[qa["id"]] = where
                qas.append(QA(qa["id"], qa["question"], start))
            plist.append(Paragraph(par["context"], tuple(sentences), tuple(tuple(b) for b in breaks), tuple(qas)))
        out.append(plist)
    return out


def answer_sentence(par: Paragraph, answer_start: int) -> int:
    """Index of the sentence holding ``answer_start``: the last one whose break starts at or before it."""
    starts = [s for s, _ in par.breaks]
    return max((k for k, s in enumerate(starts) if s <= answer_start), default=0)


def partial_langs(article: int, paragraph: int, langs: tuple[str, ...] = LANGS, seed: int = PARTIAL_SEED,
                  sizes: tuple[int, ...] = PARTIAL_SIZES, pivot: str = PARTIAL_PIVOT) -> tuple[str, ...]:
    """The languages in which paragraph (``article``, ``paragraph``) is kept in the partly parallel bed:
    ``pivot`` and ``k - 1`` others drawn uniformly from ``langs``, ``k`` uniform over ``sizes``; a
    function of the arguments only (``random.Random`` seeded with a string, stable across Python versions)."""
    rng = random.Random(f"mlirkit/xquad-r-partial:{seed}:{article}:{paragraph}")
    k = rng.choice(sizes)
    others = rng.sample([la for la in langs if la != pivot], k - 1)
    return tuple(sorted((pivot, *others)))


def build(paths: dict[str, Path | BundledFile], fam: Family, query_langs: list[str], multilingual: bool,
          articles: frozenset[int] | None = None) -> Collection:
    """The collection of ``fam`` from its files (``paths``: relative path -> file): documents of every language,
    queries in ``query_langs``, a question's relevant documents its paragraph (or answer sentence) in every
    language that has the question (``qa_id`` shared across languages); ``articles``: only these article
    indices (0-based; None = all)."""
    data = {lang: parse(paths[f"{fam.folder}/{lang}.json"]) for lang in fam.langs}
    docs: list[Doc] = []
    relevant: dict[str, set[str]] = defaultdict(set)  # SQuAD id -> relevant doc ids
    for lang, arts in data.items():
        for i, paras in enumerate(arts):
            if articles is not None and i not in articles:
                continue
            for j, par in enumerate(paras):
                if fam.partial and lang not in partial_langs(i, j, fam.langs):
                    continue
                if fam.unit == "sentence":
                    docs.extend(Doc(f"{lang}_{i}_{j}_{k}", text, lang) for k, text in enumerate(par.sentences))
                    for qa in par.qas:
                        relevant[qa.qa_id].add(f"{lang}_{i}_{j}_{answer_sentence(par, qa.answer_start)}")
                else:
                    docs.append(Doc(f"{lang}_{i}_{j}", par.context, lang))
                    for qa in par.qas:
                        relevant[qa.qa_id].add(f"{lang}_{i}_{j}")
    queries: dict[str, ParallelQuery] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q_lang in query_langs:
        for i, paras in enumerate(data[q_lang]):
            if articles is not None and i not in articles:
                continue
            for par in paras:
                for qa in par.qas:
                    qid = f"{q_lang}_{qa.qa_id}" if multilingual else qa.qa_id
                    queries[qid] = ParallelQuery(qid, qa.question, q_lang, qa.qa_id)
                    qrels[qid] = {doc_id: 1 for doc_id in relevant[qa.qa_id]}
    return Collection(docs, [queries[q] for q in sorted(queries)], qrels_from_dict(qrels))


def load(query_lang: str | None, fam: Family = FAMILIES[0]) -> Collection:
    """``query_lang=None``: queries in every language of the family (``multi``)."""
    q_langs = list(fam.langs) if query_lang is None else [query_lang]
    raw = files(fam.langs)
    if fam.name == NAME:  # the SHIFT authors' construction: their processed release is an alternative source
        return _grouped(_benchmark.load(raw, lambda p: build(p, fam, q_langs, query_lang is None), RELEASE_NAME,
                                        query_lang), query_lang is None)
    return build(fetch_all(raw), fam, q_langs, query_lang is None)


def _grouped(collection: Collection, multilingual: bool) -> Collection:
    """Queries read from the SHIFT authors' release carry no group: it is the SQuAD id, which their
    query ids hold (``{id}``, ``{lang}_{id}`` for MMLIR)."""
    collection.queries = [q if isinstance(q, ParallelQuery) else
                          ParallelQuery(q.query_id, q.text, q.lang, q.query_id.split("_", 1)[1] if multilingual else q.query_id)
                          for q in collection.queries]
    return collection


def available(query_lang: str | None, fam: Family = FAMILIES[0]) -> bool:
    if fam.name == NAME:
        return _benchmark.available(files(fam.langs), RELEASE_NAME, query_lang)
    return all_local(files(fam.langs)) or bundled_available(files(fam.langs))


__all__ = ["ALL_LANGS", "ARCHIVE", "FAMILIES", "Family", "LANGS", "LICENCE", "NAME", "PARTIAL_SEED", "Paragraph",
           "SIZE", "answer_sentence", "available", "build", "family", "files", "load", "parse", "partial_langs"]
