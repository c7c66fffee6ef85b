"""Library code leaves the process alone: importing mlirkit, building and using an encoder (torch and OpenVINO
backends), importing ranx through mlirkit and reading an mlirkit id change no global state of the process.

Each check runs in a fresh interpreter that snapshots the state first: ``sys.meta_path`` and ``sys.path_hooks``,
``os.environ``, every entry ``sys.modules`` had (still there, still the same module; new entries are modules,
never a ``None`` that blocks an import), argparse's classes, the root logger, the signal handlers, the
``sys`` hooks. The command lines may change some of it (logging, ``--threads``, the malloc threshold);
library code may not.

What a third-party library changes while it is itself imported is its own doing, and the encoder check
imports those libraries before its snapshot (:data:`LIBRARIES`): transformers puts an alias finder on
``sys.meta_path`` and replaces its own ``sys.modules`` entry when ``transformers.processing_utils`` loads;
importing ``torch._dynamo`` sets ``TORCHINDUCTOR_CACHE_DIR``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: imported before the encoder check's snapshot (their own import-time changes, above)
LIBRARIES = ("torch", "torch._dynamo", "transformers", "transformers.processing_utils",
             "transformers.models.xlm_roberta.modeling_xlm_roberta", "openvino")

SNAPSHOT = r'''
import argparse, logging, os, signal, sys

def snapshot():
    return {
        "sys.meta_path": list(sys.meta_path),
        "sys.path_hooks": list(sys.path_hooks),
        "os.environ": dict(os.environ),
        "argparse": {n: dict(vars(c)) for n, c in vars(argparse).items() if isinstance(c, type)},
        "root logger": (logging.root.level, list(logging.root.handlers)),
        "signals": {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)},
        "sys hooks": (sys.excepthook, sys.displayhook, sys.getrecursionlimit(), sys.getswitchinterval()),
        "cwd": os.getcwd(),
    }

def changes(before, before_modules):
    after = snapshot()
    out = [f"{key} changed: {before[key]!r:.300} -> {after[key]!r:.300}" for key in before if before[key] != after[key]]
    if before["os.environ"] != after["os.environ"]:
        keys = set(before["os.environ"]) ^ set(after["os.environ"]) | {
            k for k in before["os.environ"] if after["os.environ"].get(k) != before["os.environ"][k]}
        out.append(f"environment variables changed: {sorted(keys)}")
    out += [f"sys.modules[{name!r}] replaced or removed" for name, module in before_modules.items()
            if sys.modules.get(name) is not module]
    out += [f"sys.modules[{name!r}] = {module!r}" for name, module in sys.modules.items()
            if name not in before_modules and module is None]
    return out

before, before_modules = snapshot(), dict(sys.modules)
'''


def _run(steps: str, env: dict[str, str], *flags: str, first: tuple[str, ...] = ()) -> list[str]:
    code = "".join(f"import {m}\n" for m in first) + SNAPSHOT + steps + "\nimport json\nprint(json.dumps(changes(before, before_modules)))\n"
    done = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def env(tmp_path):
    keep = ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONPATH", "NUMBA_CACHE_DIR")
    return {**{k: v for k, v in os.environ.items() if k in keep}, "HF_HUB_OFFLINE": "1",
            "MLIRKIT_CACHE": str(tmp_path / "cache"), "IR_DATASETS_HOME": str(tmp_path / "irds")}


def test_import_mlirkit_changes_nothing_and_imports_only_mlirkit_and_the_standard_library(env):
    """As ``python -X importtime -c "import mlirkit"`` runs it."""
    steps = """
import mlirkit
new = sorted({m.split(".")[0] for m in set(sys.modules) - set(before_modules)} - {"mlirkit"} - sys.stdlib_module_names)
assert not [m for m in new if not m.startswith("_")], new
"""
    assert _run(steps, env, "-X", "importtime") == []


def test_building_and_using_encoders_changes_nothing(env, tiny_model_dir):
    steps = f"""
import mlirkit as mk
for backend in ("torch", "openvino"):
    encoder = mk.load_encoder({str(tiny_model_dir)!r}, "hf", max_length=16, backend=backend, threads=1)
    assert encoder.encode_docs(["ein Satz", "a sentence"], ["de", "en"]).shape[0] == 2
    assert encoder.encode_queries(["a query"], ["en"]).shape[0] == 1
from mlirkit.encoders import hf
assert not hf._MALLOC_FIXED, "building an encoder pinned malloc's mmap threshold (a CLI's choice)"
"""
    assert _run(steps, env, first=LIBRARIES) == []


def test_ranx_and_the_mlirkit_ids_change_nothing(env):
    """ranx through mlirkit (its kernels cached in mlirkit's cache) and the first mlirkit id read."""
    steps = """
import mlirkit as mk, mlirkit.eval
from mlirkit.base.numba_cache import import_ranx
import_ranx()
assert len(mk.read_topics("mlirkit/ddtp/en/dev")) > 0
"""
    env = {k: v for k, v in env.items() if k != "NUMBA_CACHE_DIR"}
    assert _run(steps, env) == []


def test_a_planted_change_is_found(env):
    """The checks see each kind of change (so an empty list above means something)."""
    steps = """
import os, sys, argparse, importlib.abc
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, *a): return None
sys.meta_path.insert(0, Finder())
os.environ["NUMBA_CACHE_DIR"] = "/somewhere"
sys.modules["openvino_telemetry"] = None
argparse._ActionsContainer.add_argument = lambda self, *a, **k: None
"""
    found = _run(steps, {k: v for k, v in env.items() if k != "NUMBA_CACHE_DIR"})
    kinds = {line.split(" ")[0] for line in found}
    assert {"sys.meta_path", "os.environ", "argparse", "environment", "sys.modules['openvino_telemetry']"} <= kinds, found


@pytest.mark.jvm
def test_booting_the_jvm_leaves_the_environment_alone(env):
    """pyjnius reads JAVA_HOME when it starts the JVM; boot_jvm sets it for that moment only, and Anserini works."""
    steps = """
from mlirkit.base.jvm import boot_jvm, java_home
info = boot_jvm()
assert info.java_version.split(".")[0] == "21" and info.java_home == java_home(), info
from jnius import autoclass
assert autoclass("java.lang.System").getProperty("java.home").startswith(str(java_home()))
"""
    assert _run(steps, env) == []
