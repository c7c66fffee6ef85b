"""XQuAD-R's zero-shot split: article-disjoint halves, the registered ids, and no test-article text in the
training data (paragraphs, sentences, questions, any of the 11 languages)."""
from __future__ import annotations

import json
from collections import Counter

import ir_datasets

import mlirkit.datasets  # noqa: F401
from mlirkit.datasets import DATASETS, xquad_r, xquad_r_zs


def _article(doc_id: str) -> int:
    return int(doc_id.split("_")[1])


def test_halves_are_seeded_disjoint_and_cover_the_48_articles():
    train, held = xquad_r_zs.train_articles(), xquad_r_zs.eval_articles()
    assert len(train) == len(held) == 24 and set(train) | set(held) == set(range(48)) and not set(train) & set(held)
    assert train == xquad_r_zs.train_articles(xquad_r_zs.SEED) and train != xquad_r_zs.train_articles(1)
    assert 0 not in train  # the split as registered (seed 0): article 0 (Super Bowl 50) is a test article


def test_registered_ids_hold_only_their_half():
    held = set(xquad_r_zs.eval_articles())
    ds = ir_datasets.load("mlirkit/xquad-r-zs/test/multi")
    docs = list(ds.docs_iter())
    assert Counter(d.lang for d in docs) == {la: 120 for la in xquad_r.LANGS}
    assert {_article(d.doc_id) for d in docs} == held
    queries = list(ds.queries_iter())
    assert len(queries) == 8 * 629 and all(q.group_id == q.query_id.split("_", 1)[1] for q in queries)
    qrels = list(ds.qrels_iter())
    assert len(qrels) == 8 * len(queries) and all(_article(r.doc_id) in held for r in qrels)
    one = ir_datasets.load("mlirkit/xquad-r-zs/test/hi")
    assert one.queries_count() == 629 and {q.lang for q in one.queries_iter()} == {"hi"}
    train = ir_datasets.load("mlirkit/xquad-r-zs/train")
    tdocs = list(train.docs_iter())
    assert len(tdocs) == 120 and {d.lang for d in tdocs} == {"en"}
    assert {_article(d.doc_id) for d in tdocs} == set(xquad_r_zs.train_articles())
    assert train.queries_count() == 561 and {q.lang for q in train.queries_iter()} == {"en"}
    assert not {q.query_id for q in train.queries_iter()} & {q.group_id for q in queries}
    for q in (*xquad_r.LANGS, "multi"):
        info = DATASETS.get(f"mlirkit/xquad-r-zs/test/{q}")
        assert info.available_offline() and info.doc_langs == xquad_r.LANGS
    assert DATASETS.get("mlirkit/xquad-r-zs/train").query_langs == ("en",)


def test_no_text_of_a_test_article_reaches_training(tmp_path):
    paths = xquad_r_zs.write_training_data(tmp_path)  # every pair and sentence (no caps)
    records = {k: [json.loads(x) for x in open(p, encoding="utf-8")] for k, p in paths.items()}
    texts = [t for r in records["triples"] for t in (r["query"], r["positive"], *r["negatives"])]
    texts += [r["text"] for r in records["parallel"]] + [r["text"] for r in records["monolingual"]]
    held = xquad_r_zs.eval_texts()  # paragraphs, sentences and questions of the test articles, 11 languages
    assert len(held) > 24 * 11 * 5
    assert not set(texts) & held
    # nor inside a test paragraph (a training sentence cut from a test article): every text long enough
    # to be specific (40 characters) against the test paragraphs of every language
    pool = "\x00".join(sorted(held))
    assert not [t for t in set(texts) if len(t) >= 40 and t in pool]
    # the planted check works: a test sentence is found
    assert next(t for t in held if len(t) >= 40) in pool
    # the resource split as documented
    assert {r["lang"] for r in records["parallel"]} == {"en", *xquad_r_zs.PARALLEL_LANGS}
    assert {r["lang"] for r in records["monolingual"]} == set(xquad_r_zs.MONOLINGUAL_LANGS)
    assert not set(xquad_r_zs.PARALLEL_LANGS) & set(xquad_r_zs.MONOLINGUAL_LANGS)
    assert len(records["triples"]) == 561 and all(r["negatives"] and r["negatives"][0] != r["positive"]
                                                  for r in records["triples"])


def test_listed_by_the_datasets_cli(capsys):
    from mlirkit.datasets.cli import main

    assert main(["list", "--json", "--family", "xquad-r-zs"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(["mlirkit/xquad-r-zs/train",
                                                    *(f"mlirkit/xquad-r-zs/test/{q}" for q in (*xquad_r.LANGS, "multi"))])
    assert all(r["offline"] for r in rows)
