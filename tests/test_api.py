"""The top-level API (``import mlirkit as mk``): cheap to import, every name from the one module defining it."""
from __future__ import annotations

import subprocess
import sys

import pytest

import mlirkit as mk
from tests.test_imports import HEAVY


def test_import_mlirkit_as_mk_imports_nothing_heavy_until_a_name_is_used():
    code = ("import sys, mlirkit as mk\n"
            f"print(sorted(m for m in {HEAVY + ('numba', 'pandas', 'numpy')!r} if m in sys.modules))\n"
            "mk.Searcher, mk.evaluate, mk.fit_from_pairs, mk.load_encoder, mk.apply_to_index\n"
            f"print(sorted(m for m in {HEAVY + ('numba',)!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "[]"]


def test_every_name_is_exported_once_from_the_module_that_defines_it():
    assert mk.__all__ == ["__version__", *sorted(mk.EXPORTS)]
    assert set(mk.__all__) <= set(dir(mk))
    for name, module in mk.EXPORTS.items():
        obj = getattr(mk, name)
        assert obj.__module__ == module, f"mk.{name} is defined in {obj.__module__}, not {module}"
        assert getattr(sys.modules[module], name) is obj


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Searchr'"):
        mk.Searchr  # noqa: B018


def test_import_mlirkit_eval_makes_numba_cache_persistent_unless_the_user_chose_one(tmp_path):
    code = "import os, mlirkit.eval, numba\nprint(os.environ.get('NUMBA_CACHE_DIR'), numba.config.CACHE_DIR)\n"
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_CACHE_DIR"}
    env["MLIRKIT_CACHE"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == [str(tmp_path / "cache" / "numba")] * 2
    assert not (tmp_path / "cache").exists()  # nothing created until numba writes a kernel
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == [str(tmp_path / "mine")] * 2
