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

def topic_skewed(seed=0, d=32, r=4, n=200, langs=("en", "de", "fr"), skew=1.5, offset_in_topics=0.0, scale=3.0):
    """Documents = topic (r strong directions, each language centred on different topics) + a language offset
    orthogonal to the topic directions (or with the share ``offset_in_topics`` of its energy inside them) +
    isotropic noise; returns embs, langs, offsets, topic basis."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    topics, rest = q[:, :r], q[:, r:]
    rows, lang_list, offsets = [], [], {}
    for i, lang in enumerate(langs):
        centre = skew * rng.normal(size=r)  # this language's own topic mix (the skew)
        coef = scale * (centre + rng.normal(size=(n, r)))
        unit = lambda u: u / np.linalg.norm(u)  # noqa: E731
        inside, outside = topics @ unit(rng.normal(size=r)), rest @ unit(rng.normal(size=d - r))
        w = offset_in_topics
        off = np.zeros(d) if lang == "en" else 2.0 * (np.sqrt(1 - w) * outside + np.sqrt(w) * inside)
        offsets[lang] = off
        rows.append(coef @ topics.T + off + 0.3 * rng.normal(size=(n, d)))
        lang_list += [lang] * n
    return np.concatenate(rows), lang_list, offsets, topics


def topic_mixes(seed=0, d=32, r=4, clusters=12, n=300, langs=("en", "de", "fr"), concentration=0.3,
                offset_in_topics=0.0):
    """Documents of shared topics (``clusters`` centres in ``r`` strong directions) in language-specific proportions
    (Dirichlet(``concentration``): the languages cover the same topics, unevenly) + a language offset (orthogonal
    to the topic directions, or with ``offset_in_topics`` of its energy inside them) + noise; every topic has
    documents in every language, so topic-matched pairs exist. Returns embs, langs, offsets, topic basis."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    topics, rest = q[:, :r], q[:, r:]
    centres = 3.0 * rng.normal(size=(clusters, r))
    unit = lambda u: u / np.linalg.norm(u)  # noqa: E731
    rows, lang_list, offsets = [], [], {}
    for lang in langs:
        mix = rng.dirichlet(np.full(clusters, concentration))
        counts = np.maximum(rng.multinomial(n - clusters, mix), 0) + 1  # at least one document per topic
        w = offset_in_topics
        inside, outside = topics @ unit(rng.normal(size=r)), rest @ unit(rng.normal(size=d - r))
        off = np.zeros(d) if lang == "en" else 2.0 * (np.sqrt(1 - w) * outside + np.sqrt(w) * inside)
        offsets[lang] = off
        coef = np.repeat(centres, counts, axis=0) + 0.3 * rng.normal(size=(counts.sum(), r))
        rows.append(coef @ topics.T + off + 0.3 * rng.normal(size=(counts.sum(), d)))
        lang_list += [lang] * int(counts.sum())
    return np.concatenate(rows), lang_list, offsets, topics
