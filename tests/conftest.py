"""Test-wide settings and fixtures: offline, caches in temporary dirs (except the persistent numba/model caches).

Fixtures live here; plain helpers in ``tests/helpers.py`` (where each kind of helper lives: ``tests/README.md``).
"""
from __future__ import annotations

import logging
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

from hypothesis import settings

from tests.helpers import HYPOTHESIS_PROFILES, SHARED_DATA, hypothesis_profile, require_shared_data

# Property tests draw their examples under one of two profiles: "default" (every run) or "thorough" (a release
# check: MLIRKIT_HYPOTHESIS_PROFILE=thorough, tests/README.md); each test's counts come from
# tests.helpers.examples. Never a deadline (a shared machine is slow at times), no example database on disk.
for _name in HYPOTHESIS_PROFILES:
    settings.register_profile(_name, deadline=None, database=None)
settings.load_profile(hypothesis_profile())


@pytest.fixture(autouse=True)
def _isolated_ir_datasets_home(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path_factory.mktemp("ir_datasets_home")))
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf_home")))


_PRISTINE_LOGGER = (list(logging.getLogger("mlirkit").handlers), logging.getLogger("mlirkit").propagate,
                    logging.getLogger("mlirkit").level)


def _reset_mlirkit_logger() -> None:
    package = logging.getLogger("mlirkit")
    package.handlers[:], package.propagate = list(_PRISTINE_LOGGER[0]), _PRISTINE_LOGGER[1]
    package.setLevel(_PRISTINE_LOGGER[2])


@pytest.fixture(autouse=True)
def _mlirkit_logging_restored():
    """A CLI run in-process configures the ``mlirkit`` logger. Every test starts from the logger as it was when the
    session began, before and after: a module- or session-scoped fixture that runs a CLI sets up before this
    fixture, so restoring only "the state before the test" would keep its handler for the rest of the worker."""
    _reset_mlirkit_logger()
    yield
    _reset_mlirkit_logger()


@pytest.fixture
def users_backend(monkeypatch):
    """The encoder backend a user gets (``auto``: OpenVINO bf16 where the CPU has it) for this test and the
    processes it starts, instead of the suite's ``MLIRKIT_BACKEND=torch`` (the encoder tests' fp32 reference):
    for the tests that run a documented surface as a user runs it."""
    from mlirkit.encoders.backends import BACKEND_ENV

    monkeypatch.delenv(BACKEND_ENV, raising=False)


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
    """The shared data set; missing, a test needing it fails in CI (``CI`` set) and is skipped elsewhere."""
    return require_shared_data(SHARED_DATA)


@pytest.fixture
def one_faiss_thread():
    """FAISS with one OpenMP thread: OpenMP threads spin-wait, so on a busy 2-core CI box one is much faster."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


RAY_FILES = {"tests/encode/test_ray_engine.py", "tests/encode/test_parts_equal_single.py", "tests/serve/test_ray_engine.py",
             "tests/test_ray_child.py"}
"""Files with Ray tests (run in one child pytest by ``tests/test_ray_child.py``) and that test: one unit of work."""


LONGEST = ("tests/test_readme_quickstart.py", "tests/test_cli_examples.py", "tests/test_docs_python.py")
"""The end-to-end sessions, the longest tests (minutes each): started first under pytest-xdist."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``scripts/test.sh``: ``-n auto --dist loadgroup``) a test file is one unit of work, so its
    module fixtures are built once (the Ray files are one unit: no two local Ray clusters at once), and the files
    with slow tests are handed out first (the end-to-end sessions before them), so that no long test starts
    last while the other worker idles."""
    if not getattr(config.option, "loadgroup", False):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    for item in items:
        path = item.path.relative_to(config.rootpath).as_posix()
        item.add_marker(pytest.mark.xdist_group("ray" if path in RAY_FILES else path))
    # stable: the collection order otherwise
    items.sort(key=lambda item: (item.path.relative_to(config.rootpath).as_posix() not in LONGEST,
                                 item.path not in slow_files))
