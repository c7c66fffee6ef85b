"""Test-wide settings: offline, caches in temporary dirs (except the persistent numba/model caches)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# ranx/numba compile once and reuse across runs; the converted e5 model is reused too.
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "mlirkit-tests" / "numba"))
os.environ.setdefault("MLIRKIT_CACHE", str(Path.home() / ".cache" / "mlirkit-tests" / "cache"))
# hf encoders default to the torch backend in tests (their references are torch fp32 computations);
# tests of the other backends (tests/test_encoders_backends.py) name theirs.
os.environ.setdefault("MLIRKIT_BACKEND", "torch")

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_ir_datasets_home(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path_factory.mktemp("ir_datasets_home")))
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf_home")))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A tiny random-init XLM-R style encoder with the real multilingual-e5 tokenizer (never downloaded)."""
    from mlirkit.testing.tiny_models import build_tiny_hf_model

    return build_tiny_hf_model(tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def tiny_encoder(tiny_model_dir):
    from mlirkit.encoders import load_encoder

    return load_encoder(str(tiny_model_dir), "hf", max_length=64)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present")
    return SHARED_DATA
