"""mlirkit.io.doc_langs.read_doc_langs: every accepted form, one set of rules, every error."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from mlirkit.base.errors import InputFormatError, MlirkitError
from mlirkit.io.doc_langs import read_doc_langs

EXPECTED = {"a": "en", "b": "de"}


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_index_directory(tmp_path):
    from mlirkit.index import IndexWriter

    with IndexWriter(tmp_path / "idx", dim=2, encoder={"name": "test"}, normalized=True) as w:
        w.add(["a", "b"], ["en", "de"], np.eye(2, dtype=np.float32))
    assert read_doc_langs(tmp_path / "idx") == EXPECTED
    _write(tmp_path / "idx" / "langs", "en\n")
    with pytest.raises(MlirkitError, match=r"langs: 1 lines but 2 document ids"):
        read_doc_langs(tmp_path / "idx")
    (tmp_path / "idx" / "langs").unlink()
    with pytest.raises(MlirkitError, match="no 'langs' file"):
        read_doc_langs(tmp_path / "idx")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MlirkitError, match="is not an index directory"):
        read_doc_langs(tmp_path / "empty")


@pytest.mark.parametrize("name, text", [
    ("langs.tsv", "# docid lang\na\ten\n\nb\tde\n"),                       # docid<TAB>lang
    ("langs", "a en\nb   de\n"),                                            # whitespace, any file name
    ("corpus.tsv", "a\thello\ten\nb\thallo\tde\n"),                         # 3-column corpus TSV
    ("corpus.jsonl", '{"_id": "a", "title": "", "text": "hello", "lang": "en"}\n{"_id": "b", "text": "x", "lang": "de"}\n'),
    ("pyserini.jsonl", '{"id": "a", "contents": "hello", "lang": "en"}\n{"id": "b", "contents": "x", "lang": "de"}\n'),
    ("langs.jsonl", '{"docid": "a", "lang": "en"}\n{"doc_id": "b", "lang": "de"}\n'),
])
def test_file_forms(tmp_path, name, text):
    assert read_doc_langs(_write(tmp_path / name, text)) == EXPECTED
    packed = tmp_path / (name + ".bin")  # gzip recognised from the content
    packed.write_bytes(gzip.compress(text.encode()))
    assert read_doc_langs(packed) == EXPECTED


def test_json_id_fields_first_present_wins_and_ints_are_ids(tmp_path):
    p = _write(tmp_path / "x.jsonl", json.dumps({"id": "x", "_id": "a", "lang": "en"}) + "\n"
               + json.dumps({"docid": 7, "lang": "de"}) + "\n")
    assert read_doc_langs(p) == {"a": "en", "7": "de"}


@pytest.mark.parametrize("text, message", [
    ("a\ten\na\tde\n", r"x:2: duplicate document id 'a'"),
    ("a\ten\na\ten\n", r"x:2: duplicate document id 'a'"),           # even with the same language
    ("a\ten\nb\tde\tx\tz\n", r"x:2: expected 2 tab-separated columns \(docid, lang\), got 4"),
    ("a\ten\nb\n", r"x:2: expected 2 tab-separated columns"),
    ("a\ten\nb\t\n", r"x:2: empty document id or language"),
    ("a\tt\ten\nb\tde\n", r"x:2: expected 3 tab-separated columns \(id, text, lang\), got 2"),
    ("a en\nb de x\n", r"x:2: expected 2 columns \(docid lang\), got 3"),
    ('{"id": "a", "lang": "en"}\nb\tde\n', r"x:2: invalid JSON"),
    ('{"id": "a", "lang": "en"}\n{"lang": "de"}\n', r"x:2: missing document id \(one of _id, id, docid, doc_id\)"),
    ('{"id": "a"}\n', r"x:1: missing field 'lang'"),
    ('{"id": "a", "lang": 3}\n', r"x:1: field 'lang' must be a string"),
    ('{"id": "a", "lang": ""}\n', r"x:1: empty document id or language"),
    ('{"id": "a", "lang": "en"}\n[1]\n', r"x:2: expected a JSON object"),
])
def test_file_errors_name_file_and_line(tmp_path, text, message):
    with pytest.raises(InputFormatError, match=message):
        read_doc_langs(_write(tmp_path / "x", text))


def test_empty_sources_and_unknown_ids(tmp_path):
    with pytest.raises(MlirkitError, match="no documents"):
        read_doc_langs(_write(tmp_path / "x.tsv", "# nothing\n\n"))
    with pytest.raises(MlirkitError, match="neither an existing file nor an ir_datasets id"):
        read_doc_langs(tmp_path / "missing.tsv")
    broken = tmp_path / "b.tsv"
    broken.write_bytes(gzip.compress(b"a\ten\n" * 100)[:15])
    with pytest.raises(MlirkitError, match=r"b\.tsv: cannot read"):
        read_doc_langs(broken)


def test_ir_datasets_id():
    import ir_datasets

    import mlirkit.datasets  # noqa: F401

    langs = read_doc_langs("mlirkit/ddtp/en/test")
    docs = list(ir_datasets.load("mlirkit/ddtp/en/test").docs_iter())
    assert langs == {d.doc_id: d.lang for d in docs if d.text.strip()} and len(set(langs.values())) > 1
