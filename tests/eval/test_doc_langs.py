from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from mlirkit.base.errors import InputFormatError, MlirkitError
from mlirkit.eval import read_query_langs
from mlirkit.io.doc_langs import read_doc_langs
from mlirkit.eval.query_langs import resolve_query_langs


def test_from_index_directory(tmp_path):
    from mlirkit.index import IndexWriter

    with IndexWriter(tmp_path / "idx", dim=2, encoder={"name": "test"}, normalized=True) as w:
        w.add(["a", "b"], ["en", "de"], np.eye(2, dtype=np.float32))
    assert read_doc_langs(tmp_path / "idx") == {"a": "en", "b": "de"}
    (tmp_path / "idx" / "langs").unlink()
    with pytest.raises(MlirkitError, match="no 'langs' file"):
        read_doc_langs(tmp_path / "idx")


def test_from_two_column_tsv(tmp_path):
    p = tmp_path / "langs.tsv"
    p.write_text("# id lang\na\ten\nb\tde\n")
    assert read_doc_langs(p) == {"a": "en", "b": "de"}
    gz = tmp_path / "langs.tsv.gz"
    gz.write_bytes(gzip.compress(b"a\ten\n"))
    assert read_doc_langs(gz) == {"a": "en"}
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\ten\na\tde\n")
    with pytest.raises(InputFormatError, match=r"bad.tsv:2: duplicate document id 'a'"):
        read_doc_langs(bad)
    bad.write_text("a\ten\nb\tde\tx\n")
    with pytest.raises(InputFormatError, match=r"bad.tsv:2: expected 2 tab-separated columns"):
        read_doc_langs(bad)
    bad.write_text("a\ten\nb\t\n")
    with pytest.raises(InputFormatError, match=r"bad.tsv:2: empty document id or language"):
        read_doc_langs(bad)


def test_from_corpus_jsonl(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in [{"_id": "a", "text": "hello", "lang": "en"},
                                                   {"_id": "b", "text": "hallo", "lang": "de"}]) + "\n")
    assert read_doc_langs(p) == {"a": "en", "b": "de"}


def test_query_langs(tmp_path):
    p = tmp_path / "queries.jsonl"
    p.write_text('{"_id": "q1", "text": "x", "lang": "de"}\n{"_id": "q2", "text": "y"}\n')
    assert read_query_langs(p, default_lang="en") == {"q1": "de", "q2": "en"}
    assert resolve_query_langs(["a", "b"], "fr") == ["fr", "fr"]
    assert resolve_query_langs(["a"], {"a": ""}) == ["und"]
    with pytest.raises(MlirkitError, match="query language: invalid language 'e n'"):
        resolve_query_langs(["a"], "e n")
    assert resolve_query_langs(["a", "b"], {"a": "EN", "b": "zh-hans"}) == ["en", "zh-Hans"]
