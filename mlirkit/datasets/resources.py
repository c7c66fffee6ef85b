"""Where mlirkit's bundled files are installed (the ``mlirkit.resources`` package) and their manifest
(``resources/manifest.json``: record counts, the upstream archives' members and MD5s)."""
from __future__ import annotations

import functools
import json
from pathlib import Path

from mlirkit.base.errors import MlirkitError


def resources_dir() -> Path:
    """The installed ``mlirkit.resources`` package, or ``resources/`` of a source checkout."""
    try:
        from importlib.resources import files

        return Path(str(files("mlirkit.resources")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "resources"


def resource(rel: str) -> Path:
    p = resources_dir() / rel
    if not p.is_file():
        raise MlirkitError(f"bundled file {rel} is missing from {resources_dir()}: reinstall mlirkit, or rebuild it "
                           "with `python scripts/build_bundled.py` from the shared data (see docs/datasets.md)")
    return p


@functools.lru_cache(maxsize=None)
def manifest() -> dict:
    p = resources_dir() / "manifest.json"
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}


__all__ = ["manifest", "resource", "resources_dir"]
