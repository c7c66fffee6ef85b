"""MLQA-R (LAReQA, Roy et al. 2020): the retrieval version of the MLQA dev set, partly parallel, read from
LAReQA's files (never bundled: CC BY-NC 4.0).

Source: ``github.com/google-research-datasets/lareqa``, added as ``mlqa-dev-r/{lang}.json`` (commit 5405d2a),
renamed ``mlqa-r/{lang}.json`` (354d67d) and removed from the repository four days later (b91469b); the
files are MLQA's dev set (Lewis et al. 2020) in XQuAD-R's layout (SQuAD v1.1 JSON whose paragraphs carry
``sentences`` and ``sentence_breaks``), so :func:`mlirkit.datasets.xquad_r.parse` reads them and
:func:`mlirkit.datasets.xquad_r.build` builds both constructions. 7 languages (ar de en es hi vi zh), a
question's ``id`` the same in every language that has it: 1,148 questions, each in English and in 1-3 of
the others (2-4 languages), 4,199 queries; 3,646 paragraphs, 20,534 sentences.

- ``mlqa-r``: the SHIFT-style paragraph pool: every paragraph ``context`` of the 7 languages, id
  ``{lang}_{article}_{paragraph}``; a question's relevant documents are the paragraph holding it in every
  language that has it (2-4).
- ``lareqa-mlqa-r``: LAReQA's sentence pool: every sentence of every paragraph, id
  ``{lang}_{article}_{paragraph}_{sentence}``; relevant = the sentence holding the answer, in every language
  that has the question. Reported with mAP over the whole ranking.

Queries are in each language (``<lang>``: that language's questions; ``multi``: all, ids ``{lang}_{id}``),
:class:`~mlirkit.io.records.ParallelQuery` records whose ``group_id`` is the MLQA id.
"""
from __future__ import annotations

from mlirkit.datasets import xquad_r
from mlirkit.datasets.records import Collection
from mlirkit.datasets.sources import SourceFile, all_local, fetch_all

NAME = "mlqa-r"
LICENCE = "CC BY-NC 4.0"
LANGS = ("ar", "de", "en", "es", "hi", "vi", "zh")
#: the last commit of the LAReQA repository that holds the files (folder ``mlqa-r/``)
COMMIT = "354d67d1cd066854cdfbf5ad0e6105528976141d"
URL = "https://raw.githubusercontent.com/google-research-datasets/lareqa/" + COMMIT + "/mlqa-r/{lang}.json"
#: MD5 of each upstream file (the same bytes in ``mlqa-dev-r/`` of commit 5405d2a); a download that differs is refused
MD5 = {"ar": "0cabca7da64041a9bcfbfa6397def23e", "de": "5fdb66b2614ed2556d05356968eca0b2",
       "en": "9ea5e240816f8a9c668ec49afbf45e7d", "es": "1dc80d875f9e37192668eb90bf3e8a2d",
       "hi": "84cee6c9864f8662ef1ef3ed5b96f990", "vi": "395e63b077fb8af6735ca9c4337d656c",
       "zh": "b9c78c32a0008dba5f93aea0ac5c2429"}

FAMILIES = (
    xquad_r.Family(NAME, LANGS, "paragraph", False,
                   "MLQA-R (MLQA dev) paragraphs pooled over 7 languages, partly parallel; query = MLQA question",
                   "3,646 docs, 4,199 queries (ar 517 de 512 en 1,148 es 500 hi 507 vi 511 zh 504), 2-4 relevant each",
                   folder=NAME),
    xquad_r.Family("lareqa-mlqa-r", LANGS, "sentence", False,
                   "LAReQA's MLQA-R: the sentences of 7 languages pooled, relevant = the answer sentence in each "
                   "language that has the question (report mAP)", "20,534 sentences, 4,199 queries, 2-4 relevant each",
                   folder=NAME),
)


def files() -> list[SourceFile]:
    return [SourceFile(f"{NAME}/{lang}.json", URL.format(lang=lang),
                       f"https://github.com/google-research-datasets/lareqa, folder mlqa-r/ of commit {COMMIT[:7]} "
                       f"(mlqa-dev-r/ of 5405d2a; no longer on master), {LICENCE}, not bundled with mlirkit",
                       MD5[lang])
            for lang in LANGS]


def load(query_lang: str | None, fam: xquad_r.Family = FAMILIES[0]) -> Collection:
    """``query_lang=None``: queries in every language (``multi``)."""
    q_langs = list(LANGS) if query_lang is None else [query_lang]
    return xquad_r.build(fetch_all(files()), fam, q_langs, query_lang is None)


def available(query_lang: str | None = None, fam: xquad_r.Family = FAMILIES[0]) -> bool:
    return all_local(files())


__all__ = ["FAMILIES", "LANGS", "LICENCE", "NAME", "available", "files", "load"]
