"""The language-transform estimator: one contract for SHIFT, centering, LIR, LSAR and LEACE.

In the scikit-learn mould::

    t = ShiftTransform(source_lang="en")          # the recipe only: nothing is learned or read
    t.fit(embs, langs, groups)                    # learns from arrays; returns t
    out = t.transform(embs, langs, "doc", alpha=1.0)   # then L2-normalise

Every method is a scikit-learn estimator (:class:`sklearn.base.BaseEstimator`: ``clone``, ``get_params(deep=...)``,
``set_params`` and ``repr`` work):

- The constructor stores its arguments, the recipe (``source_lang``, the kind of statistics, ``rank``, ...), as
  given and nothing else; :meth:`fit` checks them (an unknown name or a bad rank fails there) and keeps the
  canonical source language in ``source_lang_``.
- :meth:`fit` ``(embeddings (n, d), langs (n,), groups (n,) or None)`` learns from one block of rows,
  :meth:`fit_blocks` from an iterable of such blocks (running float64 statistics, so pair sets never need to
  be in memory at once), :meth:`partial_fit` adds one block to the statistics of the last fit. The learned
  state lives in attributes ending in ``_`` (``source_lang_``, ``dim_``, ``languages_``, ``params_`` or
  ``left_``/``right_``/``bias_``, ``fit_counts_``, ``fit_info_``, the running statistics ``stats_``), so
  :func:`sklearn.utils.validation.check_is_fitted` works; it is complete when the fit returns. ``groups``:
  rows with equal value translate each other (one ``source_lang`` row per group); only methods that need
  pairs need them (:attr:`needs_groups`), and rows of a group without a source-language row are skipped by
  every method (counted in ``fit_counts_``), so methods fitted on the same pairs see the same passages. A
  group's rows come in one block.
- :meth:`transform` is pure (it writes nothing on the estimator; what it counts goes into the caller's
  ``counts``): a transformed copy, row by row, ``chunk_rows`` rows
  at a time (gathers in sub-blocks: no temporary larger than a few MB beyond the output). Every operation is
  row-wise, so a row's result does not depend on how the input was split into calls: index time and query
  time give the same vectors bit for bit. ``alpha`` scales the correction (1.0 = the published formula): an
  :class:`~mlirkit.transforms.alpha.Alpha` or what :meth:`Alpha.coerce` takes (a float, or a dict of
  per-language values where ``"*"`` gives every other language's, default 1.0), every value in [0, 2].
- :func:`mlirkit.transforms.io.save_transform` / :func:`~mlirkit.transforms.io.load_transform`: safetensors
  tensors (:meth:`tensors`) plus JSON metadata, never pickle; old files load as they did. What belongs to
  the file and not to the recipe or the fit (``encoder``, ``meta``, ``path``, ``sha256``, the language
  classifier ``langid`` and its ``langid_threshold``) are :class:`FileRecord` attributes: never parameters,
  never set by the constructor, not copied by ``clone``; the file layer and the builders set them.

Two kinds of methods share the contract. **Per-language** methods (:class:`PerLanguageTransform`: SHIFT,
centering, LIR) hold parameters per language: rows of unknown language (:func:`mlirkit.base.langs.is_unknown`)
are left unchanged (or, with :meth:`use_langid`, transformed with the predicted language when its confidence
reaches the threshold); a known language without parameters is left unchanged, counted in the caller's
``counts`` and logged (once per ``counts``; ``strict=True`` makes it an error). **Shared** methods
(:class:`ProjectionTransform`: LSAR, LEACE) apply one map to every row, whatever its language; a row's language
only selects its alpha.

A method is one file under ``mlirkit/transforms/`` with its class, and one entry in
:data:`mlirkit.transforms.registry.TRANSFORMS`; the CLIs, the file format, the array builders and the
contract test (``tests/transforms/test_contract.py``) take it from there.
"""
from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError as SklearnNotFittedError

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, check_lang, is_unknown, log_fallback, lookup
from mlirkit.base.option_names import option
from mlirkit.base.vectors import check_finite
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.defaults import DEFAULT_ALPHA

__all__ = ["Block", "FileRecord", "LanguageTransform", "NotFittedError", "OffsetTransform", "PROJECTION_TOL",
           "PerLanguageTransform", "ProjectionTransform", "SIDES", "canonical_params"]

logger = logging.getLogger(__name__)

SIDES = ("doc", "query")

#: one block of rows for :meth:`LanguageTransform.fit_blocks`: ``(embeddings (n, d), langs (n,), groups (n,) or None)``
Block = tuple[Any, Sequence[Any], Sequence[Any] | None]


class NotFittedError(MlirkitError, SklearnNotFittedError):
    """A transform used before :meth:`LanguageTransform.fit` (or a load); also scikit-learn's ``NotFittedError``."""


def canonical_params(params: Mapping[str, Any], method: str = "transform") -> dict[str, Any]:
    """``params`` keyed by canonical language codes (:func:`mlirkit.base.langs.canonical`: ``dt`` -> ``nl``,
    ``EN`` -> ``en``); a key that is no language code (``de\\n``, ``""``, ``English``) and two keys naming
    one language are refused."""
    out: dict[str, Any] = {}
    for lang, value in params.items():
        code = canonical(check_lang(lang, f"{method} parameters", known=True))
        if code in out:
            raise MlirkitError(f"{method} parameters given twice for one language ({code!r}, alias {lang!r})")
        out[code] = value
    return out


class FileRecord:
    """An attribute of the file layer, not of the estimator: what a transform file records beside the learned
    tensors (the encoder fingerprint, the metadata, the file's path and sha256, the language classifier).
    Never a constructor parameter and never set by the constructor (``clone`` starts without it); read before
    anyone set it, it is ``default()`` (a fresh dict for ``meta`` and ``encoder``), else None."""

    def __init__(self, default: Callable[[], Any] | None = None) -> None:
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_file_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if self.key not in obj.__dict__:
            if self.default is None:
                return None
            obj.__dict__[self.key] = self.default()
        return obj.__dict__[self.key]

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.key] = value


class LanguageTransform(BaseEstimator):
    """The estimator contract (module docstring). Subclasses set the class attributes and implement the
    hooks ``check_params``, ``_new_stats``, ``_finalize``, ``_transform_rows``, ``learned_tensors`` and
    ``_restore``.

    The file layer (:class:`FileRecord`): ``encoder`` (the fingerprint of the encoder whose embeddings were
    fitted, set by whoever knows it: the array builders, :func:`~mlirkit.transforms.io.load_transform`),
    ``meta`` (everything stored in the file; a fit merges its ``fit_info_`` into it), ``langid`` (a
    :class:`~mlirkit.transforms.langid.LangIdClassifier` or None) and ``langid_threshold``, ``path`` and
    ``sha256`` (of the file it was loaded from or saved to).
    """

    method: ClassVar[str] = ""
    #: sides this method transforms
    sides: ClassVar[tuple[str, ...]] = SIDES
    #: tensor name prefix in the transform file
    tensor_prefix: ClassVar[str] = ""
    #: whether the source language itself is transformed
    transforms_source: ClassVar[bool] = True
    #: one parameter set per language (False: one map for every row)
    per_language: ClassVar[bool] = True
    chunk_rows: ClassVar[int] = 65536

    encoder = FileRecord(dict)
    meta = FileRecord(dict)
    path = FileRecord()
    sha256 = FileRecord()
    langid = FileRecord()
    langid_threshold = FileRecord()

    def __init__(self, source_lang: str = "en") -> None:
        self.source_lang = source_lang

    # ----------------------------------------------------------------- the recipe
    @property
    def needs_groups(self) -> bool:
        """Whether :meth:`fit` needs ``groups`` (translation pairs)."""
        return False

    def check_params(self) -> None:
        """Check the constructor's arguments (at fit time, as scikit-learn does); sets ``source_lang_``. A
        subclass with arguments of its own extends it."""
        self.source_lang_ = canonical(check_lang(self.source_lang, "source language", known=True))

    # ----------------------------------------------------------------- fitting
    def fit(self, embeddings: Any, langs: Sequence[str | None], groups: Sequence[Any] | None = None
            ) -> "LanguageTransform":
        """Learn from ``embeddings`` (n, d), their languages and, for methods that need pairs, ``groups``
        (module docstring); returns ``self``."""
        return self.fit_blocks([(embeddings, langs, groups)])

    def fit_blocks(self, blocks: Iterable[Block]) -> "LanguageTransform":
        """Learn from ``(embeddings, langs, groups)`` blocks read one at a time (only the running statistics are
        kept: a pair set larger than memory streams through); returns ``self``. The same as :meth:`fit` on the
        blocks' rows concatenated."""
        self.check_params()
        self.stats_: Any = None
        self.fit_counts_: Counter[str] = Counter()
        for embeddings, langs, groups in blocks:
            self._add_block(embeddings, langs, groups)
        return self._finish_fit()

    def partial_fit(self, embeddings: Any, langs: Sequence[str | None], groups: Sequence[Any] | None = None
                    ) -> "LanguageTransform":
        """Add one block of rows to the statistics of the last fit (a fresh fit when there is none) and learn
        from all of them; returns ``self``."""
        if getattr(self, "stats_", None) is None:
            return self.fit(embeddings, langs, groups)
        self._add_block(embeddings, langs, groups)
        return self._finish_fit()

    def _add_block(self, embeddings: Any, langs: Sequence[str | None], groups: Sequence[Any] | None) -> None:
        x = np.asarray(embeddings)
        if x.ndim != 2:
            raise MlirkitError(f"embeddings must be a 2-d array, got shape {x.shape}")
        if len(langs) != x.shape[0]:
            raise MlirkitError(f"{len(langs)} languages for {x.shape[0]} embeddings")
        if groups is not None and len(groups) != x.shape[0]:
            raise MlirkitError(f"{len(groups)} groups for {x.shape[0]} embeddings")
        if groups is None and self.needs_groups:
            raise MlirkitError(f"{self.method} with {self._statistics_name()} needs groups: which rows translate "
                               f"each other (one {self.source_lang_!r} row per group)")
        if self.stats_ is not None and self.stats_.dim != x.shape[1]:
            raise MlirkitError(f"embeddings of dimension {x.shape[1]} after {self.stats_.dim}")
        check_finite("embeddings", x)
        labels = [la for la in set(langs) if not is_unknown(la)] if len(langs) else []
        odd = next((la for la in labels if not isinstance(la, str)), None)
        if odd is not None:
            raise MlirkitError(f"languages must be language tags (strings such as 'en'), got {type(odd).__name__} "
                               f"{odd!r}")
        lang_a = np.asarray(["" if is_unknown(la) else canonical(str(la)) for la in langs], dtype=object)
        group_a = None if groups is None else np.fromiter(groups, dtype=object, count=x.shape[0])  # any hashables
        if group_a is not None:
            keep = self._rows_with_source(lang_a, group_a)
            x, lang_a, group_a = x[keep], lang_a[keep], group_a[keep]
        if self.stats_ is None:
            self.stats_ = self._new_stats(x.shape[1])
        if len(x):
            self.stats_.update(np.asarray(x, dtype=np.float64), lang_a, group_a)

    def _rows_with_source(self, langs: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Rows of the groups that have a source-language row (two such rows in a group are an error)."""
        src = groups[langs == self.source_lang_]
        seen = Counter(src.tolist())
        twice = [g for g, n in seen.items() if n > 1]
        if twice:
            raise MlirkitError(f"group {twice[0]!r} has {seen[twice[0]]} {self.source_lang_!r} rows (one per group)")
        keep = np.fromiter((g in seen for g in groups.tolist()), dtype=bool, count=len(groups))
        self.fit_counts_["skipped_no_source"] += int((~keep).sum())
        return keep

    def _finish_fit(self) -> "LanguageTransform":
        """The learned state from the statistics (``fit_info_``: what the fit learned beyond the tensors, merged
        into the file layer's :attr:`meta`)."""
        if self.stats_ is None:
            raise MlirkitError(f"{type(self).__name__}: no rows to fit on")
        self.fit_info_: dict[str, Any] = {}
        self._restore(self._finalize(self.stats_))
        self.meta.update(self.fit_info_)
        return self

    def _check_fitted(self) -> None:
        if "dim_" not in self.__dict__:
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit (or fit_blocks, partial_fit) first, "
                                 f"or load_transform a file")

    # ----------------------------------------------------------------- the fitted state
    @classmethod
    def from_tensors(cls, tensors: Mapping[str, np.ndarray], *, source_lang: str, encoder: dict[str, Any] | None = None,
                     meta: dict[str, Any] | None = None, langid: Any = None, **recipe: Any) -> "LanguageTransform":
        """A fitted transform from its learned tensors (named as in the file, without the prefix: a
        language for per-language methods); what :func:`~mlirkit.transforms.io.load_transform` and the
        transforms derived from others (re-based, hybrid, imported) build."""
        t = cls(source_lang=canonical(check_lang(source_lang, "source language", known=True)), **recipe)
        t.check_params()
        t.meta = dict(meta or {})
        if not t.per_language:
            t.languages_ = sorted(canonical(check_lang(la, f"{t.method} languages", known=True))
                                  for la in t.meta.get("languages") or [])
        t._restore(dict(tensors))
        t.encoder = dict(encoder or {})
        t.langid = langid
        return t

    @classmethod
    def recipe_from_meta(cls, meta: Mapping[str, Any]) -> dict[str, Any]:
        """The constructor arguments a saved file records (its metadata), beyond ``source_lang``."""
        return {}

    @property
    def label(self) -> str:
        """What messages call the transform: its file, else ``<method>``."""
        return str(self.path) if self.path is not None else f"<{self.method}>"

    @property
    def dim(self) -> int:
        """``dim_``: the embedding dimension."""
        self._check_fitted()
        return self.dim_

    @property
    def languages(self) -> list[str]:
        """``languages_``: the languages with parameters (per-language methods) or fitted on (shared methods),
        sorted."""
        self._check_fitted()
        return list(self.languages_)

    def vector_lang(self, lang: str | None, what: str = "documents") -> str | None:
        """The language of :attr:`languages` whose parameters rows of ``lang`` use, by the one matching
        rule (:func:`mlirkit.base.langs.lookup`: ``pt-BR`` rows use ``pt``); None when none meets it.
        A fallback is logged once (``pt-BR documents use the pt vector``)."""
        used = lookup(lang, self.languages)
        if used is not None and lang is not None:
            log_fallback(lang, used, what)
        return used

    def is_source(self, lang: str | None) -> bool:
        """Whether ``lang`` meets the source language (``en-US`` rows of an ``en``-pivot transform)."""
        self._check_fitted()
        return lookup(lang, [self.source_lang_]) is not None

    def tensors(self) -> dict[str, np.ndarray]:
        """The learned state as float32 tensors, named as in the file (``<prefix>.<name>``)."""
        return {f"{self.tensor_prefix}.{name}": np.ascontiguousarray(v, dtype=np.float32)
                for name, v in self.learned_tensors().items()}

    def learned_tensors(self) -> dict[str, np.ndarray]:
        """The learned state as named arrays, without the file's prefix (what :meth:`from_tensors` takes)."""
        raise NotImplementedError

    def fitted_meta(self) -> dict[str, Any]:
        """What the last fit learned beyond the tensors (rows per language, singular values, ...): ``fit_info_``."""
        return dict(getattr(self, "fit_info_", {}))

    # ----------------------------------------------------------------- applying
    def check_alpha(self, alpha: AlphaLike) -> Alpha:
        """``alpha`` as an :class:`Alpha` whose per-language overrides all name languages of this
        transform or its source language (whose documents the query-time shift moves for queries in
        another language, ``mlirkit.search.query_shift``); an override for another language (a typo, a
        language never fitted) is an error."""
        alpha = Alpha.coerce(alpha)
        unknown = sorted(set(alpha.overrides) - set(self.languages) - {self.source_lang_})
        if unknown:
            raise MlirkitError(f"{option('alpha')} for {', '.join(repr(l) for l in unknown)}: transform {self.label} has no "
                               f"parameters for {'it' if len(unknown) == 1 else 'them'} "
                               f"(languages: {', '.join(self.languages)})")
        return alpha

    def touches(self, side: str) -> bool:
        _check_side(side)
        return side in self.sides

    def check_encoder(self, fingerprint: dict[str, Any], force: bool = False, dim: int | None = None) -> None:
        """Refuse embeddings of another encoder (warn instead with ``force``); a dimension mismatch is always
        refused. A transform that records no encoder (fitted on bare arrays) is checked by dimension only."""
        from mlirkit.encoders.base import check_same_encoder

        other_dim = dim if dim is not None else fingerprint.get("dim")
        if other_dim is not None and int(other_dim) != self.dim:
            raise MlirkitError(f"transform {self.label} has dimension {self.dim} but the encoder gives {other_dim}")
        if not self.encoder:
            logger.info("transform %s records no encoder: only its dimension is checked", self.label)
            return
        try:
            check_same_encoder(self.encoder, fingerprint, f"transform {self.label}")
        except MlirkitError as e:
            if not force:
                raise MlirkitError(f"{e}; use {option('force', True)} to apply it anyway") from None
            logger.warning("%s (applied anyway because of %s)", e, option("force", True))

    def use_langid(self, threshold: float | None) -> None:
        """Predict the language of unknown-language rows with the stored classifier (None switches it off)."""
        if threshold is not None:
            if self.langid is None:
                raise MlirkitError(f"transform {self.label} has no language classifier (fit it with {option('langid', True)})")
            if not (0.0 <= float(threshold) <= 1.0):
                raise MlirkitError(f"language-identification threshold {threshold} is outside [0, 1]")
            threshold = float(threshold)
        self.langid_threshold = threshold

    def transform(self, embeddings: np.ndarray, langs: Sequence[str | None], side: str,
                  alpha: AlphaLike = DEFAULT_ALPHA, strict: bool = False, *, out: np.ndarray | None = None,
                  counts: Counter[str] | None = None) -> np.ndarray:
        """Transformed copy of ``embeddings`` (float32, not normalised); see the module docstring. Pure: nothing
        is written on the estimator.

        ``out`` may be a preallocated float32 array of the same shape (it may be ``embeddings`` itself to
        work in place). ``counts``: the caller's counter of the rows left unchanged or decided by the language
        classifier (``missing:<lang>``, ``unknown``, ``langid:<lang>``, ``langid_below_threshold``), added to
        call after call; a language without parameters is logged the first time it enters ``counts`` (every
        call without one).
        """
        _check_side(side)
        alpha = self.check_alpha(alpha)
        embs = np.asarray(embeddings)
        if embs.ndim != 2:
            raise MlirkitError(f"embeddings must be a 2-d array, got shape {embs.shape}")
        if embs.shape[1] != self.dim:
            raise MlirkitError(f"embeddings have dimension {embs.shape[1]} but transform {self.label} has {self.dim}")
        if len(langs) != embs.shape[0]:
            raise MlirkitError(f"{len(langs)} languages for {embs.shape[0]} embeddings")
        if out is None:
            out = np.array(embs, dtype=np.float32, order="C", copy=True)
        else:
            if out.shape != embs.shape or out.dtype != np.float32:
                raise ValueError("out must be float32 with the shape of embs")
            if out is not embs:
                out[...] = embs
        if not self.touches(side) or len(langs) == 0:
            return out
        self._transform_rows(out, langs, alpha, strict, Counter() if counts is None else counts)
        return out

    def describe(self, alpha: AlphaLike = DEFAULT_ALPHA) -> dict[str, Any]:
        """What an index's meta.json records about the transform applied."""
        from mlirkit.encoders.base import fingerprint_digest

        return {
            "method": self.method,
            "source_lang": self.source_lang_,
            "alpha": Alpha.coerce(alpha).to_json(),
            "languages": self.languages,
            "sides": list(self.sides),
            "dim": self.dim,
            "file": self.path.name if self.path is not None else None,
            "sha256": self.sha256,
            "encoder_digest": fingerprint_digest(self.encoder),
            "pairs": self.meta.get("pairs"),
            **{k: self.meta[k] for k in ("provenance", "corpus_fit", "hybrid", "mining", "recipe", "missing_languages")
               if k in self.meta},
            "langid": None if self.langid is None else {
                **self.langid.describe(), "threshold": self.langid_threshold,
                "used": self.langid_threshold is not None},
        }

    # ----------------------------------------------------------------- subclass hooks
    def _statistics_name(self) -> str:
        return "its statistics"

    def _new_stats(self, dim: int) -> Any:
        """Running statistics with ``update(x float64 (n, d), langs object (n,), groups object (n,) or None)``."""
        raise NotImplementedError

    def _finalize(self, stats: Any) -> dict[str, np.ndarray]:
        """The learned tensors (named as in the file, without the prefix) from the statistics."""
        raise NotImplementedError

    def _restore(self, tensors: dict[str, np.ndarray]) -> None:
        """Set the learned state (``dim_``, ``languages_`` and the method's own) from named tensors; checks them."""
        raise NotImplementedError

    def _transform_rows(self, out: np.ndarray, langs: Sequence[str | None], alpha: Alpha, strict: bool,
                        counts: Counter[str]) -> None:
        raise NotImplementedError



class PerLanguageTransform(LanguageTransform):
    """Parameters per language, ``params_[lang]`` (float32; the method's docstring says their shape); SHIFT,
    centering and LIR.

    Subclasses implement ``_tables(alphas)`` and ``_apply_codes(block, codes, tables, single)`` on blocks of
    rows with per-row language codes; this class does the chunking and the bookkeeping.
    """

    def _restore(self, tensors: dict[str, np.ndarray]) -> None:
        params = self._filter_params(tensors)
        if not params:
            raise MlirkitError(f"{self.method} transform without any language")
        params = canonical_params(params, self.method)
        params = {lang: np.ascontiguousarray(v, dtype=np.float32) for lang, v in sorted(params.items())}
        dims = {v.shape[-1] for v in params.values()}
        if len(dims) != 1:
            raise MlirkitError(f"{self.method} transform: vectors of different dimensions {sorted(dims)}")
        for lang, v in params.items():
            self._check_param(lang, v)
            check_finite(f"parameters of {lang!r}", v)
        self.params_: dict[str, np.ndarray] = params
        self.languages_: list[str] = list(params)
        self.dim_: int = dims.pop()

    def _filter_params(self, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return params

    def learned_tensors(self) -> dict[str, np.ndarray]:
        self._check_fitted()
        return dict(self.params_)

    def _check_param(self, lang: str, value: np.ndarray) -> None:
        if value.ndim != 1:
            raise MlirkitError(f"{self.method} parameters of {lang!r} must be a vector, got shape {value.shape}")

    def _transform_rows(self, out: np.ndarray, langs: Sequence[str | None], alpha: Alpha, strict: bool,
                        counts: Counter[str]) -> None:
        codes = self._resolve_langs(out, langs, strict, counts)
        alphas = np.array([0.0] + [alpha.for_lang(lang) for lang in self.languages])  # (L+1,) code 0: untouched
        tables = self._tables(alphas)
        for a in range(0, len(codes), self.chunk_rows):
            b = min(a + self.chunk_rows, len(codes))
            chunk = codes[a:b]
            lo, hi = int(chunk.min()), int(chunk.max())
            if hi == 0:
                continue
            self._apply_codes(out[a:b], chunk, tables, lo if lo == hi else None)

    def _resolve_langs(self, embs: np.ndarray, langs: Sequence[str | None], strict: bool,
                       counts: Counter[str]) -> np.ndarray:
        """Per-row code: 0 = leave unchanged, k = ``self.languages[k - 1]``; counts (in ``counts``) and reports
        what is skipped."""
        index = {lang: k for k, lang in enumerate(self.languages, start=1)}
        memo: dict[str | None, int] = {}

        def code(lang: str | None) -> int:
            if lang not in memo:
                memo[lang] = index.get(self.vector_lang(lang), 0)  # type: ignore[arg-type]
            return memo[lang]

        codes = np.fromiter((code(lang) for lang in langs), dtype=np.intp, count=len(langs))
        if codes.all():
            return codes
        rest = np.flatnonzero(codes == 0)
        unknown = [int(i) for i in rest if is_unknown(langs[i])]
        if unknown and self.langid is not None and self.langid_threshold is not None:
            predicted, conf = self.langid.predict(embs[unknown])
            for i, lang, c in zip(unknown, predicted, conf):
                if c >= self.langid_threshold:
                    codes[i] = code(lang)
                    counts[f"langid:{lang}"] += 1
                else:
                    counts["langid_below_threshold"] += 1
        else:
            counts["unknown"] += len(unknown)
        missing: Counter[str] = Counter(str(langs[i]) for i in rest if not is_unknown(langs[i])
                                        and (self.transforms_source or not self.is_source(langs[i])))
        if missing:
            if strict:
                raise MlirkitError(f"transform {self.label} has no {self.method} parameters for language(s) "
                                   f"{', '.join(f'{k} ({v} rows)' for k, v in sorted(missing.items()))} "
                                   f"(known: {', '.join(self.languages)})")
            for lang, n in missing.items():
                first = not counts[f"missing:{lang}"]
                counts[f"missing:{lang}"] += n
                if first:
                    logger.warning("transform %s has no %s parameters for language %r: those rows are left "
                                   "unchanged (counted; %s makes this an error)", self.label, self.method, lang,
                                   option("strict", True))
        return codes

    # Subclasses: ``_tables(alphas)`` precomputes per-language arrays (row 0 = the untouched code, all
    # zeros); ``_apply_codes(block, codes, tables, single)`` transforms ``block`` in place, row-wise, where
    # ``single`` is the code when every row of the block has it (no gather needed), else None. Subtracting
    # an all-zero row leaves a float32 row bit-identical (x - 0 == x).
    def _tables(self, alphas: np.ndarray) -> Any:
        raise NotImplementedError

    def _apply_codes(self, block: np.ndarray, codes: np.ndarray, tables: Any, single: int | None) -> None:
        raise NotImplementedError

    def _param_stack(self) -> np.ndarray:
        """``(L+1, ...)`` float32 parameters with a zero block for code 0."""
        stack = np.stack([self.params_[lang] for lang in self.languages])
        return np.concatenate([np.zeros_like(stack[:1]), stack])


class OffsetTransform(PerLanguageTransform):
    """A transform that subtracts ``alpha_l * P_l`` (one vector per language): SHIFT and centering."""

    sub_rows = 8192  # gather temporaries stay small (sub_rows x d)

    def _tables(self, alphas: np.ndarray) -> np.ndarray:
        # "+ 0.0" turns the -0.0 of alpha = 0 into +0.0, so x - table[k] == x bit for bit (also for x = -0.0)
        return (alphas[:, None] * self._param_stack().astype(np.float64) + 0.0).astype(np.float32)  # (L+1, d)

    def _apply_codes(self, block: np.ndarray, codes: np.ndarray, tables: np.ndarray, single: int | None) -> None:
        if single is not None:
            block -= tables[single]  # (d,) broadcast
            return
        for a in range(0, len(codes), self.sub_rows):
            b = min(a + self.sub_rows, len(codes))
            block[a:b] -= tables[codes[a:b]]  # (n, d)


#: largest entry of ``R L - I`` a stored projection may have (the main job's LEACE and LSAR files: 4e-8 or less)
PROJECTION_TOL = 1e-4


class ProjectionTransform(LanguageTransform):
    """One low-rank affine map for every row: ``x' = x - alpha_l * ((x - b) R^T) L^T`` with ``L`` (d, k),
    ``R`` (k, d) and ``b`` (d,) or none; LSAR (``L = R^T``, orthonormal, no ``b``) and LEACE. Learned:
    ``left_`` (``L``, float32), ``right_`` (``R``), ``bias_`` (``b`` or None), ``languages_`` (fitted on).

    ``alpha_l`` is the alpha of the row's language (the default for rows of unknown language); the map
    itself never depends on the language, so every row is transformed.
    """

    per_language = False
    sub_rows = 8192

    @property
    def rank_(self) -> int:
        """``k``, the number of directions the map changes (the rows of ``right_``)."""
        self._check_fitted()
        return int(self.right_.shape[0])

    def _restore(self, tensors: dict[str, np.ndarray]) -> None:
        unexpected = sorted(set(tensors) - {"left", "right", "bias"})
        if unexpected or "left" not in tensors or "right" not in tensors:
            raise MlirkitError(f"{self.method} transform needs tensors left and right (and optionally bias), got "
                               f"{', '.join(sorted(tensors)) or 'none'}")
        left = np.ascontiguousarray(tensors["left"], dtype=np.float32)
        right = np.ascontiguousarray(tensors["right"], dtype=np.float32)
        if left.ndim != 2 or right.ndim != 2 or left.shape[::-1] != right.shape:
            raise MlirkitError(f"{self.method} transform: left {left.shape} and right {right.shape} must be (d, k) "
                               f"and (k, d)")
        bias = tensors.get("bias")
        if bias is not None:
            bias = np.ascontiguousarray(bias, dtype=np.float32)
            if bias.shape != (left.shape[0],):
                raise MlirkitError(f"{self.method} transform: bias of shape {bias.shape}, expected ({left.shape[0]},)")
        for name, v in (("left", left), ("right", right), ("bias", bias)):
            if v is not None:
                check_finite(f"{self.method} {name}", v)
        # L R is a projection (idempotent) exactly when R L = I_k: the map removes k directions and no more
        gap = np.abs(right.astype(np.float64) @ left.astype(np.float64) - np.eye(len(right))).max(initial=0.0)
        if gap > PROJECTION_TOL:
            raise MlirkitError(f"{self.method} transform: left and right are not a projection (right @ left differs "
                               f"from the identity by {gap:.3g}, more than {PROJECTION_TOL:g})")
        self.left_: np.ndarray = left
        self.right_: np.ndarray = right
        self.bias_: np.ndarray | None = bias
        self.dim_: int = int(left.shape[0])

    def learned_tensors(self) -> dict[str, np.ndarray]:
        self._check_fitted()
        out = {"left": self.left_, "right": self.right_}
        if self.bias_ is not None:
            out["bias"] = self.bias_
        return out

    def _transform_rows(self, out: np.ndarray, langs: Sequence[str | None], alpha: Alpha, strict: bool,
                        counts: Counter[str]) -> None:
        # x' = x - alpha * sum_j ((x - b) . r_j) l_j ; each dot product is a per-row reduction (no BLAS), so a
        # row's result does not depend on the block it arrives in
        row_alpha = np.fromiter((alpha.default if is_unknown(la) else alpha.for_lang(str(la)) for la in langs),
                                dtype=np.float32, count=len(langs))
        right, left, bias = self.right_, self.left_, self.bias_
        for a in range(0, len(out), self.sub_rows):
            b = min(a + self.sub_rows, len(out))
            x = out[a:b]  # (n, d) view
            centred = x if bias is None else x - bias
            proj = np.zeros(x.shape, dtype=np.float32)  # (n, d)
            for j in range(right.shape[0]):
                coef = np.multiply(centred, right[j]).sum(axis=1, dtype=np.float32)  # (n,)
                proj += coef[:, None] * left[:, j]  # (n, d)
            ra = row_alpha[a:b]
            proj *= ra[:, None]
            proj[ra == 0] = 0.0  # +0.0, so those rows stay bit-identical (also -0.0 entries)
            x -= proj


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise MlirkitError(f"side must be one of {', '.join(SIDES)}, got {side!r}")
