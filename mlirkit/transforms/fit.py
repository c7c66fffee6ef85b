"""The array builder from translation pairs: encode parallel text as documents, batch by batch, into an
estimator's :meth:`~mlirkit.transforms.transform.LanguageTransform.partial_fit`.

The parallel data is read and encoded once, for every target language together, in bounded memory (a batch
of ``batch_size`` texts at a time: the estimators keep running statistics). Ids without a source-language
row are skipped (and counted), so every method sees the same passages. The other builders:
:func:`mlirkit.shift.fit_from_index` (an index's own documents) and
:func:`mlirkit.transforms.import_pt.import_shift_pt` (the SHIFT authors' ``.pt`` vectors).
"""
from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, lookup, require_langs
from mlirkit.transforms.parallel import ParallelGroup
from mlirkit.transforms.registry import TRANSFORMS
from mlirkit.transforms.transform import LanguageTransform

__all__ = ["FitReport", "LANGID_MAX_PER_LANG", "estimator", "fit_from_pairs", "fit_groups"]

logger = logging.getLogger(__name__)

#: passages per language the language classifier (``fit_langid=True``) is fitted on
LANGID_MAX_PER_LANG = 5000


@dataclass
class FitReport:
    groups_read: int = 0
    groups_used: int = 0
    skipped_no_source: int = 0
    skipped_no_target: int = 0
    texts_encoded: int = 0
    pairs: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"groups_read": self.groups_read, "groups_used": self.groups_used,
                "skipped_no_source": self.skipped_no_source, "skipped_no_target": self.skipped_no_target,
                "texts_encoded": self.texts_encoded}


def estimator(method: str | LanguageTransform, source_lang: str | None, **recipe: Any) -> LanguageTransform:
    """``method`` as an unfitted estimator with its recipe checked (:meth:`~LanguageTransform.check_params`, so
    a bad recipe fails before any data is read): a registered name (built with ``source_lang`` and ``recipe``),
    or an estimator, whose recipe is taken as it is (``source_lang``, if given, must be its own)."""
    if isinstance(method, LanguageTransform):
        if recipe:
            raise MlirkitError(f"options {', '.join(sorted(recipe))} are for a method given by name; the estimator "
                               f"{method!r} carries its own recipe")
        method.check_params()
        if source_lang is not None and canonical(source_lang) != method.source_lang_:
            raise MlirkitError(f"source language {source_lang!r} is not the estimator's ({method.source_lang_!r})")
        return method
    if source_lang is None:
        raise MlirkitError("a source language is needed (source_lang)")
    t = TRANSFORMS.get(method)(source_lang=source_lang, **recipe)
    t.check_params()
    return t


def _batches(items: Iterable[ParallelGroup], batch_texts: int) -> Iterator[list[ParallelGroup]]:
    batch: list[ParallelGroup] = []
    n = 0
    for item in items:
        batch.append(item)
        n += len(item.texts)
        if n >= batch_texts:
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def fit_groups(encoder: Any, groups: Iterable[ParallelGroup], t: LanguageTransform, *,
               langs: Sequence[str] | None = None, max_pairs: int | None = None, batch_size: int = 256,
               fit_langid: bool = False, source_name: str | None = None, source_langs: Sequence[str] | None = None,
               show_progress: bool = False) -> tuple[LanguageTransform, FitReport]:
    """Encode parallel groups as documents and fit the estimator ``t``; one pass, every language together.

    ``max_pairs`` caps the pairs of **each** target language: an id is used while one of its languages has
    fewer than ``max_pairs`` pairs, and only those languages' texts (with the source text) are encoded, so
    a file whose rows are grouped by language gives every language its share (on an N-way set whose ids
    hold every language: the first ``max_pairs`` ids). Reading stops once every language of ``langs``, else
    of ``source_langs`` (the languages the source holds, when known:
    :func:`mlirkit.transforms.parallel.parallel_languages`), has its share; otherwise the source is read to
    its end (texts of full languages are not encoded). ``langs`` restricts the target languages (the source
    language is always read). ``fit_langid``: also fit a language classifier on the encoded passages (at most
    :data:`LANGID_MAX_PER_LANG` per language), stored with the transform.
    """
    from tqdm.auto import tqdm

    t.check_params()
    source_lang = t.source_lang_
    keep = None if langs is None else {canonical(la) for la in langs} | {source_lang}
    report = FitReport()
    langid_rows: dict[str, list[np.ndarray]] = {}
    seen: set[str] = set()  # the languages of the groups read (an asked-for language outside it is an error)
    taken: Counter[str] = Counter()  # pairs per target language so far (the max_pairs share)
    wanted = keep if keep is not None else None if source_langs is None else {canonical(la) for la in source_langs}
    wanted = None if wanted is None else wanted - {source_lang}

    def full(langs_: Iterable[str]) -> bool:
        return max_pairs is not None and all(taken[la] >= max_pairs for la in langs_ if la != source_lang)

    kept_memo: dict[str, bool] = {}

    def kept(lang: str) -> bool:
        """Whether texts of ``lang`` serve an asked-for language (itself, or ``pt`` texts for ``pt-BR``:
        :func:`mlirkit.base.langs.lookup`)."""
        if lang not in kept_memo:
            kept_memo[lang] = lang in keep or any(lookup(la, [lang]) is not None for la in keep)  # type: ignore[union-attr]
        return kept_memo[lang]

    def selected() -> Iterator[ParallelGroup]:
        for g in groups:
            if wanted and full(wanted):
                return
            report.groups_read += 1
            seen.update(canonical(l) for l in g.texts)
            texts = {canonical(l): x for l, x in g.texts.items() if keep is None or kept(canonical(l))}
            if source_lang not in texts:
                report.skipped_no_source += 1
                continue
            if len(texts) < 2:
                report.skipped_no_target += 1
                continue
            if max_pairs is not None:  # only the languages still short of their share
                texts = {la: x for la, x in texts.items() if la == source_lang or taken[la] < max_pairs}
                if len(texts) < 2:
                    continue
                taken.update(la for la in texts if la != source_lang)
            report.groups_used += 1
            yield ParallelGroup(g.id, texts)

    bar = tqdm(total=None if max_pairs is None or not wanted else max_pairs * len(wanted), unit="pair",
               desc=f"fit {t.method}", disable=not show_progress)

    def blocks() -> Iterator[tuple[np.ndarray, list[str], list[int]]]:
        """The encoded rows, a batch at a time; at the end, the checks of what was read."""
        for batch in _batches(selected(), batch_size):
            texts, row_langs, row_groups = [], [], []
            for k, g in enumerate(batch):
                for lang, text in g.texts.items():
                    texts.append(text)
                    row_langs.append(lang)
                    row_groups.append(k)
            embs = np.asarray(encoder.encode_docs(texts, row_langs, batch_size=batch_size))
            report.texts_encoded += len(texts)
            yield embs, row_langs, row_groups
            if fit_langid:
                for lang in sorted(set(row_langs)):
                    have = sum(len(a) for a in langid_rows.get(lang, []))
                    if have < LANGID_MAX_PER_LANG:
                        rows = np.flatnonzero(np.asarray(row_langs) == lang)[:LANGID_MAX_PER_LANG - have]
                        langid_rows.setdefault(lang, []).append(embs[rows].astype(np.float32))
            bar.update(int(sum(len(g.texts) - 1 for g in batch)))
        if keep is not None:
            require_langs([canonical(la) for la in langs if canonical(la) != source_lang and lookup(la, seen) is None],
                          seen, "parallel text",
                          f" in {source_name or 'the parallel data'}"
                          + (f" (the first {report.groups_read} ids read)" if max_pairs is not None else ""))
        if report.groups_used == 0:
            raise MlirkitError(f"no usable ids in {source_name or 'the parallel data'}: {report.groups_read} read, "
                               f"{report.skipped_no_source} without a {source_lang!r} row, "
                               f"{report.skipped_no_target} without another selected language")

    try:
        t.fit_blocks(blocks())
    finally:
        bar.close()
    if report.skipped_no_source:
        logger.warning("%d ids without a %r row were skipped", report.skipped_no_source, source_lang)
    report.pairs = Counter(t.meta.get("pairs") or {})
    if fit_langid:
        from mlirkit.transforms.langid import fit_langid as fit_classifier

        x = np.concatenate([a for v in langid_rows.values() for a in v])
        y = [lang for lang, v in langid_rows.items() for a in v for _ in range(len(a))]
        t.langid = fit_classifier(x, y)
    fp = encoder.fingerprint
    t.encoder = dict(fp)
    t.meta.update({"source": source_name, "prefix": fp.get("doc_prefix", fp.get("prefix")),
                   "normalized": bool(getattr(encoder, "normalized", False)), "encoded_as": "documents",
                   "fit": report.as_dict()})
    return t, report


def fit_from_pairs(encoder: Any, pairs: str | os.PathLike | Iterable[ParallelGroup], *, source_lang: str | None = None,
                   method: str | LanguageTransform = "shift", text_fields: str | Sequence[str] = "text",
                   langs: Sequence[str] | None = None, max_pairs: int | None = None, batch_size: int = 256,
                   fit_langid: bool = False, show_progress: bool = False, **recipe: Any) -> LanguageTransform:
    """Fit a transform from parallel text, as ``python -m mlirkit.shift fit --pairs``.

    ``method``: a method name (:data:`~mlirkit.transforms.registry.TRANSFORMS`: ``shift``, ``centering``, ``lir``,
    ``lsar``, ``leace``; ``recipe`` gives its constructor's other arguments, e.g. ``rank=2``) or an unfitted
    estimator; ``pairs``: a parallel-set id (``mlirkit/parallel/gettext``, ``python -m mlirkit.datasets list``), an
    aligned JSONL file (its text in ``text_fields``: a field name, several joined by a space, as a list or
    comma-separated), a pairs-table directory, ``mmarco``, or :class:`ParallelGroup` objects; ``encoder``: an
    :class:`~mlirkit.encoders.base.Encoder`, a name for :func:`mlirkit.encoders.load_encoder` or a function that
    builds one (either loaded after the first group is read, so bad input fails fast). The rest: :func:`fit_groups`. Returns the fitted transform;
    what the fit read and skipped is in ``t.meta["fit"]`` and ``t.meta["pairs"]``.
    """
    import itertools

    from mlirkit.transforms.parallel import open_parallel, parallel_languages

    t = estimator(method, source_lang, **recipe)
    name = str(pairs) if isinstance(pairs, (str, os.PathLike)) else None
    fields = text_fields if isinstance(text_fields, str) else ",".join(text_fields)
    groups = (open_parallel(name, text_fields=fields, langs=langs, source_lang=t.source_lang_)
              if name is not None else iter(pairs))
    first = list(itertools.islice(groups, 1))
    if not first:
        raise MlirkitError(f"{name or 'pairs'}: no parallel rows")
    encoder_name = encoder if isinstance(encoder, str) else None
    if encoder_name is not None:
        from mlirkit.encoders import load_encoder

        encoder = load_encoder(encoder_name)
    elif callable(encoder) and not hasattr(encoder, "encode_docs"):
        encoder = encoder()
    t, _ = fit_groups(encoder, itertools.chain(first, groups), t, langs=langs, max_pairs=max_pairs,
                      batch_size=batch_size, fit_langid=fit_langid, source_name=name, show_progress=show_progress,
                      source_langs=None if name is None else parallel_languages(name))
    if encoder_name is not None:
        t.meta["encoder_name"] = encoder_name
    return t
