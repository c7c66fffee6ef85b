"""Hybrid SHIFT vectors: translation-pair vectors where pairs exist, vectors fitted on the corpus for the rest.

For every non-source language ``l`` of the two transforms (same encoder, same source language; the second
one fitted on the corpus, ``vectors="corpus"`` or ``"mined"``):

- ``l`` in the pair-fitted transform: ``V_l = V_l^pairs`` (provenance ``pairs``);
- ``l`` only in the corpus-fitted transform: ``V_l = V_l^corpus`` (its own provenance: ``corpus``, or
  ``mined-pairs`` with the pairs mined).

The result is a :class:`~mlirkit.transforms.shift_transform.ShiftTransform` whose metadata ``provenance`` maps each
language to ``{"from": "pairs"|"corpus", "pairs": N, "docs": M}``; the index's meta.json records it through
:meth:`~mlirkit.transforms.transform.LanguageTransform.describe`. ``require_langs`` (e.g. the languages of
the index) makes a language left without a vector an error, so no language is silently left unshifted.

**Languages a transform lacks** (:func:`fill_missing`): when a corpus holds languages a SHIFT transform has no
vector for, ``policy="corpus"`` (the default, :data:`~mlirkit.transforms.defaults.DEFAULT_MISSING`: measured
better on XQuAD-R, see docs/results.md) gives each of them a vector from the corpus; ``policy="keep"``
leaves their documents unshifted. Either way one log line and the ``missing_languages`` record (in the
transform's metadata, hence in an index's meta.json) say what was done. The filled vector has one
definition, whatever the transform's source language: relative to the pivot ``p`` of the pairs (the language
they were fitted against, :attr:`~mlirkit.transforms.shift_transform.ShiftTransform.pivot`) it is the corpus
vector, and it is re-based like every other vector::

    V_{l|p} = mean(l documents) - mean(p documents)        V_{l|s} = V_{l|p} - V_{s|p} = V_{l|p} + V_{p|s}

so an English-pivot transform filled at index time and searched with the query-time shift for source ``s``,
and the same transform re-based to ``s`` (``shift derive``) and filled at index time, give every document the
same vector. A language with fewer than ``min_docs`` documents, or a corpus without pivot-language documents,
cannot give a corpus vector: it is kept, and the record says why. Other methods (centering, LIR) have no
corpus fill: their missing languages are kept; LSAR and LEACE transform every row and miss no language.

Filling is a fit: :func:`fill_missing` (from a corpus's language counts and means) and
:func:`fill_missing_from_corpus` (from its embeddings) are the one step that computes it, run once per corpus,
and the transform they return (the filled vectors in its tensors, the record in its metadata) is what is saved
and applied. Applying never fits: :func:`resolve_missing` handles the languages a transform lacks without the
corpus's vectors (kept, or left as the transform's record decided) and refuses one the step would still fill.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, is_unknown
from mlirkit.base.option_names import option
from mlirkit.transforms.defaults import DEFAULT_MIN_DOCS, DEFAULT_MISSING, MISSING_POLICIES
from mlirkit.transforms.shift_transform import ShiftTransform
from mlirkit.transforms.transform import LanguageTransform

__all__ = ["check_missing_policy", "describe_missing", "fill_missing", "fill_missing_from_corpus", "filled_any",
           "hybrid_shift", "missing_languages", "needs_means", "policy_of", "resolve_missing"]

logger = logging.getLogger(__name__)



def _name(t: Any) -> str:
    return str(t.path) if getattr(t, "path", None) is not None else f"<{t.method}>"


def hybrid_shift(pairs: ShiftTransform, corpus: ShiftTransform, *,
                 require_langs: Sequence[str] | None = None) -> ShiftTransform:
    """Combine a pair-fitted and a corpus-fitted SHIFT transform (module docstring)."""
    from mlirkit.encoders.base import check_same_encoder

    for role, t in (("pair-fitted", pairs), ("corpus-fitted", corpus)):
        if not isinstance(t, ShiftTransform):
            raise MlirkitError(f"the {role} transform {_name(t)} is {t.method}; a hybrid needs two shift transforms")
    if pairs.source_lang_ != corpus.source_lang_:
        raise MlirkitError(f"source languages differ: {_name(pairs)} has {pairs.source_lang_!r}, "
                           f"{_name(corpus)} has {corpus.source_lang_!r}")
    if pairs.dim != corpus.dim:
        raise MlirkitError(f"dimensions differ: {_name(pairs)} {pairs.dim}, {_name(corpus)} {corpus.dim}")
    if pairs.encoder and corpus.encoder:
        check_same_encoder(pairs.encoder, corpus.encoder, f"pair-fitted transform {_name(pairs)} vs the corpus's encoder")
    n_pairs = pairs.meta.get("pairs") or {}
    n_docs = (corpus.meta.get("corpus_fit") or {}).get("docs") or {}
    params: dict[str, np.ndarray] = {}
    provenance: dict[str, dict[str, Any]] = {}
    for lang in sorted(set(pairs.params_) | set(corpus.params_)):
        info: dict[str, Any] = {"pairs": n_pairs.get(lang), "docs": n_docs.get(lang)}
        if lang in pairs.params_:
            params[lang] = pairs.params_[lang]
            info["from"] = "pairs"
        else:
            params[lang] = corpus.params_[lang]
            info.update((corpus.meta.get("provenance") or {}).get(lang) or {"from": "corpus"})
        provenance[lang] = {k: v for k, v in info.items() if v is not None}
    if require_langs is not None:
        missing = sorted(set(require_langs) - set(params) - {pairs.source_lang_})
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
                   "formula": "V_l = V_l^pairs where pairs exist, else V_l^corpus"},
        "corpus_fit": corpus.meta.get("corpus_fit"),
        "provenance": provenance,
        **{k: corpus.meta[k] for k in ("recipe", "mining", "topic_robust") if k in corpus.meta},
        **({"derived_from": pairs.meta["derived_from"]} if "derived_from" in pairs.meta else {}),
    }
    return ShiftTransform.from_tensors(params, encoder=pairs.encoder, source_lang=pairs.source_lang_, meta=meta,
                                       missing=pairs.missing)


def missing_languages(transform: LanguageTransform, counts: Mapping[str, int]) -> dict[str, int]:
    """``{lang: documents}`` of the known corpus languages ``transform`` has no parameters for (the source
    language of a transform that leaves it unchanged is not missing). A language meets parameters by
    :func:`mlirkit.base.langs.lookup` (``pt-BR`` documents use a ``pt`` vector: not missing)."""
    if not transform.per_language:
        return {}
    return {la: int(n) for la, n in sorted(counts.items()) if not is_unknown(la) and n
            and transform.vector_lang(la) is None and (transform.transforms_source or not transform.is_source(la))}


def check_missing_policy(policy: str | None) -> str:
    """``policy`` checked (None: :data:`DEFAULT_MISSING`)."""
    if policy is None:
        return DEFAULT_MISSING
    if policy not in MISSING_POLICIES:
        from mlirkit.base.registry import did_you_mean

        raise MlirkitError(f"unknown policy {policy!r} for languages without a vector (choose "
                           f"{' or '.join(MISSING_POLICIES)}){did_you_mean(policy, MISSING_POLICIES)}")
    return policy


def fill_missing(transform: LanguageTransform, counts: Mapping[str, int],
                 means: Mapping[str, np.ndarray] | None = None, *, policy: str | None = None,
                 min_docs: int | None = None, origin: str | None = None, explicit: bool = False) -> LanguageTransform:
    """``transform`` with the corpus languages it lacks handled by ``policy`` (module docstring; None: the
    transform's own ``missing``, else :data:`~mlirkit.transforms.defaults.DEFAULT_MISSING`).

    ``counts``/``means``: the corpus's document counts and untransformed language means
    (:func:`mlirkit.transforms.corpus_fit.language_means`; the means are needed only for a corpus fill:
    :func:`needs_means`). Returns ``transform`` itself when no language is
    missing, else a transform whose ``meta["missing_languages"]`` records ``policy``, the languages
    ``filled`` (with their documents) and ``kept`` (with the reason); ``origin`` (the corpus, e.g. an index
    directory) names it in the log line only, so that a fill at index time and after it record the same.
    ``explicit``: the policy was asked for (a corpus fill a method cannot do is then an error instead of a
    kept language).
    """
    from mlirkit.transforms.corpus_fit import corpus_vectors

    policy = policy_of(transform, policy)
    min_docs = DEFAULT_MIN_DOCS if min_docs is None else int(min_docs)
    means, counts = _canonical_means(means, counts)
    missing = missing_languages(transform, counts)
    if not missing:
        return transform
    src = transform.source_lang_
    kept, fill = _plan(transform, missing, counts, policy, min_docs, explicit)
    if fill and means is None:
        raise MlirkitError("a corpus fill needs the corpus's language means (see needs_means)")
    record: dict[str, Any] = {"policy": policy, "filled": {la: missing[la] for la in fill}, "kept": kept}
    out = transform
    if fill:
        pivot = transform.pivot
        params, corpus_meta = corpus_vectors({la: means[la] for la in (pivot, *fill)}, counts, pivot,
                                             min_docs=min_docs, langs=fill)
        record["formula"] = f"V_l = mean(l documents) - mean({src} documents) of the corpus"
        if pivot != src:  # V_{l|s} = V_{l|p} + V_{p|s}, re-based like every vector of the file
            v_ps = transform.params_[pivot].astype(np.float64)
            params = {la: (means[la] - means[pivot] + v_ps).astype(np.float32) for la in fill}
            record["formula"] = (f"V_l = mean(l documents) - mean({pivot} documents) of the corpus, re-based from the "
                                 f"pivot {pivot}: + V_{pivot}")
        corpus = ShiftTransform.from_tensors(params, source_lang=src, encoder=transform.encoder, meta=corpus_meta)
        out = hybrid_shift(transform, corpus)
        provenance = {**out.meta["provenance"], **(transform.meta.get("provenance") or {})}
        out.meta = {**transform.meta, "provenance": provenance,
                    **{k: out.meta[k] for k in ("corpus_fit", "hybrid")}}
        out.langid, out.langid_threshold = transform.langid, transform.langid_threshold
    else:
        out = _copy(transform)
    out.meta["missing_languages"] = record
    logger.warning("%s%s", f"{origin}: " if origin else "", describe_missing(record, _name(transform)))
    return out


def _plan(transform: LanguageTransform, missing: Mapping[str, int], counts: Mapping[str, int], policy: str,
          min_docs: int, explicit: bool) -> tuple[dict[str, str], list[str]]:
    """``(kept {lang: why}, languages to fill from the corpus)`` for the ``missing`` languages of ``transform``."""
    src = transform.source_lang_
    kept: dict[str, str] = {}
    fill: list[str] = []
    if policy == "keep":
        kept = {la: "policy keep" for la in missing}
    elif not isinstance(transform, ShiftTransform):
        if explicit:
            raise MlirkitError(f"{transform.method} transform {_name(transform)} has no parameters for "
                               f"{', '.join(missing)}; filling them from the corpus is for shift transforms "
                               f"(use {option('missing', 'keep')})")
        kept = {la: f"no corpus fill for {transform.method}" for la in missing}
    elif not counts.get(transform.pivot):
        which = "source" if transform.pivot == src else "pivot"
        kept = {la: f"no {transform.pivot} ({which}-language) documents in the corpus" for la in missing}
    else:
        for la in missing:
            if missing[la] < min_docs:
                kept[la] = f"{missing[la]} documents (a corpus vector needs {min_docs})"
            else:
                fill.append(la)
    return kept, fill


def resolve_missing(transform: LanguageTransform, counts: Mapping[str, int], *, policy: str | None = None,
                    min_docs: int | None = None, origin: str | None = None, explicit: bool = False
                    ) -> LanguageTransform:
    """``transform`` with the corpus languages it lacks handled by ``policy`` **without fitting**: what
    applying a transform does (:func:`mlirkit.shift.apply_to_index`, the query-time shift). Kept languages get
    the record of :func:`fill_missing`; a language the fit step would fill from the corpus, and ``transform``
    has no vector for, is an error naming the fit step (a filled vector is fitted once, by
    :func:`fill_missing_from_corpus` or :func:`mlirkit.shift.fill_missing_from_index`, stored in the transform
    file or the index, and reused). ``counts``: the corpus's documents per language."""
    policy = policy_of(transform, policy)
    _, canonical_counts = _canonical_means(None, counts)
    missing = missing_languages(transform, canonical_counts)
    record = transform.meta.get("missing_languages") or {}
    if missing and record.get("policy") == policy and set(missing) <= set(record.get("kept") or {}):
        return transform  # decided by the fit step (its record says so): reused as it is
    if missing:
        _, fill = _plan(transform, missing, canonical_counts, policy,
                        DEFAULT_MIN_DOCS if min_docs is None else int(min_docs), explicit)
        if fill:
            raise MlirkitError(f"{origin + ': ' if origin else ''}transform {_name(transform)} has no vector for "
                               f"{', '.join(f'{la} ({missing[la]} documents)' for la in fill)}: fit them from the "
                               f"corpus first (fill_missing_from_index, or `python -m mlirkit.shift apply`, which does "
                               f"it) and apply the filled transform, or pass {option('missing', 'keep')}")
    return fill_missing(transform, counts, None, policy=policy, min_docs=min_docs, origin=origin, explicit=explicit)


def policy_of(transform: LanguageTransform | None, policy: str | None = None) -> str:
    """The policy for the languages ``transform`` lacks: ``policy`` if given, else the transform's own
    (``ShiftTransform.missing``), else :data:`~mlirkit.transforms.defaults.DEFAULT_MISSING`."""
    if policy is None:
        policy = getattr(transform, "missing", None)
    return check_missing_policy(policy)


def describe_missing(record: Mapping[str, Any], name: str) -> str:
    """The one line that says what was done with the languages a transform lacks."""
    parts = []
    if record["filled"]:
        parts.append(f"{', '.join(record['filled'])} filled from the corpus ({record.get('formula')})")
    if record["kept"]:
        reasons = sorted(set(record["kept"].values()))
        parts.append(f"{', '.join(record['kept'])} left unshifted ({'; '.join(reasons)})")
    other = "keep" if record["policy"] == "corpus" else "corpus"
    return f"transform {name} has no vector for {len(record['filled']) + len(record['kept'])} of the corpus's " \
           f"languages: {'; '.join(parts)} ({option('missing', other)} to {'leave them unshifted' if other == 'keep' else 'fill them from the corpus'})"


def needs_means(transform: LanguageTransform, counts: Mapping[str, int], policy: str | None = None) -> bool:
    """Whether :func:`fill_missing` will fill from the corpus (so the caller reads the corpus's means)."""
    return (policy_of(transform, policy) == "corpus" and isinstance(transform, ShiftTransform)
            and bool(missing_languages(transform, _canonical_means(None, counts)[1])))


def fill_missing_from_corpus(transform: LanguageTransform, embs: Any, langs: Sequence[str | None], *,
                             policy: str | None = None, min_docs: int | None = None, origin: str | None = None,
                             explicit: bool = False) -> LanguageTransform:
    """:func:`fill_missing` for the corpus ``embs`` (n, d; an array or a memory map, read only when a corpus
    fill needs its means) with languages ``langs``."""
    from mlirkit.transforms.corpus_fit import language_means

    counts = Counter(str(la) for la in langs if not is_unknown(la))
    means = None
    if needs_means(transform, counts, policy):
        means, counts = language_means(embs, langs)
    return fill_missing(transform, counts, means, policy=policy, min_docs=min_docs, origin=origin, explicit=explicit)


def _canonical_means(means: Mapping[str, np.ndarray] | None,
                     counts: Mapping[str, int]) -> tuple[dict[str, np.ndarray] | None, Counter]:
    """Means and counts keyed by canonical language codes (``dt`` and ``nl`` documents pooled); unknown dropped."""
    sums: dict[str, np.ndarray] = {}
    out: Counter = Counter()
    for la, n in counts.items():
        if is_unknown(la) or not n:
            continue
        code = canonical(str(la))
        if means is not None:
            sums[code] = sums.get(code, 0.0) + np.asarray(means[la], dtype=np.float64) * n
        out[code] += int(n)
    return (None if means is None else {la: v / out[la] for la, v in sums.items()}), out


def filled_any(transform: LanguageTransform) -> bool:
    """Whether :func:`fill_missing` gave ``transform`` a vector its file does not hold (then it is saved anew)."""
    return bool((transform.meta.get("missing_languages") or {}).get("filled"))


def _copy(t: LanguageTransform) -> LanguageTransform:
    """The same vectors (and file) with metadata of its own."""
    recipe = {k: v for k, v in t.get_params().items() if k != "source_lang"}
    out = type(t).from_tensors(t.learned_tensors(), source_lang=t.source_lang_, encoder=t.encoder, meta=dict(t.meta),
                               langid=t.langid, **recipe)
    out.langid_threshold, out.path, out.sha256 = t.langid_threshold, t.path, t.sha256
    return out
