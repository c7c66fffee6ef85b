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


def test_ranx_kernels_are_cached_in_mlirkits_cache_and_the_process_is_left_as_it_was(tmp_path):
    """numba picks a kernel's cache directory while ranx is imported: mlirkit's cache for that import only,
    neither os.environ nor numba's configuration changed; a NUMBA_CACHE_DIR the user set is kept."""
    code = ("import os, sys, numba, mlirkit.eval\n"
            "from mlirkit.base.numba_cache import import_ranx\n"
            "import_ranx()\n"
            "print(os.environ.get('NUMBA_CACHE_DIR'), repr(numba.config.CACHE_DIR), "
            "sys.modules['ranx.metrics.ndcg']._dcg._cache._cache_path)\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_CACHE_DIR"}
    env["MLIRKIT_CACHE"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    environ, config, kernel_dir = out.split()
    assert (environ, config) == ("None", "''")
    assert kernel_dir.startswith(str(tmp_path / "cache" / "numba") + "/")
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    environ, config, kernel_dir = out.split()
    assert environ == str(tmp_path / "mine") and config == repr(str(tmp_path / "mine"))
    assert kernel_dir.startswith(str(tmp_path / "mine") + "/")
