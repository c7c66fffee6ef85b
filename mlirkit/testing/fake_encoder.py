"""A deterministic numpy encoder for fast tests: hashed bag of words plus a per-language offset.

The offset makes documents of one language closer to each other than to their translations,
which is exactly the language bias SHIFT removes; tests can plant and recover it.
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from mlirkit.encoders.base import Encoder


def _unit_vector(key: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim)
    return v / np.linalg.norm(v)


class FakeEncoder(Encoder):
    class_name = "fake"

    def __init__(self, dim: int = 16, lang_strength: float = 0.5, normalize: bool = False) -> None:
        self._dim = dim
        self.lang_strength = lang_strength
        self.normalize = normalize

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"class": "fake", "dim": self._dim, "lang_strength": self.lang_strength, "normalize": self.normalize}

    def _encode(self, texts: Sequence[str], langs: Sequence[str | None] | None) -> np.ndarray:
        langs = list(langs) if langs is not None else [None] * len(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float64)
        for i, (text, lang) in enumerate(zip(texts, langs)):
            for word in text.lower().split():
                out[i] += _unit_vector("w:" + word, self._dim)
            if lang:
                out[i] += self.lang_strength * _unit_vector("l:" + lang, self._dim) * max(1, len(text.split())) ** 0.5
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.where(norms == 0, 1, norms)
        return out.astype(np.float32)

    def encode_queries(self, texts, langs=None, *, batch_size=None, show_progress=False) -> np.ndarray:
        return self._encode(texts, langs)

    def encode_docs(self, texts, langs=None, *, batch_size=None, show_progress=False) -> np.ndarray:
        return self._encode(texts, langs)


__all__ = ["FakeEncoder"]
