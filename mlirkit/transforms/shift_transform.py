"""SHIFT: subtract a relative language vector from every non-source-language document.

``V_l = (1/N) * sum_i ( f(D_i^l) - f(D_i^src) )`` over N translation pairs (source, l), passages
encoded as documents; at index time ``z' = z - alpha * V_l`` for documents of language ``l != src``.
Source-language and unknown-language documents and all queries are left unchanged; scores are the
cosine between the untouched query and ``z'`` (normalise after shifting).

The statistics the vectors are estimated from (``vectors``, :data:`STATISTICS`):

- ``pairs`` (the paper's): the running sums ``S_l = sum_i (f(D_i^l) - f(D_i^src))`` and ``N_l`` over the
  translation pairs (``groups``: rows with equal value translate each other);
- ``corpus``: no parallel text, ``V_l = mu_l - mu_src``, the difference of the language means of the
  documents fitted on (:mod:`mlirkit.transforms.corpus_fit`);
- ``mined``: no parallel text, SHIFT's mean of differences over pseudo-parallel pairs mined in the documents
  (:mod:`mlirkit.transforms.mining`, the recipe :func:`~mlirkit.transforms.mining.mined_recipe`); it needs
  every document at once (the rows of :meth:`partial_fit` calls are kept).

``missing``: the policy for corpus languages the vectors lack, ``"corpus"`` (fill them from the corpus, by the
fit step :func:`mlirkit.transforms.hybrid.fit_missing`) or ``"keep"`` (leave them unshifted), default
:data:`~mlirkit.transforms.defaults.DEFAULT_MISSING` (:mod:`mlirkit.transforms.hybrid`). ``min_docs`` and
``langs`` (the languages that get a vector) are for the corpus statistics.

Vectors for another source language s from the same (English-pivot) file: ``V_{l|s} = V_l - V_s``
(:func:`derive_source`), exact when the pairs are N-way aligned; the file's original source language stays
its *pivot* (:attr:`ShiftTransform.pivot`), from which languages without pairs are filled.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, check_lang
from mlirkit.base.registry import did_you_mean
from mlirkit.transforms.centering import LanguageSums
from mlirkit.transforms.defaults import DEFAULT_MIN_DOCS, DEFAULT_MISSING, MISSING_POLICIES, STATISTICS
from mlirkit.transforms.transform import OffsetTransform

__all__ = ["CorpusMeans", "PairDifferences", "RowStore", "ShiftTransform", "derive_source"]



class PairDifferences:
    """Running float64 ``S_l = sum_i (f(D_i^l) - f(D_i^src))`` and ``N_l``; every group has one source row."""

    def __init__(self, source_lang: str, dim: int) -> None:
        self.source_lang, self.dim = source_lang, dim
        self.sums: dict[str, np.ndarray] = {}
        self.counts: Counter[str] = Counter()

    def update(self, x: np.ndarray, langs: np.ndarray, groups: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float64)  # (n, d)
        src_rows = np.flatnonzero(langs == self.source_lang)
        src_of_group = dict(zip(groups[src_rows].tolist(), src_rows.tolist()))
        for lang in np.unique(langs):
            if lang == self.source_lang or not lang:
                continue
            rows = np.flatnonzero(langs == lang)
            pair_src = np.fromiter((src_of_group[g] for g in groups[rows].tolist()), dtype=np.intp, count=len(rows))
            diff = (x[rows] - x[pair_src]).sum(axis=0)  # (d,)
            lang = str(lang)
            self.sums[lang] = self.sums.get(lang, 0.0) + diff
            self.counts[lang] += len(rows)


class CorpusMeans(LanguageSums):
    """Language sums in chunks of ``CHUNK_ROWS`` rows (as :func:`~mlirkit.transforms.corpus_fit.language_means`)."""

    def update(self, x: np.ndarray, langs: np.ndarray, groups: Any = None) -> None:
        from mlirkit.transforms.corpus_fit import CHUNK_ROWS

        for a in range(0, len(x), CHUNK_ROWS):
            super().update(x[a:a + CHUNK_ROWS], langs[a:a + CHUNK_ROWS])


class RowStore:
    """Every row given (the mined statistics need the whole corpus)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.blocks: list[np.ndarray] = []
        self.langs: list[np.ndarray] = []

    def update(self, x: np.ndarray, langs: np.ndarray, groups: Any = None) -> None:
        self.blocks.append(x)
        self.langs.append(langs)

    def rows(self) -> tuple[np.ndarray, list[str]]:
        x = self.blocks[0] if len(self.blocks) == 1 else np.concatenate(self.blocks)
        return x, [str(la) for block in self.langs for la in block.tolist()]


class ShiftTransform(OffsetTransform):
    """``params_[lang]``: ``V_lang`` (d,) for every language but the source (module docstring)."""

    method = "shift"
    sides = ("doc",)
    tensor_prefix = "vector"
    transforms_source = False

    def __init__(self, source_lang: str = "en", vectors: str = "pairs", missing: str = DEFAULT_MISSING,
                 min_docs: int = DEFAULT_MIN_DOCS, langs: Sequence[str] | None = None) -> None:
        self.source_lang = source_lang
        self.vectors = vectors
        self.missing = missing
        self.min_docs = min_docs
        self.langs = langs

    def check_params(self) -> None:
        super().check_params()
        vectors, missing, min_docs = self.vectors, self.missing, self.min_docs
        if vectors not in STATISTICS:
            raise MlirkitError(f"unknown SHIFT vectors {vectors!r} (choose {', '.join(STATISTICS)})"
                               f"{did_you_mean(str(vectors), list(STATISTICS))}")
        if missing not in MISSING_POLICIES:
            raise MlirkitError(f"unknown policy {missing!r} for languages without a vector (choose "
                               f"{' or '.join(MISSING_POLICIES)}){did_you_mean(str(missing), list(MISSING_POLICIES))}")
        if isinstance(min_docs, bool) or not isinstance(min_docs, (int, np.integer)) or int(min_docs) < 1:
            raise MlirkitError(f"min_docs must be at least 1 (a whole number), got {min_docs!r}")
        if isinstance(self.langs, str):
            raise MlirkitError(f"langs must be a list of language codes, got the string {self.langs!r}")
        for la in self.langs or ():
            check_lang(la, "langs", known=True)

    def _fit_langs(self) -> list[str] | None:
        """``langs`` as sorted canonical codes (None: every language)."""
        return None if self.langs is None else sorted({canonical(la) for la in self.langs})

    @property
    def needs_groups(self) -> bool:
        return self.vectors == "pairs"

    @classmethod
    def recipe_from_meta(cls, meta: Mapping[str, Any]) -> dict[str, Any]:
        vectors = (meta.get("recipe") or {}).get("vectors")
        corpus_fit = meta.get("corpus_fit") or {}
        out: dict[str, Any] = {"vectors": vectors if vectors in STATISTICS else "pairs"}
        if isinstance(corpus_fit.get("min_docs"), int) and corpus_fit["min_docs"] >= 1:
            out["min_docs"] = corpus_fit["min_docs"]
        return out

    @property
    def pivot(self) -> str:
        """The source language of the pairs the vectors were fitted on (the file's source language unless it
        was re-based with :func:`derive_source`)."""
        derived = self.meta.get("derived_from") or {}
        return canonical(derived.get("pivot") or derived.get("source_lang") or self.source_lang_)

    def vector(self, lang: str) -> np.ndarray:
        """``V_lang`` (zero for the source language; ``lang`` may be an alias, e.g. ``dt``)."""
        lang = canonical(lang)
        if lang == self.source_lang_:
            return np.zeros(self.dim, dtype=np.float32)
        return self.params_[lang]

    def _statistics_name(self) -> str:
        return f"vectors={self.vectors!r} (vectors='corpus' or 'mined' fit without)"

    def _filter_params(self, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {lang: v for lang, v in params.items() if canonical(lang) != self.source_lang_}

    def _new_stats(self, dim: int) -> Any:
        if self.vectors == "pairs":
            return PairDifferences(self.source_lang_, dim)
        return CorpusMeans(dim) if self.vectors == "corpus" else RowStore(dim)

    def _finalize(self, stats: Any) -> dict[str, np.ndarray]:
        if self.vectors == "pairs":
            if not stats.sums:
                raise MlirkitError("no target-language rows in groups with a source-language row: no SHIFT vector "
                                   "to fit")
            self.fit_info_ = {"pairs": dict(stats.counts)}
            return {lang: (s / stats.counts[lang]).astype(np.float32) for lang, s in stats.sums.items()}
        if self.vectors == "corpus":
            from mlirkit.transforms.corpus_fit import corpus_vectors

            means = {lang: stats.sums[lang] / stats.counts[lang] for lang in sorted(stats.sums)}
            params, meta = corpus_vectors(means, stats.counts, self.source_lang_, min_docs=int(self.min_docs),
                                          langs=self._fit_langs())
        else:
            from mlirkit.transforms.mining import mined_recipe

            x, langs = stats.rows()
            params, meta = mined_recipe(x, langs, self.source_lang_, min_docs=int(self.min_docs),
                                        langs=self._fit_langs())
        self.fit_info_ = {**meta, "recipe": {"vectors": self.vectors, "formula": STATISTICS[self.vectors],
                                             **meta.pop("recipe", {})}}
        return params


def derive_source(t: ShiftTransform, new_source: str) -> ShiftTransform:
    """``V_{l|s} = V_l - V_s`` for every language l of ``t`` (and ``V_{src|s} = -V_s`` for the old source)."""
    if not isinstance(t, ShiftTransform):
        raise MlirkitError(f"derive works on shift transforms, not {t.method}")
    new_source = canonical(new_source)
    if new_source == t.source_lang_:
        raise MlirkitError(f"the transform's source language is already {new_source!r}")
    params_ = t.params_
    if new_source not in params_:
        raise MlirkitError(f"no vector for {new_source!r} in the transform (known: {', '.join(t.languages)})")
    v_s = params_[new_source].astype(np.float64)
    params = {lang: (v.astype(np.float64) - v_s).astype(np.float32)
              for lang, v in params_.items() if lang != new_source}
    params[t.source_lang_] = (-v_s).astype(np.float32)
    pairs = t.meta.get("pairs") or {}
    meta: dict[str, Any] = {**t.meta, "source_lang": new_source,
                            "derived_from": {"source_lang": t.source_lang_, "pivot": t.pivot, "sha256": t.sha256,
                                             "formula": "V_{l|s} = V_l - V_s"},
                            "pairs": {lang: min(pairs.get(lang, 0), pairs.get(new_source, 0)) if pairs else None
                                      for lang in params}}
    out = ShiftTransform.from_tensors(params, source_lang=new_source, encoder=t.encoder, meta=meta, langid=t.langid,
                                      missing=t.missing)
    return out
