"""On-disk cache of embeddings, keyed by the encoder's fingerprint digest and a checksum of the input.

An entry is ``<root>/<encoder>/<label>-<side>-<encoder digest>-<data digest>.npy`` plus a ``.json``
sidecar (fingerprint, counts, creation time). The data digest is the SHA-256 of the side and every
``(lang, text)`` in order, so an entry is reused exactly when the same encoder (same weights, prefixes,
max length, quantisation, ...) would see the same texts; anything else is a different key. When a new
entry is written, older entries of the same encoder name, label and side are deleted (they can no
longer be hit by the current inputs and encoder settings).

Encoding happens in chunks of texts sorted by length (short texts batch together, little padding);
each finished chunk is saved, so an interrupted run resumes where it stopped.

Within one :class:`EmbeddingCache` (one benchmark run) every vector computed or read is remembered by
``(encoder digest, side, lang, text)``: an entry asked for with ``reuse=True`` encodes only the texts not
seen before (the XQuAD-R questions are LAReQA's too, its pair sets share sentences), and is then stored
whole like any other entry. Entries asked for without it (the DDTP part's) are always encoded whole, so
their vectors never depend on what else the run computed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.encoders.base import Encoder
from mlirkit.base.progress import plural

logger = logging.getLogger(__name__)

SIDES = ("doc", "query")
CACHE_FORMAT = 1


def data_digest(side: str, texts: Sequence[str], langs: Sequence[str | None]) -> str:
    """SHA-256 (hex) of the side and the ``(lang, text)`` sequence; any change of text, language or order changes it."""
    if len(texts) != len(langs):
        raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
    h = hashlib.sha256(f"mlirkit-embeddings/{CACHE_FORMAT}/{side}\n".encode())
    for text, lang in zip(texts, langs):
        t, la = text.encode("utf-8"), (lang or "").encode("utf-8")
        h.update(len(la).to_bytes(4, "little") + la + len(t).to_bytes(8, "little") + t)
    return h.hexdigest()


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_+=-]+", "_", name).strip("_") or "x"


@dataclass
class CacheStats:
    """What the cache did: entries reused or encoded, texts encoded (reported by the benchmark)."""

    hits: int = 0
    misses: int = 0
    texts_encoded: int = 0
    #: texts of computed entries taken from vectors this run had already computed or read
    texts_reused: int = 0
    removed_stale: int = 0
    entries: list[dict[str, Any]] = field(default_factory=list)


class EmbeddingCache:
    """Embeddings of ``(texts, langs)`` by an encoder, computed once and reused (see module docstring)."""

    def __init__(self, root: str | os.PathLike, *, chunk_size: int = 512, show_progress: bool = True) -> None:
        if chunk_size < 1:
            raise MlirkitError(f"chunk size must be positive, got {chunk_size}")
        self.root = Path(root)
        self.chunk_size = chunk_size
        self.show_progress = show_progress
        self.stats = CacheStats()
        #: ``(encoder digest, side) -> {(lang, text): vector}`` of this run (module docstring)
        self._seen: dict[tuple[str, str], dict[tuple[str | None, str], np.ndarray]] = {}

    def entry_path(self, encoder_name: str, label: str, side: str, encoder_digest: str, digest: str) -> Path:
        return self.root / _safe(encoder_name) / f"{_safe(label)}-{side}-{encoder_digest}-{digest[:16]}.npy"

    def embed(self, encoder: Encoder, encoder_name: str, label: str, side: str,
              texts: Sequence[str], langs: Sequence[str | None], *, reuse: bool = False) -> np.ndarray:
        """float32 ``(len(texts), dim)``: from the cache when present, else encoded (documents with
        ``encode_docs``, queries with ``encode_queries``; ``reuse``: only the texts this run has not seen,
        module docstring) and stored."""
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {side!r}")
        texts, langs = list(texts), list(langs)
        digest = data_digest(side, texts, langs)
        path = self.entry_path(encoder_name, label, side, encoder.digest, digest)
        record = {"encoder": encoder_name, "label": label, "side": side, "rows": len(texts), "path": str(path)}
        seen = self._seen.setdefault((encoder.digest, side), {})
        cached = self._load(path, len(texts), encoder.dim)
        if cached is not None:
            self.stats.hits += 1
            self.stats.entries.append({**record, "cached": True})
            logger.info("%s %s %s: %d embeddings from the cache", encoder_name, label, side, len(texts))
            seen.update(zip(zip(langs, texts), cached))
            return cached
        self.stats.misses += 1
        keys = list(zip(langs, texts))
        out = np.empty((len(texts), encoder.dim), dtype=np.float32)
        new = []
        for i, key in enumerate(keys):
            if reuse and key in seen:
                out[i] = seen[key]
            else:
                new.append(i)
        self.stats.texts_reused += len(texts) - len(new)
        if new:
            out[new] = self._encode(encoder, encoder_name, label, side, [texts[i] for i in new],
                                    [langs[i] for i in new], path)
        seen.update(zip(keys, out))
        self._store(path, out, {"format": CACHE_FORMAT, "encoder_name": encoder_name, "encoder": encoder.fingerprint,
                                "encoder_digest": encoder.digest, "label": label, "side": side,
                                "data_sha256": digest, "rows": len(texts), "dim": int(out.shape[1]),
                                "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        self._remove_stale(path, label, side)
        self.stats.entries.append({**record, "cached": False})
        return out

    # ------------------------------------------------------------------ internals
    def _load(self, path: Path, rows: int, dim: int) -> np.ndarray | None:
        if not path.is_file():
            return None
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            logger.warning("unreadable cache entry %s (%s): encoding again", path, e)
            return None
        if arr.shape != (rows, dim) or arr.dtype != np.float32:
            logger.warning("cache entry %s has shape %s, expected (%d, %d): encoding again", path, arr.shape, rows, dim)
            return None
        return arr

    def _encode(self, encoder: Encoder, encoder_name: str, label: str, side: str, texts: list[str],
                langs: list[str | None], path: Path) -> np.ndarray:
        from tqdm.auto import tqdm

        n = len(texts)
        out = np.empty((n, encoder.dim), dtype=np.float32)
        if n == 0:
            return out
        order = np.argsort(np.fromiter((len(t) for t in texts), dtype=np.int64, count=n), kind="stable")
        parts = self._parts_dir(path, data_digest(side, texts, langs))
        parts.mkdir(parents=True, exist_ok=True)
        encode = encoder.encode_docs if side == "doc" else encoder.encode_queries
        desc = f"encode {encoder_name} {label} ({plural(side)})"
        with tqdm(total=n, desc=desc, unit=side, disable=not self.show_progress, dynamic_ncols=True) as bar:
            for i, start in enumerate(range(0, n, self.chunk_size)):
                idx = order[start:start + self.chunk_size]
                part = parts / f"part-{i:05d}.npy"
                block = self._load(part, len(idx), encoder.dim)
                if block is None:
                    block = np.asarray(encode([texts[j] for j in idx], [langs[j] for j in idx]), dtype=np.float32)
                    if block.shape != (len(idx), encoder.dim):
                        raise MlirkitError(f"encoder {encoder_name} returned shape {block.shape} for "
                                           f"{len(idx)} texts (dim {encoder.dim})")
                    self._save_npy(part, block)
                    self.stats.texts_encoded += len(idx)
                out[idx] = block
                bar.update(len(idx))
        return out

    @staticmethod
    def _parts_dir(path: Path, digest: str) -> Path:
        """Where the chunks of an encoding in progress are kept: named after the texts actually encoded
        (those of the entry not seen before in the run), so a resumed run reuses chunks of the same texts only."""
        return path.with_name(f"{path.stem}.parts-{digest[:16]}")

    def _store(self, path: Path, arr: np.ndarray, meta: dict[str, Any]) -> None:
        self._save_npy(path, arr)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path.with_suffix(".json"))
        for parts in path.parent.glob(f"{path.stem}.parts-*"):
            shutil.rmtree(parts, ignore_errors=True)

    @staticmethod
    def _save_npy(path: Path, arr: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, np.ascontiguousarray(arr, dtype=np.float32), allow_pickle=False)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _remove_stale(self, keep: Path, label: str, side: str) -> None:
        prefix = f"{_safe(label)}-{side}-"
        for other in keep.parent.glob(prefix + "*"):
            stem = other.name.split(".", 1)[0]
            # same label and side, and nothing more in the name than the two digests
            if stem == keep.stem or stem.count("-") != keep.stem.count("-"):
                continue
            if other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
            else:
                other.unlink(missing_ok=True)
            if other.suffix == ".npy":
                self.stats.removed_stale += 1
                logger.info("removed stale cache entry %s", other)


__all__ = ["EmbeddingCache", "data_digest"]
