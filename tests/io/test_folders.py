"""BEIR dataset folders and Pyserini JsonCollection folders as --corpus, --topics, --qrels, --doc-langs."""
from __future__ import annotations

import gzip
import json

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.corpus import count_docs, read_corpus
from mlirkit.io.doc_langs import read_doc_langs
from mlirkit.io.folders import FolderKind, folder_kind
from mlirkit.io.qrels import read_qrels
from mlirkit.io.topics import read_topics


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def beir(tmp_path):
    root = tmp_path / "scifact-like"
    _jsonl(root / "corpus.jsonl", [{"_id": "d1", "title": "Ferry", "text": "leaves twice a day", "lang": "en"},
                                   {"_id": "d2", "title": "", "text": "Die Fähre fährt", "lang": "de"}])
    _jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "ferry times", "lang": "en"}])
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\n", encoding="utf-8")
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq9\td1\t1\n", encoding="utf-8")
    return root


@pytest.fixture
def json_collection(tmp_path):
    root = tmp_path / "collection"
    _jsonl(root / "docs01.jsonl", [{"id": "a1", "contents": "first file", "lang": "en"}])
    with gzip.open(root / "docs02.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps({"id": "a2", "contents": "zweite Datei", "lang": "de"}) + "\n")
    (root / "docs03.json").write_text(json.dumps([{"id": "a3", "contents": "troisième", "lang": "fr"},
                                                  {"id": "a4", "contents": "quarto", "lang": "it"}], indent=2),
                                      encoding="utf-8")
    (root / "README.txt").write_text("not a collection file\n", encoding="utf-8")
    (root / "sub").mkdir()
    _jsonl(root / "sub" / "ignored.jsonl", [{"id": "zz", "contents": "ignored", "lang": "en"}])
    return root


def test_beir_folder(beir):
    assert folder_kind(beir) is FolderKind.BEIR
    docs = list(read_corpus(beir))
    assert [(d.doc_id, d.text, d.lang) for d in docs] == [("d1", "Ferry leaves twice a day", "en"),
                                                         ("d2", "Die Fähre fährt", "de")]
    assert count_docs(beir) == 2
    assert [(q.query_id, q.text, q.lang) for q in read_topics(beir)] == [("q1", "ferry times", "en")]
    assert read_qrels(beir) == {"q1": {"d1": 1, "d2": 1}}  # the test split
    assert read_doc_langs(beir) == {"d1": "en", "d2": "de"}


def test_json_collection_folder(json_collection):
    assert folder_kind(json_collection) is FolderKind.JSON_COLLECTION
    docs = list(read_corpus(json_collection))
    assert [(d.doc_id, d.text, d.lang) for d in docs] == [("a1", "first file", "en"), ("a2", "zweite Datei", "de"),
                                                         ("a3", "troisième", "fr"), ("a4", "quarto", "it")]
    assert count_docs(json_collection) == 4
    assert read_doc_langs(json_collection)["a4"] == "it"
    with pytest.raises(MlirkitError, match="queries.jsonl"):
        read_topics(json_collection)
    with pytest.raises(MlirkitError, match="qrels/test.tsv"):
        read_qrels(json_collection)


def test_folder_errors_name_the_file(tmp_path, json_collection):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MlirkitError, match="neither a BEIR dataset folder"):
        list(read_corpus(empty))
    index_like = tmp_path / "index"
    index_like.mkdir()
    (index_like / "index").write_bytes(b"")
    (index_like / "meta.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match="is an index directory"):
        list(read_corpus(index_like))
    (json_collection / "docs04.jsonl").write_text('{"id": "a5", "contents": "x", "lang": "en"}\nnot json\n',
                                                  encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"docs04\.jsonl:2"):
        list(read_corpus(json_collection))
    _jsonl(json_collection / "docs04.jsonl", [{"id": "a1", "contents": "again", "lang": "en"}])
    with pytest.raises(MlirkitError, match="duplicate document id 'a1'"):
        list(read_corpus(json_collection))


def test_encode_cli_reads_a_folder(tmp_path, beir, tiny_model_dir, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.index import DenseIndex

    code = run_cli(encode_main, ["--corpus", str(beir), "--output", str(tmp_path / "idx"), "--encoder",
                                 str(tiny_model_dir), "--encoder-option", "max_length=16", "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert DenseIndex(tmp_path / "idx").docids == ["d1", "d2"]
