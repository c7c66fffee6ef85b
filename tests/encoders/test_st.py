"""The ``st`` encoder and sentence-transformers detection, on a tiny ST model directory with a Dense
projection, Normalize and prompts: mlirkit's vectors are ``SentenceTransformer(dir).encode``'s."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.encoders import load_encoder, resolve_encoder_class
from mlirkit.encoders.st_config import read_st_config

QUERIES = ["what is the capital of france", "Москва", "東京は日本の首都です。"]
DOCS = ["Paris is the capital of France.", "Der schnelle braune Fuchs springt über den faulen Hund.", "x"]
PROMPTS = {"query": "query: ", "document": "passage: ", "other": "classify: "}


def _save_st(tiny_model_dir: Path, target: Path, *, dense: bool, pooling: str = "mean",
             normalize: bool = True) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize, Pooling, Transformer

    modules = [Transformer(str(tiny_model_dir), max_seq_length=64), Pooling(32, pooling_mode=pooling)]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        if dense:  # EmbeddingGemma's shape: up, then back down
            modules += [Dense(32, 48, activation_function=torch.nn.Tanh()),
                        Dense(48, 32, bias=False, activation_function=torch.nn.Identity())]
    if normalize:
        modules.append(Normalize())
    SentenceTransformer(modules=modules, prompts=PROMPTS, default_prompt_name=None, device="cpu").save(str(target))
    (target / "mlirkit_encoder.json").unlink(missing_ok=True)  # the tiny model's own sidecar: not an ST file
    return target


@pytest.fixture(scope="module")
def st_dir(tiny_model_dir, tmp_path_factory) -> Path:
    return _save_st(tiny_model_dir, tmp_path_factory.mktemp("st") / "model", dense=True)


@pytest.fixture(scope="module")
def reference(st_dir):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(st_dir), device="cpu")


def test_config_reads_the_pipeline_and_prompts(st_dir):
    config = read_st_config(st_dir)
    assert config.kinds == ["Transformer", "Pooling", "Dense", "Dense", "Normalize"]
    assert config.pooling == "mean" and config.normalize
    assert config.dense == [(32, 48), (48, 32)]
    assert config.prompt("query") == "query: " and config.prompt("doc") == "passage: "
    assert config.prompt("query", "other") == "classify: "
    with pytest.raises(MlirkitError, match="no prompt named 'nope'"):
        config.prompt("query", "nope")
    assert "Dense" in config.hf_compatible()


def test_directory_with_modules_json_loads_as_st(st_dir):
    assert resolve_encoder_class(str(st_dir)) == "st"
    encoder = load_encoder(str(st_dir))
    assert encoder.class_name == "st" and encoder.dim == 32 and encoder.normalized
    fp = encoder.fingerprint
    assert fp["modules"] == ["Transformer", "Pooling", "Dense", "Dense", "Normalize"]
    assert fp["query_prefix"] == "query: " and fp["doc_prefix"] == "passage: "
    assert fp["weights"].startswith("sha256:")


def test_st_encodes_exactly_as_sentence_transformers(st_dir, reference):
    encoder = load_encoder(str(st_dir), device="cpu")
    q, d = encoder.encode_queries(QUERIES), encoder.encode_docs(DOCS)
    want_q = reference.encode(QUERIES, prompt_name="query", convert_to_numpy=True)
    want_d = reference.encode(DOCS, prompt_name="document", convert_to_numpy=True)
    assert q.dtype == np.float32 and q.shape == (3, 32)
    assert np.abs(q - want_q).max() < 1e-5 and np.abs(d - want_d).max() < 1e-5
    # the prompts matter: without them the vectors differ
    assert np.abs(q - reference.encode(QUERIES, convert_to_numpy=True)).max() > 1e-3
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)


def test_other_prompt_names_and_empty_input(st_dir, reference):
    encoder = load_encoder(str(st_dir), "st", query_prompt_name="other", device="cpu")
    want = reference.encode(QUERIES, prompt_name="other", convert_to_numpy=True)
    assert np.abs(encoder.encode_queries(QUERIES) - want).max() < 1e-5
    assert encoder.encode_docs([]).shape == (0, 32)
    with pytest.raises(MlirkitError, match="pooling"):
        load_encoder(str(st_dir), "st", pooling="cls")


def test_hf_reads_a_plain_st_directory_exactly(tiny_model_dir, tmp_path):
    """Without Dense layers the hf encoder computes the ST pipeline itself, prompts and Normalize included."""
    from sentence_transformers import SentenceTransformer

    d = _save_st(tiny_model_dir, tmp_path / "plain", dense=False, pooling="cls")
    hf = load_encoder(str(d), "hf", max_length=64, device="cpu")
    assert (hf.pooling, hf.normalize, hf.query_prefix, hf.doc_prefix) == ("cls", True, "query: ", "passage: ")
    ref = SentenceTransformer(str(d), device="cpu")
    assert np.abs(hf.encode_queries(QUERIES) - ref.encode(QUERIES, prompt_name="query")).max() < 1e-5
    assert np.abs(hf.encode_docs(DOCS) - ref.encode(DOCS, prompt_name="document")).max() < 1e-5


def test_missing_library_names_the_extra(st_dir, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_st(name, *args, **kwargs):
        if name.startswith("sentence_transformers"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_st)
    with pytest.raises(MlirkitError, match=r"pip install 'mlirkit\[st\]'"):
        load_encoder(str(st_dir), "st")


def test_directory_without_family_is_refused_with_how_to_name_it(tiny_model_dir, tmp_path):
    d = tmp_path / "anon"
    shutil.copytree(tiny_model_dir, d)
    (d / "mlirkit_encoder.json").unlink()
    with pytest.raises(MlirkitError, match="name it with family='NAME' .*, or family='none' for mean pooling.*"
                                           "or give pooling/normalize/query_prefix/doc_prefix$"):
        load_encoder(str(d), "hf")
    e5 = load_encoder(str(d), "hf", family="multilingual-e5", max_length=64)
    assert (e5.query_prefix, e5.normalize) == ("query: ", True)
    assert load_encoder(str(d), "hf", family="none", max_length=64).query_prefix == ""
    assert load_encoder(str(d), "hf", pooling="cls", max_length=64).pooling == "cls"
    config = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**config, "_name_or_path": "BAAI/bge-m3"}))
    bge = load_encoder(str(d), "hf", max_length=64)
    assert (bge.family.name, bge.pooling) == ("bge-m3", "cls")


def test_an_option_the_class_does_not_take_is_one_line(st_dir):
    with pytest.raises(MlirkitError, match="the st encoder takes no option family"):
        load_encoder(str(st_dir), family="bge-m3")


def test_detection_without_the_library(st_dir, tiny_model_dir, tmp_path, monkeypatch):
    """Without sentence-transformers: hf for a pipeline it computes exactly, st (naming the extra) for Dense."""
    import importlib.util

    plain = _save_st(tiny_model_dir, tmp_path / "plain", dense=False)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real_find_spec(name, *a))
    assert resolve_encoder_class(str(plain)) == "hf"
    assert resolve_encoder_class(str(st_dir)) == "st"
    assert resolve_encoder_class(str(tiny_model_dir)) == "hf"  # no modules.json
