"""Importing mlirkit and building CLI parsers stays light: no torch, faiss, pyserini, ranx or JVM."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "faiss", "pyserini", "jnius", "ranx", "transformers", "matplotlib", "ir_datasets",
         "openvino", "onnxruntime", "onnx", "filelock")


def test_import_is_light():
    code = (
        "import sys, mlirkit, mlirkit.encoders, mlirkit.encode.cli, mlirkit.search.cli, mlirkit.base.registry\n"
        "mlirkit.encode.cli.build_parser(); mlirkit.search.cli.build_parser()\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_registry_refuses_duplicates_and_suggests():
    import pytest

    from mlirkit.encoders import ENCODER_CLASSES, PRESETS
    from mlirkit.base.registry import Registry, UnknownNameError

    r: Registry[int] = Registry("thing")
    r.register("alpha", 1)
    with pytest.raises(ValueError, match="already registered"):
        r.register("alpha", 2)
    with pytest.raises(UnknownNameError, match="did you mean: alpha"):
        r.get("alpah")
    assert "hf" in ENCODER_CLASSES and "multilingual-e5-small-q4" in PRESETS
