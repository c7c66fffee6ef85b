"""XQuAD-R's article-disjoint zero-shot split for trained retrievers (DCL): English supervision from one
half of the 48 articles, evaluation on the other half in all 8 languages.

The split (:func:`train_articles`): ``random.Random("mlirkit/xquad-r-zs:{seed}").sample(range(48), 24)``
with the registered seed :data:`SEED`, so it depends on nothing else; the other 24 articles are the
test articles. The ids:

- ``mlirkit/xquad-r-zs/train``: the English paragraphs of the training articles (docs), their English
  questions (queries), relevant = the paragraph holding the question, and one training triple per
  question (docpairs: the question's paragraph and a seeded hard negative from the same article, what
  ``mlirkit.train`` reads as ``triples``). English only: the zero-shot setting of the DCL paper
  (retrieval supervision in English, transfer to the other languages).
- ``mlirkit/xquad-r-zs/test/<lang>`` and ``.../test/multi``: XQuAD-R's paragraph pool (the SHIFT
  authors' construction, :mod:`mlirkit.datasets.xquad_r`) restricted to the test articles: their
  paragraphs in the 8 languages pooled, their questions in one language or in all 8 (``multi``);
  doc and query ids as in ``mlirkit/xquad-r``.

The rest of the training data (:func:`training_records`), the DCL paper's two resource levels among
the 7 non-English languages, taken from Joshi et al. (2020)'s classes (``--group-by resource``):

- :data:`PARALLEL_LANGS` (ar de es zh, class 5): parallel text, the bundled Tatoeba pairs with English
  (``mlirkit/parallel/tatoeba``, everyday sentences unrelated to XQuAD);
- :data:`MONOLINGUAL_LANGS` (hi ru vi, class 4): monolingual text only, the sentences of the *training*
  articles' paragraphs in that language (XQuAD-R's ``sentences`` field), never paired with English.

No text of a test article (paragraph, sentence, question, any of the 11 languages) is in the training
data: tested in ``tests/datasets/test_xquad_r_zs.py``.
"""
from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from mlirkit.datasets import tatoeba, xquad_r
from mlirkit.datasets.records import Collection, qrels_from_dict
from mlirkit.datasets.sources import fetch_all
from mlirkit.io.records import Doc, Query

NAME = "xquad-r-zs"
SEED = 0
N_ARTICLES = 48
N_TRAIN = 24
LICENCE = xquad_r.LICENCE
#: languages with parallel text (Tatoeba pairs with English): Joshi et al. (2020) class 5
PARALLEL_LANGS = ("ar", "de", "es", "zh")
#: languages with monolingual text only (training articles' sentences): Joshi et al. (2020) class 4
MONOLINGUAL_LANGS = ("hi", "ru", "vi")
TRAIN_SIZE = "120 English paragraphs, 561 English questions"
TEST_SIZE = "960 docs (8 x 120 paragraphs), 629 queries per language, 8 relevant each"


def train_articles(seed: int = SEED) -> tuple[int, ...]:
    """The training half: 24 of the 48 article indices (0-based, XQuAD's order), sorted."""
    return tuple(sorted(random.Random(f"mlirkit/{NAME}:{seed}").sample(range(N_ARTICLES), N_TRAIN)))


def eval_articles(seed: int = SEED) -> tuple[int, ...]:
    train = set(train_articles(seed))
    return tuple(i for i in range(N_ARTICLES) if i not in train)


def _articles(lang: str, langs: tuple[str, ...] = xquad_r.LANGS) -> list[list[xquad_r.Paragraph]]:
    paths = fetch_all(xquad_r.files(langs))
    return xquad_r.parse(paths[f"{xquad_r.NAME}/{lang}.json"])


def load_test(query_lang: str | None) -> Collection:
    """The test articles' paragraph pool, queries in ``query_lang`` (None: all 8 languages)."""
    fam = xquad_r.family(xquad_r.NAME)
    q_langs = list(fam.langs) if query_lang is None else [query_lang]
    return xquad_r.build(fetch_all(xquad_r.files(fam.langs)), fam, q_langs, query_lang is None,
                         articles=frozenset(eval_articles()))


def load_train(seed: int = SEED) -> Collection:
    """English paragraphs and questions of the training articles (ids as in ``mlirkit/xquad-r``), and one
    training triple per question (docpairs): its paragraph and another paragraph of the same article (a
    topical hard negative), drawn with ``seed``."""
    from ir_datasets.formats import GenericDocPair

    docs, queries, qrels, docpairs = [], [], {}, []
    rng = random.Random(f"mlirkit/{NAME}/negatives:{seed}")
    articles = _articles("en")
    for i in train_articles():
        paras = articles[i]
        for j, par in enumerate(paras):
            docs.append(Doc(f"en_{i}_{j}", par.context, "en"))
            others = [k for k in range(len(paras)) if k != j]
            for qa in par.qas:
                queries.append(Query(qa.qa_id, qa.question, "en"))
                qrels[qa.qa_id] = {f"en_{i}_{j}": 1}
                if others:
                    docpairs.append(GenericDocPair(qa.qa_id, f"en_{i}_{j}", f"en_{i}_{rng.choice(others)}"))
    return Collection(docs, sorted(queries, key=lambda q: q.query_id), qrels_from_dict(qrels), docpairs)


def training_records(max_pairs: int = 0, max_mono: int = 0, seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    """The zero-shot training data as records the DCL trainer reads (docs/training.md, "Data"):

    - ``triples``: ``{"query", "positive", "negatives": [one]}`` per English training question; the
      negative is another paragraph of the same article (a topical hard negative), drawn with ``seed``;
    - ``parallel``: ``{"id", "lang", "text"}``, English then the language, the first ``max_pairs``
      Tatoeba pairs of each of :data:`PARALLEL_LANGS` (0 = all);
    - ``monolingual``: ``{"text", "lang"}``, the training articles' sentences in each of
      :data:`MONOLINGUAL_LANGS`, the first ``max_mono`` per language (0 = all).

    A sentence or pair with a text that also occurs in a test article (:func:`eval_texts`: a short
    fragment such as ``citation needed]`` does) is left out.
    """
    held = eval_texts()
    train = load_train(seed)
    texts = {d.doc_id: d.text for d in train.docs}
    questions = {q.query_id: q.text for q in train.queries}
    triples = [{"query": questions[p.query_id], "positive": texts[p.doc_id_a], "negatives": [texts[p.doc_id_b]]}
               for p in train.docpairs]
    codes = tuple(c for c in tatoeba.CODES if tatoeba.lang_of(c) in PARALLEL_LANGS)
    parallel: list[dict[str, Any]] = []
    per_lang: dict[str, int] = defaultdict(int)
    pending: list[tuple[str, str, str]] = []
    for group, lang, text in tatoeba.rows(codes):
        pending.append((group, lang, text))
        if lang == tatoeba.SOURCE_LANG:
            continue
        if (not max_pairs or per_lang[lang] < max_pairs) and not {t for _, _, t in pending} & held:
            per_lang[lang] += 1
            parallel.extend({"id": g, "lang": la, "text": t} for g, la, t in pending)
        pending = []
    mono = []
    for lang in MONOLINGUAL_LANGS:
        arts = _articles(lang)
        sents = [s.strip() for i in train_articles() for par in arts[i] for s in par.sentences
                 if s.strip() and s not in held and s.strip() not in held]
        mono.extend({"text": s, "lang": lang} for s in (sents[:max_mono] if max_mono else sents))
    return {"triples": triples, "parallel": parallel, "monolingual": mono}


def write_training_data(out_dir: str | Path, max_pairs: int = 0, max_mono: int = 0,
                        seed: int = SEED) -> dict[str, str]:
    """:func:`training_records` as ``triples.jsonl``, ``parallel.jsonl``, ``mono.jsonl`` in ``out_dir``;
    returns ``{"triples", "parallel", "monolingual"}`` -> path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = {"triples": "triples.jsonl", "parallel": "parallel.jsonl", "monolingual": "mono.jsonl"}
    paths = {}
    for key, records in training_records(max_pairs, max_mono, seed).items():
        path = out / names[key]
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        tmp.replace(path)
        paths[key] = str(path)
    return paths


def eval_texts(langs: tuple[str, ...] = xquad_r.ALL_LANGS) -> set[str]:
    """Every text of a test article in ``langs`` (default all 11): paragraphs, sentences, questions."""
    out: set[str] = set()
    paths = fetch_all(xquad_r.files(langs))
    for lang in langs:
        arts = xquad_r.parse(paths[f"{xquad_r.NAME}/{lang}.json"])
        for i in eval_articles():
            for par in arts[i]:
                out.add(par.context)
                out.update(s for s in par.sentences)
                out.update(qa.question for qa in par.qas)
    return out


def available(query_lang: str | None = None) -> bool:
    return xquad_r.available(None, xquad_r.family("xquad-r-11"))


__all__ = ["LICENCE", "MONOLINGUAL_LANGS", "NAME", "PARALLEL_LANGS", "SEED", "TEST_SIZE", "TRAIN_SIZE", "available",
           "eval_articles", "eval_texts", "load_test", "load_train", "train_articles", "training_records",
           "write_training_data"]
