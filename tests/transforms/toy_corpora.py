"""Toy corpora with planted language offsets, shared by the transform tests (alpha, mining, pseudo-recall, guards)."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (written out, independent of the library's helper)."""
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def planted(seed: int = 3, groups: int = 120, d: int = 32,
            langs: Sequence[str] = ("de", "fr", "ja")) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    """Parallel corpus: every group is one topic (small spread) in en and ``langs``, plus a language offset
    (norm 3; zero for en) and a little noise. Returns ``(embs float32, langs, offsets)``."""
    rng = np.random.default_rng(seed)
    topics = 0.5 * rng.normal(size=(groups, d))
    offsets = {"en": np.zeros(d)}
    for lang in langs:
        offsets[lang] = 3 * unit(rng.normal(size=(1, d)))[0]
    embs = np.concatenate([topics + o + 0.05 * rng.normal(size=(groups, d)) for o in offsets.values()])
    return embs.astype(np.float32), [lang for lang in offsets for _ in range(groups)], offsets


def skewed(seed: int = 0, d: int = 24, per: int = 150,
           noise: float = 0.25) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    """Non-parallel corpus whose languages cover different topics (en: 0-3, de: 2-5, fr: 0, 1, 4, 5) plus a
    language offset (norm 2; zero for en)."""
    rng = np.random.default_rng(seed)
    topics = 1.5 * rng.normal(size=(6, d))
    offsets = {"en": np.zeros(d), **{lang: 2 * unit(rng.normal(size=(1, d)))[0] for lang in ("de", "fr")}}
    cover = {"en": [0, 1, 2, 3], "de": [2, 3, 4, 5], "fr": [0, 1, 4, 5]}
    embs, langs = [], []
    for lang, ts in cover.items():
        t = rng.choice(ts, size=per)
        embs.append(topics[t] + noise * rng.normal(size=(per, d)) + offsets[lang])
        langs += [lang] * per
    return np.concatenate(embs).astype(np.float32), langs, offsets


def even(seed: int, d: int = 24, per: int = 150,
         noise: float = 0.25) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    """Non-parallel corpus whose languages draw from the same six topics, plus a language offset (norm 2)."""
    rng = np.random.default_rng(seed)
    topics = 1.5 * rng.normal(size=(6, d))
    offsets = {"en": np.zeros(d), **{lang: 2 * unit(rng.normal(size=(1, d)))[0] for lang in ("de", "fr")}}
    embs, langs = [], []
    for lang, off in offsets.items():
        embs.append(topics[rng.choice(6, size=per)] + noise * rng.normal(size=(per, d)) + off)
        langs += [lang] * per
    return np.concatenate(embs).astype(np.float32), langs, offsets
