"""Hostile inputs to ``mlirkit.encode`` and ``mlirkit.search`` (issue 13): exit 2, one line, nothing written."""
from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.encode.cli import main as encode_main
from mlirkit.index import DenseIndex
from mlirkit.search.cli import main as search_main
from tests.helpers import assert_refused, assert_usage_error

GOOD = [{"_id": "d1", "text": "The ferry leaves twice a day.", "lang": "en"},
        {"_id": "d2", "text": "Die Fähre fährt zweimal am Tag.", "lang": "de"}]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def _encode_argv(corpus, index, model, *extra):
    return ["--corpus", str(corpus), "--output", str(index), "--encoder", str(model), "--encoder-option", "max_length=16", "--quiet",
            *extra]


@pytest.mark.parametrize("data, message", [
    (_jsonl([GOOD[0], {"_id": "d\x002", "text": "x", "lang": "en"}]), "corpus.jsonl:2: invalid document id"),
    (_jsonl([GOOD[0], {"_id": 2.0, "text": "x", "lang": "en"}]), "corpus.jsonl:2: document id (field '_id') must be"),
    (_jsonl([GOOD[0], {"_id": "d2", "text": 5, "lang": "en"}]), "corpus.jsonl:2: field 'text' must be a string"),
    (_jsonl([GOOD[0], {"_id": "d2", "text": "x", "lang": ["en"]}]), "corpus.jsonl:2: invalid language list"),
    (_jsonl([GOOD[0], {"_id": "d2", "text": "x", "lang": float("nan")}]), "corpus.jsonl:2: invalid language float"),
    (_jsonl([GOOD[0]]) + b'{"_id": ' + b"[" * 50000 + b"\n", "corpus.jsonl:2: invalid JSON (nested too deeply)"),
    (_jsonl([GOOD[0]]) + b'{"_id": ' + b"7" * 5000 + b"}\n", "corpus.jsonl:2: invalid JSON"),
    (gzip.compress(_jsonl(GOOD * 1) + b'{"_id": "d3", "text": "more", "lang": "en"}\n' * 40, mtime=0)[:-10], "cannot read"),
    (b"\x1f\x8b\x08garbage", "cannot read"),
    (_jsonl([GOOD[0]]) + b'{"_id": "d2", "text": "caf\xe9", "lang": "en"}\n', "corpus.jsonl:2: invalid UTF-8"),
])
def test_encode_refuses_hostile_corpora(tmp_path, tiny_model_dir, capsys, data, message):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(data)
    assert_refused(encode_main, _encode_argv(corpus, tmp_path / "index", tiny_model_dir), capsys, tmp_path, message)
    assert not (tmp_path / "index").exists()


def test_encode_strips_a_byte_order_mark(tmp_path, tiny_model_dir, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b"\xef\xbb\xbf" + _jsonl(GOOD))
    assert run_cli(encode_main, _encode_argv(corpus, tmp_path / "index", tiny_model_dir)) == 0, capsys.readouterr().err
    assert (tmp_path / "index" / "docid").read_text(encoding="utf-8") == "d1\nd2\n"


@pytest.mark.parametrize("option", ["--chunk-size", "--num-shards"])
@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_encode_counts_must_be_positive(tmp_path, tiny_model_dir, capsys, option, value):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(_jsonl(GOOD))
    assert_usage_error(encode_main, _encode_argv(corpus, tmp_path / "index", tiny_model_dir, option, value), capsys,
                       tmp_path, option)


@pytest.mark.parametrize("key, value, message", [
    ("batch_size", "0", "batch_size must be positive, got 0"), ("batch_size", "x", "batch_size=x: expected an integer"),
    ("max_length", "-3", "max_length must be at least 2, got -3"), ("max_length", "x", "max_length=x: expected an integer")])
def test_encode_encoder_counts_are_checked(tmp_path, tiny_model_dir, capsys, key, value, message):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(_jsonl(GOOD))
    argv = _encode_argv(corpus, tmp_path / "index", tiny_model_dir, "--encoder-option", f"{key}={value}")
    assert_refused(encode_main, argv, capsys, tmp_path, message)


def test_encode_alpha_for_a_language_the_transform_lacks(tmp_path, tiny_encoder, tiny_model_dir, capsys):
    from mlirkit.transforms.io import save_transform
    from mlirkit.transforms.shift_transform import ShiftTransform

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(_jsonl(GOOD))
    t = ShiftTransform.from_tensors({"de": np.full(tiny_encoder.dim, 0.01, dtype=np.float32)}, encoder=tiny_encoder.fingerprint,
                       source_lang="en")
    save_transform(t, tmp_path / "t.safetensors")
    argv = _encode_argv(corpus, tmp_path / "index", tiny_model_dir, "--transform", str(tmp_path / "t.safetensors"),
                        "--alpha", "0.5", "fr=1.0")
    assert_refused(encode_main, argv, capsys, tmp_path, "--alpha for 'fr'")


class _NanEncoder:
    """An encoder whose second document comes out as NaN (a broken model or backend)."""

    def __init__(self, inner):
        self.inner = inner
        self.dim, self.fingerprint, self.normalized = inner.dim, inner.fingerprint, inner.normalized

    def encode_docs(self, texts, langs=None, *, batch_size=None, show_progress=False):
        out = np.array(self.inner.encode_docs(texts, langs, batch_size=batch_size), dtype=np.float32)
        out[min(1, len(out) - 1)] = np.nan
        return out


def test_encoder_output_with_nan_is_refused(tmp_path, tiny_encoder):
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc

    with pytest.raises(MlirkitError, match=r"encoder output .*'d1'\.\.'d2'.*NaN or inf"):
        Indexer(tmp_path / "index", _NanEncoder(tiny_encoder), show_progress=False).index(
            [Doc("d1", "a", "en"), Doc("d2", "b", "de")])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text, message", [(None, "document 'd2': field 'text' must be a string, got null"),
                                           ("a \ud800", "document 'd2': field 'text' is not valid Unicode")])
def test_a_python_record_whose_text_no_encoder_takes_is_named_by_its_id(tmp_path, tiny_encoder, text, message):
    """Doc("d2", None) was 'text 1 is a NoneType' (no id); a lone surrogate the tokenizer's TypeError."""
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc

    with pytest.raises(MlirkitError, match=message):
        Indexer(tmp_path / "index", tiny_encoder, show_progress=False).index([Doc("d1", "a", "en"), Doc("d2", text, "de")])
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, tiny_encoder):
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc

    path = tmp_path_factory.mktemp("hostile") / "index"
    Indexer(path, tiny_encoder, show_progress=False, save_embeddings=True).index([Doc(**{"doc_id": r["_id"], "text": r["text"], "lang": r["lang"]}) for r in GOOD])
    return path


@pytest.mark.parametrize("topics, message", [
    ("q 1\ttext\ten\n", "invalid query id"),  # (a space in a TSV id column)
    ("q1\ttext\tEnglish\n", "topics.tsv:1: invalid language 'English'"),
    ("q1\ttext\n\x01q2\tmore\n", "topics.tsv:2: invalid query id"),
])
def test_search_refuses_hostile_topics(tmp_path, index_dir, capsys, topics, message):
    (tmp_path / "topics.tsv").write_text(topics, encoding="utf-8")
    argv = ["--index", str(index_dir), "--topics", str(tmp_path / "topics.tsv"), "--output", str(tmp_path / "run.txt"),
            "--quiet"]
    assert_refused(search_main, argv, capsys, tmp_path, message)


@pytest.mark.parametrize("option", ["--hits", "--ef-search", "--nprobe"])
def test_search_counts_must_be_positive(tmp_path, index_dir, capsys, option):
    (tmp_path / "topics.tsv").write_text("q1\ttext\n", encoding="utf-8")
    argv = ["--index", str(index_dir), "--topics", str(tmp_path / "topics.tsv"), "--output", str(tmp_path / "run.txt"),
            option, "0"]
    assert_usage_error(search_main, argv, capsys, tmp_path, option)


@pytest.mark.parametrize("meta, message", [
    ("{", "meta.json: not valid JSON"),
    ("[1, 2]", "meta.json: expected a JSON object, got list"),
    ('{"dim": "384"}', "meta.json: field 'dim' must be an integer >= 1"),
    ('{"dim": 0}', "meta.json: field 'dim' must be an integer >= 1"),
    ('{"encoder": "e5"}', "meta.json: field 'encoder' must be an object"),
    ('{"transform": 3}', "meta.json: field 'transform' must be an object or null"),
    ('{"index_type": {"name": 1}}', "meta.json: field 'index_type' needs a string 'name'"),
    (b"\xff\xfe{}", "meta.json: cannot read"),
])
def test_search_refuses_a_corrupt_meta_json(tmp_path, index_dir, capsys, meta, message):
    index = tmp_path / "index"
    shutil.copytree(index_dir, index)
    (index / "meta.json").write_bytes(meta if isinstance(meta, bytes) else meta.encode())
    (tmp_path / "topics.tsv").write_text("q1\ttext\n", encoding="utf-8")
    argv = ["--index", str(index), "--topics", str(tmp_path / "topics.tsv"), "--output", str(tmp_path / "run.txt"),
            "--quiet"]
    assert_refused(search_main, argv, capsys, tmp_path, message)
    with pytest.raises(MlirkitError, match="meta.json"):
        DenseIndex(index)
