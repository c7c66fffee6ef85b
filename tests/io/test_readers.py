"""Corpus and topic readers: every format, every bad input names file and line."""
from __future__ import annotations

import gzip
import json

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.corpus import CorpusStats, read_corpus
from mlirkit.io.records import Doc, Query
from mlirkit.io.topics import read_topics
from mlirkit.base.langs import UNKNOWN


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_beir_jsonl_joins_title_and_text(tmp_path):
    path = write_jsonl(tmp_path / "corpus.jsonl", [
        {"_id": "d1", "title": "Fähre", "text": "fährt zweimal täglich", "lang": "de"},
        {"_id": "d2", "title": "", "text": "ferry", "lang": "en"},
    ])
    assert list(read_corpus(path)) == [Doc("d1", "Fähre fährt zweimal täglich", "de"), Doc("d2", "ferry", "en")]


def test_pyserini_jsonl_gzip_and_default_lang(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"id": "a", "contents": "text a"}) + "\n\n")
        f.write(json.dumps({"id": "b", "contents": "text b", "lang": "fr"}) + "\n")
    assert list(read_corpus(path, default_lang="en")) == [Doc("a", "text a", "en"), Doc("b", "text b", "fr")]


def test_tsv_and_text_fields(tmp_path):
    tsv = tmp_path / "c.tsv"
    tsv.write_text("1\tone\ten\n2\tzwei\tde\n", encoding="utf-8")
    assert [d.lang for d in read_corpus(tsv)] == ["en", "de"]
    js = write_jsonl(tmp_path / "c.jsonl", [{"id": "x", "body": "b", "head": "h", "lang": "en"}])
    assert list(read_corpus(js, text_fields=["head", "body"])) == [Doc("x", "h b", "en")]


@pytest.mark.parametrize("content, message", [
    ('{"_id": "a", "text": "ok", "lang": "en"}\n{"_id": "b", "text": \n', "c.jsonl:2: invalid JSON"),
    ('{"text": "no id", "lang": "en"}\n', "c.jsonl:1: missing field 'id'"),
    ('{"_id": "a", "lang": "en"}\n', "c.jsonl:1: missing field 'text'"),
    ('{"_id": "a", "text": "x", "lang": "en"}\n{"_id": "a", "text": "y", "lang": "en"}\n',
     "c.jsonl:2: duplicate document id 'a'"),
    ('{"_id": "a", "text": "  ", "lang": "en"}\n', "c.jsonl:1: empty text"),
    ('{"_id": "a", "text": "x"}\n', 'c.jsonl:1: missing field "lang"'),
    ('[1, 2]\n', "c.jsonl:1: expected a JSON object"),
])
def test_bad_jsonl_lines(tmp_path, content, message):
    path = tmp_path / "c.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(MlirkitError) as e:
        list(read_corpus(path))
    assert message in str(e.value)


def test_invalid_utf8_names_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"_id": "a", "text": "ok", "lang": "en"}\n{"_id": "b", "text": "\xff\xfe", "lang": "en"}\n')
    with pytest.raises(MlirkitError, match=r"c.jsonl:2: invalid UTF-8"):
        list(read_corpus(path))


def test_skip_empty_counts(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"_id": "a", "text": "", "lang": "en"}, {"_id": "b", "text": "x", "lang": "en"}])
    stats = CorpusStats()
    assert [d.doc_id for d in read_corpus(path, skip_empty=True, stats=stats)] == ["b"]
    assert (stats.read, stats.skipped_empty) == (1, 1)


def test_bad_tsv_columns(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("1\tone\ten\textra\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"c.tsv:1: expected 2 or 3"):
        list(read_corpus(path))


def test_unknown_source_did_you_mean(tmp_path):
    with pytest.raises(MlirkitError, match="neither an existing file nor an ir_datasets id"):
        list(read_corpus(str(tmp_path / "nope.jsonl")))
    with pytest.raises(MlirkitError, match="did you mean"):
        list(read_corpus("msmarco-pasage/dev"))


def test_topics_formats_and_langs(tmp_path):
    js = write_jsonl(tmp_path / "q.jsonl", [{"_id": "1", "text": "hallo", "lang": "de"}, {"_id": "2", "text": "hi"}])
    assert read_topics(js) == [Query("1", "hallo", "de"), Query("2", "hi", UNKNOWN)]
    assert read_topics(js, default_lang="en")[1].lang == "en"
    tsv = tmp_path / "q.tsv"
    tsv.write_text("q1\tbonjour\tfr\nq2\thello\n", encoding="utf-8")
    assert read_topics(tsv) == [Query("q1", "bonjour", "fr"), Query("q2", "hello", UNKNOWN)]
    tsv.write_text("q1\ta\nq1\tb\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"q.tsv:2: duplicate query id"):
        read_topics(tsv)


def test_topics_with_group_ids_are_parallel_queries(tmp_path):
    from mlirkit.io.records import ParallelQuery

    js = write_jsonl(tmp_path / "q.jsonl", [{"_id": "de_1", "text": "hallo", "lang": "de", "group_id": "1"},
                                            {"_id": "fr_1", "text": "salut", "lang": "fr", "group_id": "1"}])
    assert read_topics(js) == [ParallelQuery("de_1", "hallo", "de", "1"), ParallelQuery("fr_1", "salut", "fr", "1")]
    write_jsonl(js, [{"_id": "a", "text": "x", "group_id": "g"}, {"_id": "b", "text": "y"}])
    with pytest.raises(MlirkitError, match=r"q.jsonl:2: query 'b' has no group_id"):
        read_topics(js)
    write_jsonl(js, [{"_id": "a", "text": "x"}, {"_id": "b", "text": "y", "group_id": "g"}])
    with pytest.raises(MlirkitError, match=r"q.jsonl:2: query 'b' has a group_id, the queries before it have none"):
        read_topics(js)
    write_jsonl(js, [{"_id": "a", "text": "x", "group_id": ""}])
    with pytest.raises(MlirkitError, match=r"q.jsonl:1: empty group_id"):
        read_topics(js)


def test_query_groups_file(tmp_path):
    from mlirkit.io.query_groups import read_query_groups

    p = tmp_path / "groups.tsv"
    p.write_text("# qid\tgroup\nq/1/de\t1\n\nq/1/fr\t1\nq/2/de\t2\n", encoding="utf-8")
    assert read_query_groups(p) == {"q/1/de": "1", "q/1/fr": "1", "q/2/de": "2"}
    for content, message in (("a\t1\na\t2\n", r"groups.tsv:2: query 'a' listed twice"),
                             ("a 1\n", r"groups.tsv:1: expected 2 tab-separated columns \(qid, group\), got 1"),
                             ("a\t\n", r"groups.tsv:1: empty group"), ("# nothing\n", r"groups.tsv: no query groups")):
        p.write_text(content, encoding="utf-8")
        with pytest.raises(MlirkitError, match=message):
            read_query_groups(p)
