"""Corpus-fitted vector variants measured and not adopted: vectors relative to the overall mean
(``shift-overall``), blended hybrids; and the corpus fit with the investigation's signature.

- :class:`OverallShiftTransform` (method ``shift-overall``, registered in
  :data:`mlirkit.transforms.TRANSFORMS` when this module is imported): ``V_l = mu_l - mu`` with ``mu`` the mean
  of every document of a known language (each document weighted once), for **every** language, the source
  language too; every language's mean moves onto ``mu``. Queries are never touched (as in SHIFT), so the
  vector does not depend on the query language and is never re-based. It is also the example of a method
  added from outside the package: one class and one registry entry.
- :func:`blend_shift`: where both a pair-fitted and a corpus-fitted vector exist,
  ``V_l = (1 - w) V_l^pairs + w V_l^corpus`` (provenance ``blend``).

Measured: experiments/notes/language-vectors.md.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import TRANSFORMS, OffsetTransform, ShiftTransform, hybrid_shift
from mlirkit.transforms.centering import LanguageSums

DEFAULT_MIN_DOCS = 20


class OverallShiftTransform(OffsetTransform):
    """``z' = z - alpha * (mu_l - mu)`` for documents of every language (the source language too); queries unchanged."""

    method = "shift-overall"
    sides = ("doc",)
    tensor_prefix = "vector"
    transforms_source = True

    def __init__(self, source_lang: str = "en", min_docs: int = DEFAULT_MIN_DOCS,
                 langs: Sequence[str] | None = None) -> None:
        self.source_lang, self.min_docs, self.langs = source_lang, min_docs, langs

    def _new_stats(self, dim: int) -> LanguageSums:
        return LanguageSums(dim)

    def _finalize(self, stats: LanguageSums) -> dict[str, np.ndarray]:
        means = {la: stats.sums[la] / stats.counts[la] for la in sorted(stats.sums)}
        if self.source_lang_ not in means:
            raise MlirkitError(f"no {self.source_lang_!r} (source-language) documents")
        wanted = sorted(means) if self.langs is None else sorted(set(self.langs) | {self.source_lang_})
        few = {la: stats.counts[la] for la in wanted if stats.counts[la] < int(self.min_docs)}
        if few:
            raise MlirkitError("too few documents to estimate a language mean: "
                               + ", ".join(f"{la} has {n}" for la, n in sorted(few.items()))
                               + f"; at least {self.min_docs} per language are needed")
        total = sum(stats.counts.values())
        ref = sum(means[la] * stats.counts[la] for la in means) / total
        docs = {la: int(stats.counts[la]) for la in wanted}
        self.fit_info_ = {"pairs": None, "encoded_as": "documents",
                          "corpus_fit": {"relative_to": "overall", "formula": "V_l = mean(l docs) - mean(all docs)",
                                         "reference": f"mean of all {total} documents of a known language",
                                         "min_docs": int(self.min_docs), "docs": docs},
                          "provenance": {la: {"from": "corpus", "docs": docs[la]} for la in wanted}}
        return {la: (means[la] - ref).astype(np.float32) for la in wanted}


if "shift-overall" not in TRANSFORMS:
    TRANSFORMS.register("shift-overall", OverallShiftTransform)


def fit_corpus_shift(embs: np.ndarray, langs: Sequence[str | None], source_lang: str, *, encoder: dict[str, Any],
                     relative_to: str = "source", min_docs: int = DEFAULT_MIN_DOCS,
                     only_langs: Sequence[str] | None = None, origin: str | None = None,
                     meta: dict[str, Any] | None = None) -> Any:
    """Corpus-fitted vectors relative to the source language (the product's ``vectors="corpus"``) or to the
    overall mean (:class:`OverallShiftTransform`), with the encoder and origin recorded."""
    if relative_to == "source":
        t: Any = ShiftTransform(source_lang, vectors="corpus", min_docs=min_docs, langs=only_langs)
    elif relative_to == "overall":
        t = OverallShiftTransform(source_lang, min_docs=min_docs, langs=only_langs)
    else:
        raise MlirkitError(f"relative_to must be source or overall, got {relative_to!r}")
    t.fit(embs, langs)
    t.encoder = dict(encoder)
    t.meta.update({"source": origin, **(meta or {})})
    t.meta["corpus_fit"]["origin"] = origin
    return t


def blend_shift(pairs: ShiftTransform, corpus: ShiftTransform, weight: float, *,
                require_langs: Sequence[str] | None = None) -> ShiftTransform:
    """The hybrid of :func:`mlirkit.transforms.hybrid_shift`, with ``(1 - w) V^pairs + w V^corpus`` where both exist."""
    weight = float(weight)
    if not 0.0 <= weight <= 1.0:  # also refuses NaN
        raise MlirkitError(f"blend weight {weight} is outside [0, 1]")
    out = hybrid_shift(pairs, corpus, require_langs=require_langs)
    params = dict(out.params_)
    provenance = dict(out.meta["provenance"])
    for lang in sorted(set(pairs.params_) & set(corpus.params_)):
        v = (1.0 - weight) * pairs.params_[lang].astype(np.float64) + weight * corpus.params_[lang].astype(np.float64)
        params[lang] = v.astype(np.float32)
        provenance[lang] = {**provenance[lang], "from": "blend", "weight": weight}
    meta = {**out.meta, "provenance": provenance,
            "hybrid": {**out.meta["hybrid"], "blend": weight,
                       "formula": out.meta["hybrid"]["formula"] + "; both: (1 - w) V_l^pairs + w V_l^corpus"}}
    return ShiftTransform.from_tensors(params, source_lang=out.source_lang, encoder=out.encoder, meta=meta)
