"""Corpus-fitted language vectors: SHIFT vectors estimated from the corpus being indexed, no parallel text.

With ``mu_l`` the mean of the (untransformed) embeddings of the language-``l`` documents of the corpus,
``V_l = mu_l - mu_src`` for every non-source language; ``z' = z - alpha * V_l`` moves the mean of language l
onto the mean of the source-language documents, which stay unchanged. On a fully parallel corpus this equals
the pair-fitted vector ``mean_i (f(D_i^l) - f(D_i^src))`` over the corpus's own translation pairs (the mean of
differences is the difference of means). :class:`~mlirkit.transforms.shift_transform.ShiftTransform` with
``vectors="corpus"`` fits them; the filling of languages a transform lacks
(:mod:`mlirkit.transforms.hybrid`) uses them too.

A mean of a handful of documents estimates topic as much as language: a language with fewer than
``min_docs`` documents (default :data:`~mlirkit.transforms.defaults.DEFAULT_MIN_DOCS`) is refused, naming the
threshold, unless it is left out with ``langs``. Unknown-language documents (``und``, empty) are ignored.

The idea of a language as an offset of the mean embedding is that of language centering (Libovicky et
al., 2020); SHIFT's relative vectors are from the SHIFT paper (language vectors subtracted from
documents only). Fitting on the corpus is mlirkit's variant: see docs/shift.md, "Language vectors:
corpus-fitted and hybrid", for when it helps and when topics leak into the vectors.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import is_unknown, require_langs
from mlirkit.base.vectors import check_finite
from mlirkit.base.option_names import option
from mlirkit.transforms.defaults import DEFAULT_MIN_DOCS

__all__ = ["CHUNK_ROWS", "LanguageMeans", "corpus_vectors", "language_means"]

logger = logging.getLogger(__name__)

CHUNK_ROWS = 65536


class LanguageMeans:
    """Running float64 sums per language: ``update(block, langs)`` chunk by chunk, then :meth:`result`
    (rows of unknown language ignored)."""

    def __init__(self) -> None:
        self.sums: dict[str, np.ndarray] = {}
        self.counts: Counter = Counter()

    def update(self, block: np.ndarray, langs: Sequence[str | None]) -> None:
        block = np.asarray(block, dtype=np.float64)
        check_finite("embeddings", block)
        lang_a = np.asarray([("" if is_unknown(l) else str(l)) for l in langs], dtype=object)
        for lang in set(lang_a.tolist()):
            if not lang:
                continue
            rows = lang_a == lang
            self.sums[lang] = self.sums.get(lang, 0.0) + block[rows].sum(axis=0)
            self.counts[lang] += int(rows.sum())

    def result(self) -> tuple[dict[str, np.ndarray], Counter]:
        """``({lang: mean (d,) float64}, {lang: count})``."""
        return {lang: self.sums[lang] / self.counts[lang] for lang in sorted(self.sums)}, Counter(self.counts)


def language_means(embs: np.ndarray, langs: Sequence[str | None], *,
                   chunk_rows: int = CHUNK_ROWS) -> tuple[dict[str, np.ndarray], Counter]:
    """``({lang: mean (d,) float64}, {lang: count})`` over rows of known language, streamed in chunks."""
    embs = embs if hasattr(embs, "shape") and hasattr(embs, "__getitem__") else np.asarray(embs)  # memmaps, row readers
    if embs.ndim != 2:
        raise MlirkitError(f"embeddings must be a 2-d array, got shape {embs.shape}")
    if len(langs) != embs.shape[0]:
        raise MlirkitError(f"{len(langs)} languages for {embs.shape[0]} embeddings")
    acc = LanguageMeans()
    for a in range(0, embs.shape[0], chunk_rows):
        acc.update(embs[a:a + chunk_rows], langs[a:a + chunk_rows])
    return acc.result()



def corpus_vectors(means: Mapping[str, np.ndarray], counts: Mapping[str, int], source_lang: str, *,
                   min_docs: int = DEFAULT_MIN_DOCS, langs: Sequence[str] | None = None
                   ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(V_l float32 for every wanted non-source language, metadata)`` from the language means and counts of
    :func:`language_means` (module docstring); ``langs`` restricts the languages that get a vector (the
    source language's mean is always used)."""
    if int(min_docs) < 1:
        raise MlirkitError(f"min_docs must be at least 1, got {min_docs}")
    if not means:
        raise MlirkitError("no documents of a known language to fit corpus vectors from")
    if source_lang not in means:
        raise MlirkitError(f"no {source_lang!r} (source-language) documents: cannot fit vectors relative to "
                           f"them (languages present: {', '.join(sorted(means))})")
    wanted = sorted(means) if langs is None else sorted(set(langs) | {source_lang})
    require_langs(wanted, means, "documents", "")
    few = {l: counts[l] for l in wanted if counts[l] < min_docs}
    if few:
        raise MlirkitError(
            "too few documents to estimate a language mean: "
            + ", ".join(f"{l} has {n}" for l, n in sorted(few.items()))
            + f"; at least {min_docs} per language are needed (set the threshold with {option('min_docs')}, "
              f"or leave the language out with {option('langs')})")
    ref = means[source_lang]
    params = {l: (means[l] - ref).astype(np.float32) for l in wanted if l != source_lang}
    if not params:
        raise MlirkitError(f"only source-language ({source_lang}) documents: no vector to fit")
    docs = {l: int(counts[l]) for l in wanted}
    meta: dict[str, Any] = {
        "pairs": None,
        "encoded_as": "documents",
        "corpus_fit": {"relative_to": "source", "formula": "V_l = mean(l docs) - mean(source docs)",
                       "reference": f"mean of the {counts[source_lang]} {source_lang!r} documents",
                       "min_docs": int(min_docs), "docs": docs},
        "provenance": {l: {"from": "corpus", "docs": docs[l]} for l in params},
    }
    return params, meta
