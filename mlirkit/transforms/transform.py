"""Language transforms: the common interface of SHIFT, language centering and LIR.

A transform maps embeddings to embeddings using each row's language::

    out = t.apply(embs, langs, side="doc" | "query", alpha=1.0)

Rows whose language is unknown (:func:`mlirkit.base.langs.is_unknown`: ``None``, ``""``, ``und``, ``unknown``) are left
unchanged (or, when language identification is switched on with :meth:`LanguageTransform.use_langid`,
transformed with the predicted language if its confidence reaches the threshold). A known language
without parameters in the transform is left unchanged, counted in :attr:`LanguageTransform.counts` and
logged once (``strict=True`` makes it an error).

``alpha`` scales the correction of every method (1.0 = the published formula): an
:class:`~mlirkit.transforms.alpha.Alpha`, or what :meth:`Alpha.coerce` takes (a float for all languages, or a
dict of per-language values where the key ``"*"`` gives the value of every other language, default 1.0 when
``"*"`` is absent, e.g. ``{"*": 0.6, "ja": 1.0}``). Every value must lie in [0, 2].

Subclasses implement ``_tables``/``_apply_codes`` on blocks of rows with per-row language codes; the
base class does the chunking (``chunk_rows`` rows at a time; gathers in sub-blocks, so no temporary
larger than a few MB is made beyond the output array) and the bookkeeping. Every operation is row-wise, so the result for a row
does not depend on how the input was split into calls (index-time == post-hoc, bit for bit).
"""
from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, check_lang, is_unknown
from mlirkit.base.registry import Registry
from mlirkit.base.vectors import check_finite
from mlirkit.base.option_names import option
from mlirkit.transforms.alpha import Alpha, AlphaLike

logger = logging.getLogger(__name__)

SIDES = ("doc", "query")

#: method name -> transform class
TRANSFORMS: Registry[type["LanguageTransform"]] = Registry("transform method")


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


class LanguageTransform:
    """Base class: parameters per language (``params[lang]``, float32) plus metadata.

    Attributes: ``method``, ``encoder`` (fingerprint dict), ``source_lang``, ``dim``, ``params``,
    ``meta`` (everything stored in the file), ``langid`` (a :class:`~mlirkit.transforms.langid.LangIdClassifier`
    or None), ``path`` and ``sha256`` (of the file it was loaded from or saved to), ``counts`` (rows seen
    by :meth:`apply`: ``missing:<lang>``, ``unknown``, ``langid:<lang>``, ``langid_below_threshold``).
    """

    method: ClassVar[str] = ""
    #: sides this method transforms
    sides: ClassVar[tuple[str, ...]] = SIDES
    #: tensor name prefix in the transform file
    tensor_prefix: ClassVar[str] = ""
    #: whether the source language itself is transformed
    transforms_source: ClassVar[bool] = True
    chunk_rows: int = 65536

    def __init__(self, params: Mapping[str, np.ndarray], *, encoder: dict[str, Any], source_lang: str,
                 meta: dict[str, Any] | None = None, langid: Any = None) -> None:
        if not params:
            raise MlirkitError(f"{self.method} transform without any language")
        params = canonical_params(params, self.method)
        self.params = {lang: np.ascontiguousarray(v, dtype=np.float32) for lang, v in sorted(params.items())}
        dims = {v.shape[-1] for v in self.params.values()}
        if len(dims) != 1:
            raise MlirkitError(f"{self.method} transform: vectors of different dimensions {sorted(dims)}")
        for lang, v in self.params.items():
            self._check_param(lang, v)
            check_finite(f"parameters of {lang!r}", v)
        self.dim = dims.pop()
        self.encoder = dict(encoder or {})
        self.source_lang = canonical(check_lang(source_lang, "source language", known=True))
        self.meta = dict(meta or {})
        self.langid = langid
        self.langid_threshold: float | None = None
        self.path: Path | None = None
        self.sha256: str | None = None
        self.counts: Counter[str] = Counter()
        self._warned: set[str] = set()

    # ----------------------------------------------------------------- subclass hooks
    def _check_param(self, lang: str, value: np.ndarray) -> None:
        if value.ndim != 1:
            raise MlirkitError(f"{self.method} parameters of {lang!r} must be a vector, got shape {value.shape}")

    # ----------------------------------------------------------------- interface
    @property
    def languages(self) -> list[str]:
        return list(self.params)

    def check_alpha(self, alpha: AlphaLike) -> Alpha:
        """``alpha`` as an :class:`Alpha` whose per-language overrides all name languages of this
        transform or its source language (whose documents the query-time shift moves for queries in
        another language, ``mlirkit.search.query_shift``); an override for another language (a typo, a
        language never fitted) is an error."""
        alpha = Alpha.coerce(alpha)
        unknown = sorted(set(alpha.overrides) - set(self.languages) - {self.source_lang})
        if unknown:
            raise MlirkitError(f"{option('alpha')} for {', '.join(repr(l) for l in unknown)}: transform {self._name()} has no "
                               f"parameters for {'it' if len(unknown) == 1 else 'them'} "
                               f"(languages: {', '.join(self.languages)})")
        return alpha

    def touches(self, side: str) -> bool:
        _check_side(side)
        return side in self.sides

    def check_encoder(self, fingerprint: dict[str, Any], force: bool = False, dim: int | None = None) -> None:
        """Refuse embeddings of another encoder (warn instead with ``force``); a dimension mismatch is always refused."""
        from mlirkit.encoders.base import check_same_encoder

        other_dim = dim if dim is not None else fingerprint.get("dim")
        if other_dim is not None and int(other_dim) != self.dim:
            raise MlirkitError(f"transform {self._name()} has dimension {self.dim} but the encoder gives {other_dim}")
        try:
            check_same_encoder(self.encoder, fingerprint, f"transform {self._name()}")
        except MlirkitError as e:
            if not force:
                raise MlirkitError(f"{e}; use {option('force', True)} to apply it anyway") from None
            logger.warning("%s (applied anyway because of %s)", e, option("force", True))

    def use_langid(self, threshold: float | None) -> None:
        """Predict the language of unknown-language rows with the stored classifier (None switches it off)."""
        if threshold is not None:
            if self.langid is None:
                raise MlirkitError(f"transform {self._name()} has no language classifier (fit it with {option('langid', True)})")
            if not (0.0 <= float(threshold) <= 1.0):
                raise MlirkitError(f"language-identification threshold {threshold} is outside [0, 1]")
            threshold = float(threshold)
        self.langid_threshold = threshold

    def apply(self, embs: np.ndarray, langs: Sequence[str | None], side: str,
              alpha: AlphaLike = 1.0, strict: bool = False, *,
              out: np.ndarray | None = None) -> np.ndarray:
        """Transformed copy of ``embs`` (float32, not normalised); see the module docstring.

        ``out`` may be a preallocated float32 array of the same shape (it may be ``embs`` itself to
        work in place).
        """
        _check_side(side)
        alpha = self.check_alpha(alpha)
        embs = np.asarray(embs)
        if embs.ndim != 2:
            raise MlirkitError(f"embeddings must be a 2-d array, got shape {embs.shape}")
        if embs.shape[1] != self.dim:
            raise MlirkitError(f"embeddings have dimension {embs.shape[1]} but transform {self._name()} has {self.dim}")
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
        codes = self._resolve_langs(out, langs, strict)
        alphas = np.array([0.0] + [alpha.for_lang(lang) for lang in self.languages])  # (L+1,) code 0: untouched
        tables = self._tables(alphas)
        for a in range(0, len(codes), self.chunk_rows):
            b = min(a + self.chunk_rows, len(codes))
            chunk = codes[a:b]
            lo, hi = int(chunk.min()), int(chunk.max())
            if hi == 0:
                continue
            self._apply_codes(out[a:b], chunk, tables, lo if lo == hi else None)
        return out

    def describe(self, alpha: AlphaLike = 1.0) -> dict[str, Any]:
        """What an index's meta.json records about the transform applied."""
        from mlirkit.encoders.base import fingerprint_digest

        return {
            "method": self.method,
            "source_lang": self.source_lang,
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

    def reset_counts(self) -> None:
        self.counts.clear()

    # ----------------------------------------------------------------- internals
    def _name(self) -> str:
        return str(self.path) if self.path is not None else f"<{self.method}>"

    def _resolve_langs(self, embs: np.ndarray, langs: Sequence[str | None], strict: bool) -> np.ndarray:
        """Per-row code: 0 = leave unchanged, k = ``self.languages[k - 1]``; counts and reports what is skipped."""
        index = {lang: k for k, lang in enumerate(self.languages, start=1)}
        codes = np.fromiter((index.get(canonical(lang), 0) for lang in langs), dtype=np.intp, count=len(langs))
        if codes.all():
            return codes
        rest = np.flatnonzero(codes == 0)
        unknown = [int(i) for i in rest if is_unknown(langs[i])]
        if unknown and self.langid is not None and self.langid_threshold is not None:
            predicted, conf = self.langid.predict(embs[unknown])
            for i, lang, c in zip(unknown, predicted, conf):
                if c >= self.langid_threshold:
                    codes[i] = index.get(canonical(lang), 0)
                    self.counts[f"langid:{lang}"] += 1
                else:
                    self.counts["langid_below_threshold"] += 1
        else:
            self.counts["unknown"] += len(unknown)
        missing: Counter[str] = Counter(str(langs[i]) for i in rest if not is_unknown(langs[i])
                                        and (self.transforms_source or canonical(langs[i]) != self.source_lang))
        if missing:
            if strict:
                raise MlirkitError(f"transform {self._name()} has no {self.method} parameters for language(s) "
                                   f"{', '.join(f'{k} ({v} rows)' for k, v in sorted(missing.items()))} "
                                   f"(known: {', '.join(self.languages)})")
            for lang, n in missing.items():
                self.counts[f"missing:{lang}"] += n
                if lang not in self._warned:
                    self._warned.add(lang)
                    logger.warning("transform %s has no %s parameters for language %r: those rows are left "
                                   "unchanged (counted; %s makes this an error)", self._name(), self.method, lang,
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
        stack = np.stack([self.params[lang] for lang in self.languages])
        return np.concatenate([np.zeros_like(stack[:1]), stack])


class OffsetTransform(LanguageTransform):
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


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise MlirkitError(f"side must be one of {', '.join(SIDES)}, got {side!r}")
