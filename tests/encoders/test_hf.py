"""The ``hf`` encoder on a tiny random XLM-R model with the real tokenizer (fast, offline)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from mlirkit.encoders import ENCODER_CLASSES, PRESETS, load_encoder
from mlirkit.encoders.hf import OFFLINE_MODELS, HFEncoder, pool
from mlirkit.encoders.prefixes import FAMILIES, WEB_SEARCH_TASK, family_for
from mlirkit.base.errors import MlirkitError

TEXTS = [
    "short",
    "Der schnelle braune Fuchs springt über den faulen Hund, und dann noch einmal.",
    "Москва — столица России.",
    "東京は日本の首都です。",
    "A somewhat longer English sentence about package descriptions in Debian and their translations.",
    "القاهرة هي عاصمة مصر",
    "भारत",
]


@pytest.fixture(scope="module")
def e5_style_dir(tiny_model_dir, tmp_path_factory) -> Path:
    """The tiny model with a sidecar that puts it in the multilingual-e5 family (like the q4 preset)."""
    d = tmp_path_factory.mktemp("tiny_e5") / "model"
    shutil.copytree(tiny_model_dir, d)
    (d / "mlirkit_encoder.json").write_text(json.dumps(
        {"family": "multilingual-e5", "model": "intfloat/multilingual-e5-small", "source": "tiny-test"}))
    return d


@pytest.fixture(scope="module")
def manual_embeddings(tiny_model_dir) -> dict[str, np.ndarray]:
    """Each text alone through AutoTokenizer + AutoModel (no padding), pooled by hand in numpy."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    model = AutoModel.from_pretrained(str(tiny_model_dir)).eval()
    rows: dict[str, list[np.ndarray]] = {"mean": [], "cls": [], "last": []}
    with torch.inference_mode():
        for t in TEXTS:
            enc = tok(t, truncation=True, max_length=64, return_tensors="pt")
            h = model(**enc).last_hidden_state[0].numpy().astype(np.float64)  # (L, d)
            rows["mean"].append(h.mean(0))
            rows["cls"].append(h[0])
            rows["last"].append(h[-1])
    return {k: np.stack(v) for k, v in rows.items()}


# ---------------------------------------------------------------- resolution
def test_local_dir_resolves_to_hf_class(tiny_model_dir, tiny_encoder):
    assert isinstance(tiny_encoder, HFEncoder)
    enc = load_encoder(str(tiny_model_dir))  # no class given: a plain directory is an hf model
    assert isinstance(enc, HFEncoder) and enc.dim == 32
    assert enc.fingerprint["model"] == str(Path(tiny_model_dir).resolve())


def test_preset_resolves_through_offline_registry(e5_style_dir, monkeypatch):
    import mlirkit.encoders.hf as hf

    calls = []

    def fake_builder(name):
        calls.append(name)
        return e5_style_dir

    monkeypatch.setattr(hf, "offline_model_dir", fake_builder)
    enc = load_encoder("multilingual-e5-small-q4", max_length=64)
    assert calls == ["multilingual-e5-small-q4"]
    fp = enc.fingerprint
    assert fp["model"] == "intfloat/multilingual-e5-small" and fp["source"] == "tiny-test"
    assert (fp["pooling"], fp["normalize"], fp["query_prefix"], fp["doc_prefix"]) == ("mean", True, "query: ", "passage: ")
    assert PRESETS.get("multilingual-e5-small-q4").encoder_class == "hf"


def test_unknown_names_get_did_you_mean():
    with pytest.raises(MlirkitError, match=r"did you mean: multilingual-e5-small-q4\?.*HF_HUB_OFFLINE"):
        load_encoder("multilingual-e5-small-q5")
    with pytest.raises(MlirkitError, match="no such directory"):
        load_encoder("./no/such/model_dir")
    with pytest.raises(MlirkitError, match="did you mean: hf"):
        load_encoder("whatever", "hff")


def test_duplicate_registration_refused():
    with pytest.raises(ValueError, match="already registered"):
        OFFLINE_MODELS.register("multilingual-e5-small-q4", "x:y")
    with pytest.raises(ValueError, match="already registered"):
        FAMILIES.register("bge-m3", FAMILIES.get("bge-m3"))
    with pytest.raises(ValueError, match="already registered"):
        ENCODER_CLASSES.register("hf", "x:y")


def test_bad_options_are_user_errors(tiny_model_dir):
    for kwargs, msg in [({"pooling": "max"}, "unknown pooling"), ({"dtype": "int4"}, "unknown dtype"),
                        ({"batch_size": 0}, "batch_size"), ({"max_length": 1}, "max_length"),
                        ({"quantize": "int4"}, "unknown quantize"), ({"threads": 0}, "threads")]:
        with pytest.raises(MlirkitError, match=msg):
            HFEncoder(str(tiny_model_dir), **kwargs)


def test_broken_local_dir_is_a_user_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(MlirkitError, match="cannot load a Hugging Face model"):
        HFEncoder(str(tmp_path))


# ---------------------------------------------------------------- family table
def test_family_table_matches_whole_ids_only():
    assert family_for("intfloat/multilingual-e5-large").name == "multilingual-e5"
    assert family_for("INTFLOAT/Multilingual-E5-Base").name == "multilingual-e5"
    assert family_for("intfloat/multilingual-e5-large-instruct").name == "multilingual-e5-instruct"
    assert family_for("BAAI/bge-m3").pooling == "cls"
    q3 = family_for("Qwen/Qwen3-Embedding-0.6B")
    assert q3.pooling == "last" and q3.query_prefix == f"Instruct: {WEB_SEARCH_TASK}\nQuery: " and q3.doc_prefix == ""
    assert family_for("Alibaba-NLP/gte-Qwen2-7B-instruct").pooling == "last"
    gemma = family_for("google/embeddinggemma-300m")
    assert (gemma.query_prefix, gemma.doc_prefix) == ("task: search result | query: ", "title: none | text: ")
    assert family_for("nvidia/llama-nemotron-embed-1b-v2").query_prefix == "query: "
    # no substring guessing
    assert family_for("someone/multilingual-e5-small-finetuned") is None
    assert family_for("multilingual-e5-small") is None
    assert family_for(None) is None


def test_every_pattern_belongs_to_exactly_one_family():
    for name in FAMILIES.names():
        for pattern in FAMILIES.get(name).patterns:
            if "*" not in pattern:
                assert family_for(pattern).name == name


# ---------------------------------------------------------------- encoding
def test_length_sorted_batches_equal_one_by_one(tiny_encoder):
    batched = tiny_encoder.encode_docs(TEXTS, batch_size=3)
    single = np.concatenate([tiny_encoder.encode_docs([t], batch_size=1) for t in TEXTS])
    assert batched.dtype == np.float32 and batched.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(batched, single, atol=2e-5, rtol=1e-4)
    # order is restored: a permutation of the input permutes the output
    perm = [3, 0, 6, 2, 5, 1, 4]
    np.testing.assert_allclose(tiny_encoder.encode_docs([TEXTS[i] for i in perm], batch_size=2), batched[perm],
                               atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("pooling", ["mean", "cls", "last"])
def test_pooling_matches_manual_computation(tiny_model_dir, manual_embeddings, pooling):
    enc = HFEncoder(str(tiny_model_dir), pooling=pooling, normalize=False, max_length=64)
    got = enc.encode_docs(TEXTS, batch_size=4)
    want = manual_embeddings[pooling]
    np.testing.assert_allclose(got, want, atol=2e-5, rtol=1e-4)


def test_pool_function_hand_computed():
    import torch

    h = torch.arange(2 * 3 * 2, dtype=torch.float32).reshape(2, 3, 2)  # (B=2, L=3, d=2)
    right = torch.tensor([[1, 1, 0], [1, 1, 1]])
    left = torch.tensor([[0, 1, 1], [1, 1, 1]])
    assert pool(h, right, "mean").tolist() == [[1.0, 2.0], [8.0, 9.0]]
    assert pool(h, right, "cls").tolist() == [[0.0, 1.0], [6.0, 7.0]]
    assert pool(h, right, "last").tolist() == [[2.0, 3.0], [10.0, 11.0]]
    assert pool(h, left, "last").tolist() == [[4.0, 5.0], [10.0, 11.0]]
    with pytest.raises(MlirkitError):
        pool(h, right, "max")


def test_prefixes_applied_for_e5_family(e5_style_dir):
    enc = HFEncoder(str(e5_style_dir), max_length=64)
    plain = HFEncoder(str(e5_style_dir), query_prefix="", doc_prefix="", max_length=64)
    q, d = enc.encode_queries(TEXTS), enc.encode_docs(TEXTS)
    assert not np.allclose(q, d, atol=1e-3)
    np.testing.assert_allclose(q, plain.encode_queries(["query: " + t for t in TEXTS]), atol=2e-5)
    np.testing.assert_allclose(d, plain.encode_docs(["passage: " + t for t in TEXTS]), atol=2e-5)
    override = HFEncoder(str(e5_style_dir), query_prefix="search: ", pooling="cls", normalize=False, max_length=64)
    fp = override.fingerprint
    assert (fp["query_prefix"], fp["doc_prefix"], fp["pooling"], fp["normalize"]) == ("search: ", "passage: ", "cls", False)


def test_normalisation(tiny_model_dir):
    raw = HFEncoder(str(tiny_model_dir), normalize=False, max_length=64).encode_docs(TEXTS)
    unit = HFEncoder(str(tiny_model_dir), normalize=True, max_length=64).encode_docs(TEXTS)
    norms = np.linalg.norm(raw, axis=1)
    assert not np.allclose(norms, 1.0, atol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(unit, raw / norms[:, None], atol=1e-5)


def test_truncation_to_max_length(tiny_model_dir):
    enc = HFEncoder(str(tiny_model_dir), max_length=8)
    base = "one two three four five six seven eight nine ten"
    a, b = enc.encode_docs([base, base + " eleven twelve thirteen"])
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert HFEncoder(str(tiny_model_dir), max_length=10_000).max_length == 512  # 514 XLM-R positions - 2


def test_empty_and_bad_inputs(tiny_encoder):
    assert tiny_encoder.encode_queries([]).shape == (0, 32)
    with pytest.raises(MlirkitError, match="not a string"):
        tiny_encoder.encode_docs(["ok", None])


def test_progress_bar_does_not_change_results(tiny_encoder, capsys):
    a = tiny_encoder.encode_docs(TEXTS, show_progress=True, batch_size=2)
    np.testing.assert_allclose(a, tiny_encoder.encode_docs(TEXTS), atol=2e-5)


# ---------------------------------------------------------------- fingerprint
def test_fingerprint_stable_and_sensitive(tiny_model_dir):
    a = HFEncoder(str(tiny_model_dir), max_length=64)
    b = HFEncoder(str(tiny_model_dir), max_length=64)
    assert a.fingerprint == b.fingerprint and a.digest == b.digest
    sha = hashlib.sha256((Path(tiny_model_dir) / "model.safetensors").read_bytes()).hexdigest()
    assert a.fingerprint["weights"] == f"sha256:{sha}"
    assert set(a.fingerprint) >= {"class", "model", "weights", "pooling", "normalize", "query_prefix",
                                  "doc_prefix", "max_length", "dtype"}
    json.dumps(a.fingerprint)
    for change in [{"max_length": 32}, {"pooling": "cls"}, {"normalize": True}, {"query_prefix": "q: "},
                   {"doc_prefix": "d: "}]:
        assert HFEncoder(str(tiny_model_dir), **{"max_length": 64, **change}).digest != a.digest, change


def test_weights_hash_cached_by_size_and_mtime(tiny_model_dir, tmp_path):
    from mlirkit.encoders import weights_hash

    d = tmp_path / "m"
    shutil.copytree(tiny_model_dir, d)
    first = weights_hash.directory_weights_sha256(d)
    cache = json.loads((d / weights_hash.CACHE_NAME).read_text())
    assert cache["model.safetensors"]["sha256"] == first
    # a stale cache entry (same size+mtime) is trusted ...
    cache["model.safetensors"]["sha256"] = "0" * 64
    (d / weights_hash.CACHE_NAME).write_text(json.dumps(cache))
    assert weights_hash.directory_weights_sha256(d) == "0" * 64
    # ... until the file changes
    st = (d / "model.safetensors").stat()
    os.utime(d / "model.safetensors", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert weights_hash.directory_weights_sha256(d) == first


def test_weights_change_changes_fingerprint(tiny_model_dir, tmp_path):
    from mlirkit.testing import build_tiny_hf_model

    other = build_tiny_hf_model(tmp_path / "other", seed=99)
    a = HFEncoder(str(tiny_model_dir), max_length=64).fingerprint["weights"]
    b = HFEncoder(str(other), max_length=64).fingerprint["weights"]
    assert a != b


def test_token_budget_bounds_batches(tiny_model_dir):
    enc = HFEncoder(str(tiny_model_dir), max_length=64, batch_size=4, max_batch_tokens=40)
    shapes = []
    forward = enc.model.forward

    def spy(*args, **kwargs):
        shapes.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    enc.model.forward = spy
    got = enc.encode_docs(TEXTS)
    assert all(b * l <= 40 or b == 1 for b, l in shapes) and max(b for b, _ in shapes) <= 4
    assert sum(b for b, _ in shapes) == len(TEXTS)
    ref = HFEncoder(str(tiny_model_dir), max_length=64).encode_docs(TEXTS)
    np.testing.assert_allclose(got, ref, atol=2e-5, rtol=1e-4)
    with pytest.raises(MlirkitError, match="max_batch_tokens"):
        HFEncoder(str(tiny_model_dir), max_batch_tokens=0)
