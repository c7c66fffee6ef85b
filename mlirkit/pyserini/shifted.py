"""SHIFT (or any language transform) inside Pyserini's document-encoding pipeline.

:class:`ShiftedDocumentEncoder` wraps an :class:`~mlirkit.pyserini.encoders.MlirkitDocumentEncoder` and
returns ``normalize(T(f(d), lang(d)))``: for SHIFT ``z' = z - alpha * V_lang`` for documents whose
language is not the transform's source language (source-language and unknown-language documents are
unchanged), then L2 normalisation so inner product = cosine. These are the vectors
``python -m mlirkit.encode --transform FILE --alpha A`` writes, so ``pyserini.encode`` builds a shifted
index directly.

Pyserini hands the encoder the JSONL fields listed in ``encoder --fields``: list ``lang`` there (and
in ``input --fields``) so each batch arrives with ``langs=[...]``. Importing this module starts the JVM.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.base.errors import MlirkitError
from mlirkit.pyserini.encoders import MlirkitDocumentEncoder  # starts the JVM, so before pyserini
from pyserini.encode import DocumentEncoder  # noqa: E402
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.transform import LanguageTransform
from mlirkit.transforms.defaults import DEFAULT_ALPHA

logger = logging.getLogger(__name__)

LANGS_HINT = "add 'lang' to --fields of both 'input' and 'encoder' (e.g. --fields text lang)"


class ShiftedDocumentEncoder(DocumentEncoder):
    """A Pyserini document encoder applying a language transform by document language.

    ``transform`` is a path to a transform file (``python -m mlirkit.shift fit``) or a loaded
    :class:`mlirkit.transforms.LanguageTransform`; ``alpha`` a float or ``{"*": a, "ja": b}``. The transform
    must have been fitted with the same encoder (``force=True`` applies it anyway, warned);
    ``strict=True`` refuses documents whose language has no vector.
    """

    def __init__(self, base: MlirkitDocumentEncoder, transform: LanguageTransform | str | os.PathLike,
                 alpha: AlphaLike = DEFAULT_ALPHA, *,
                 strict: bool = False, force: bool = False) -> None:
        if not isinstance(base, MlirkitDocumentEncoder):
            raise TypeError(f"ShiftedDocumentEncoder wraps an MlirkitDocumentEncoder, got {type(base).__name__}")
        alpha = Alpha.coerce(alpha)  # a bad alpha fails before anything loads
        if not isinstance(transform, LanguageTransform):
            from mlirkit.transforms.io import load_transform

            transform = load_transform(Path(transform))
        transform.check_encoder(base.fingerprint, force=force)
        if not transform.touches("doc"):
            raise MlirkitError(f"the transform {getattr(transform, 'path', '')} does not change documents "
                               "(nothing to apply at index time)")
        self.base = base
        self._transform = transform
        self.alpha = alpha
        self.strict = strict

    # the attributes the index writer and registration read, delegated to the wrapped encoder
    @property
    def encoder(self) -> Any:
        return self.base.encoder

    @property
    def model_name(self) -> str:
        return self.base.model_name

    @property
    def dim(self) -> int:
        return self.base.dim

    @property
    def fingerprint(self) -> dict[str, Any]:
        return self.base.fingerprint

    @property
    def last_raw(self) -> np.ndarray | None:
        return self.base.last_raw

    @property
    def transform(self) -> Any:
        return self._transform

    @property
    def transform_path(self) -> Path | None:
        path = getattr(self._transform, "path", None)
        return Path(path) if path is not None else None

    def encoder_options(self) -> dict[str, Any]:
        return self.base.encoder_options()

    def describe_transform(self) -> dict[str, Any]:
        return self._transform.describe(self.alpha)

    def encode(self, texts: Sequence[str], titles: Sequence[str] | None = None,
               langs: Sequence[str | None] | None = None, **kwargs: Any) -> np.ndarray:
        """``normalize(T(f(d), lang(d)))`` for one batch; ``langs`` is required."""
        if langs is None:
            raise MlirkitError(f"the transform needs each document's language: {LANGS_HINT}")
        langs = list(langs)
        raw = self.base.encode_raw(texts, titles, langs)
        self.base.last_raw = raw
        return transform_and_normalize(raw, langs, "doc", self._transform, self.alpha, strict=self.strict)


def shifted_document_encoder(model_name: str, transform: LanguageTransform | str | os.PathLike, alpha: AlphaLike = DEFAULT_ALPHA, *,
                             encoder_class: str | None = None, options: Mapping[str, Any] | None = None,
                             device: Any = None, strict: bool = False, force: bool = False) -> ShiftedDocumentEncoder:
    """Build ``ShiftedDocumentEncoder(MlirkitDocumentEncoder(model_name, ...), transform, alpha)``."""
    base = MlirkitDocumentEncoder(model_name, device, encoder_class=encoder_class, options=options)
    return ShiftedDocumentEncoder(base, transform, alpha, strict=strict, force=force)


__all__ = ["ShiftedDocumentEncoder", "shifted_document_encoder"]
