"""Hybrid SHIFT vectors: translation-pair vectors where pairs exist, vectors fitted on the corpus for the rest.

For every non-source language ``l`` of the two transforms (same encoder, same source language; the second
one fitted on the corpus by either recipe of :mod:`mlirkit.transforms.recipes`, ``corpus`` or ``mined``):

- ``l`` only in the pair-fitted transform: ``V_l = V_l^pairs`` (provenance ``pairs``);
- ``l`` only in the corpus-fitted transform: ``V_l = V_l^corpus`` (its own provenance: ``corpus``, or
  ``mined-pairs`` with the pairs mined);
- in both: ``V_l = V_l^pairs`` (``pairs``), or with a blend weight ``w`` in [0, 1]
  ``V_l = (1 - w) * V_l^pairs + w * V_l^corpus`` (provenance ``blend``, with ``w``).

The result is a :class:`~mlirkit.transforms.shift_transform.ShiftTransform` whose metadata ``provenance`` maps each
language to ``{"from": "pairs"|"corpus"|"blend", "pairs": N, "docs": M, "weight": w}``; the index's
meta.json records it through :meth:`~mlirkit.transforms.transform.LanguageTransform.describe`.
``require_langs`` (e.g. the languages of the index) makes a language left without a vector an error,
so no language is silently left unshifted.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.shift_transform import ShiftTransform


def _name(t: Any) -> str:
    return str(t.path) if getattr(t, "path", None) is not None else f"<{t.method}>"


def hybrid_shift(pairs: ShiftTransform, corpus: ShiftTransform, *, blend: float | None = None,
                 require_langs: Sequence[str] | None = None) -> ShiftTransform:
    """Combine a pair-fitted and a corpus-fitted SHIFT transform (module docstring)."""
    from mlirkit.encoders.base import check_same_encoder

    for role, t in (("pair-fitted", pairs), ("corpus-fitted", corpus)):
        if not isinstance(t, ShiftTransform):
            raise MlirkitError(f"the {role} transform {_name(t)} is {t.method}; a hybrid needs two shift transforms "
                               f"(corpus vectors relative to the source language, not --relative-to-overall)")
    if pairs.source_lang != corpus.source_lang:
        raise MlirkitError(f"source languages differ: {_name(pairs)} has {pairs.source_lang!r}, "
                           f"{_name(corpus)} has {corpus.source_lang!r}")
    if pairs.dim != corpus.dim:
        raise MlirkitError(f"dimensions differ: {_name(pairs)} {pairs.dim}, {_name(corpus)} {corpus.dim}")
    check_same_encoder(pairs.encoder, corpus.encoder, f"pair-fitted transform {_name(pairs)} vs the corpus's encoder")
    if blend is not None:
        try:
            blend = float(blend)
        except (TypeError, ValueError):
            raise MlirkitError(f"blend weight {blend!r} is not a number") from None
        if not 0.0 <= blend <= 1.0:  # also refuses NaN
            raise MlirkitError(f"blend weight {blend} is outside [0, 1]")
    n_pairs = pairs.meta.get("pairs") or {}
    n_docs = (corpus.meta.get("corpus_fit") or {}).get("docs") or {}
    params: dict[str, np.ndarray] = {}
    provenance: dict[str, dict[str, Any]] = {}
    for lang in sorted(set(pairs.params) | set(corpus.params)):
        info: dict[str, Any] = {"pairs": n_pairs.get(lang), "docs": n_docs.get(lang)}
        if lang in pairs.params and (lang not in corpus.params or blend is None):
            params[lang] = pairs.params[lang]
            info["from"] = "pairs"
        elif lang not in pairs.params:
            params[lang] = corpus.params[lang]
            info.update((corpus.meta.get("provenance") or {}).get(lang) or {"from": "corpus"})
        else:
            v = (1.0 - blend) * pairs.params[lang].astype(np.float64) + blend * corpus.params[lang].astype(np.float64)
            params[lang] = v.astype(np.float32)
            info["from"] = "blend"
            info["weight"] = blend
        provenance[lang] = {k: v for k, v in info.items() if v is not None}
    if require_langs is not None:
        missing = sorted(set(require_langs) - set(params) - {pairs.source_lang})
        if missing:
            raise MlirkitError(f"no vector for {', '.join(missing)} in either transform")
    meta: dict[str, Any] = {
        "pairs": {l: n for l, n in n_pairs.items() if l in params} or None,
        "source": pairs.meta.get("source"),
        "prefix": pairs.meta.get("prefix"),
        "normalized": pairs.meta.get("normalized"),
        "encoded_as": "documents",
        "hybrid": {"pairs_transform": {"file": _name(pairs), "sha256": pairs.sha256},
                   "corpus_transform": {"file": _name(corpus), "sha256": corpus.sha256},
                   "blend": blend,
                   "formula": "V_l = V_l^pairs where pairs exist, else V_l^corpus"
                              + ("" if blend is None else "; both: (1 - w) V_l^pairs + w V_l^corpus")},
        "corpus_fit": corpus.meta.get("corpus_fit"),
        "provenance": provenance,
        **{k: corpus.meta[k] for k in ("recipe", "mining", "topic_robust") if k in corpus.meta},
    }
    return ShiftTransform(params, encoder=pairs.encoder, source_lang=pairs.source_lang, meta=meta)
