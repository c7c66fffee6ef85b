"""sha256 of a model directory's weight files, cached by (size, mtime) so big models hash once.

The cache is a small JSON file beside the weights (``.mlirkit-sha256.json``); when the directory is
read-only (a system install, a shared HF cache) it goes to ``cache_dir("weight-hashes")`` instead.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from mlirkit.base.cache import cache_dir
from mlirkit.io.files import file_sha256

logger = logging.getLogger(__name__)

CACHE_NAME = ".mlirkit-sha256.json"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def weight_files(directory: Path, suffixes: tuple[str, ...] = WEIGHT_SUFFIXES) -> list[Path]:
    """Weight files of a model directory (top level, sorted by name)."""
    return sorted(p for p in Path(directory).iterdir()
                  if p.is_file() and p.name.endswith(suffixes) and not p.name.startswith("."))


def check_weight_files(directory: str | os.PathLike[str]) -> None:
    """Every weight file of a local model directory structurally sound (:mod:`mlirkit.io.binary`: a truncated or
    corrupt safetensors or torch file is one error naming it, before a library loads it)."""
    from mlirkit.io.binary import check_safetensors, check_torch_file

    for path in weight_files(Path(directory)):
        check_safetensors(path) if path.suffix == ".safetensors" else check_torch_file(path)


def directory_weights_sha256(directory: str | os.PathLike[str],
                             suffixes: tuple[str, ...] = WEIGHT_SUFFIXES) -> str | None:
    """One sha256 for all weight files: the file's own hash when there is one file, else the hash
    of the ``"name sha256"`` lines. None when the directory holds no weight files."""
    directory = Path(directory).resolve()
    files = weight_files(directory, suffixes)
    if not files:
        return None
    cache_path, cache = _load_cache(directory)
    digests: dict[str, str] = {}
    changed = False
    for path in files:
        st = path.stat()
        key = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
        entry = cache.get(path.name)
        if entry and entry.get("size") == key["size"] and entry.get("mtime_ns") == key["mtime_ns"]:
            digests[path.name] = entry["sha256"]
            continue
        logger.info("hashing %s (%.0f MB, cached afterwards)", path, st.st_size / 1e6)
        digests[path.name] = file_sha256(path)
        cache[path.name] = {**key, "sha256": digests[path.name]}
        changed = True
    if changed:
        _save_cache(directory, cache_path, cache)
    if len(files) == 1:
        return digests[files[0].name]
    lines = "".join(f"{name} {digest}\n" for name, digest in sorted(digests.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def _fallback_cache_path(directory: Path) -> Path:
    key = hashlib.sha1(str(directory).encode()).hexdigest()[:20]
    return cache_dir("weight-hashes") / f"{key}.json"


def _load_cache(directory: Path) -> tuple[Path, dict]:
    for path in (directory / CACHE_NAME, _fallback_cache_path(directory)):
        if path.is_file():
            try:
                return path, json.loads(path.read_text())
            except (OSError, ValueError):
                continue
    return directory / CACHE_NAME, {}


def _save_cache(directory: Path, path: Path, cache: dict) -> None:
    for target in (path, _fallback_cache_path(directory)):
        try:
            fd, tmp = tempfile.mkstemp(prefix=".sha256-", dir=target.parent)
            with os.fdopen(fd, "w") as f:
                json.dump(cache, f, indent=1, sort_keys=True)
            os.replace(tmp, target)
            return
        except OSError:
            continue
    logger.debug("could not cache the weights hash of %s", directory)


__all__ = ["CACHE_NAME", "check_weight_files", "directory_weights_sha256"]
