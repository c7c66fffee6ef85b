"""Make ``mlirkit/...`` ids visible to ir_datasets after a plain ``import mlirkit``, at no cost.

``install()`` (called by ``mlirkit/__init__.py``) adds a finder to ``sys.meta_path`` that waits for
``ir_datasets`` to be imported and then imports :mod:`mlirkit.datasets`, which registers every id. So
``import mlirkit`` itself does no I/O and imports nothing heavy, while ``ir_datasets.load("mlirkit/ddtp/en")``
works in any process that imported mlirkit, before or after ir_datasets. When ir_datasets is already
imported, the ids are registered at once.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Any

_lock = threading.Lock()


def register() -> None:
    """Register mlirkit's ids with ir_datasets now (idempotent)."""
    import mlirkit.datasets  # noqa: F401  (importing it registers every id)


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: Any):
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        from pathlib import Path

        from mlirkit.base.env import env_directory

        # ir_datasets makes directories under $IR_DATASETS_HOME while it is imported: a file there is one error
        env_directory("IR_DATASETS_HOME", Path.home() / ".ir_datasets")
        self._loader.exec_module(module)
        register()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps ir_datasets' own loader so that its module runs first, then the registration."""

    def find_spec(self, fullname: str, path: Any, target: Any = None):
        if fullname != "ir_datasets":
            return None
        uninstall()
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


_finder = _Finder()


def install() -> None:
    with _lock:
        if "ir_datasets" in sys.modules:
            pass
        elif _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
            return
        else:
            return
    register()


def uninstall() -> None:
    with _lock:
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
