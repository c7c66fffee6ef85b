"""mlirkit encoders as Pyserini ``DocumentEncoder`` / ``QueryEncoder`` subclasses.

Importing this module starts the JVM (:func:`mlirkit.base.jvm.boot_jvm`) and imports
``pyserini.encode`` (6-11 s); it is imported lazily by :mod:`mlirkit.pyserini.registration`.

Both classes wrap :func:`mlirkit.encoders.load_encoder`, so they produce exactly what
``python -m mlirkit.encode`` / ``mlirkit.search.Searcher`` produce for the same encoder and options:

- documents: ``normalize(T_d(f(d)))`` (``T_d`` only when a transform is given, see
  :mod:`mlirkit.pyserini.shifted`), the vectors ``mlirkit.encode`` puts in its FAISS index;
- queries: ``normalize(T_q(g(q)))`` (``T_q`` only for transforms with a query side: centering, LIR).

The constructors take the keyword arguments Pyserini's CLIs pass (``model_name``/``device`` from
``pyserini.encode``; ``encoder_dir``/``tokenizer_name``/``device``/``prefix``/``fp16`` from
``pyserini.search.faiss``) plus mlirkit's own encoder ``options`` (``max_length``, ``doc_prefix``, ...).
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.option_names import option
from mlirkit.encoders.base import Encoder
from mlirkit.base.jvm import boot_jvm
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.transform import LanguageTransform
from mlirkit.transforms.defaults import DEFAULT_ALPHA

boot_jvm()

from pyserini.encode import DocumentEncoder, QueryEncoder  # noqa: E402  (after the JVM is up)

logger = logging.getLogger(__name__)


def join_title_text(titles: Sequence[str | None] | None, texts: Sequence[str | None]) -> list[str]:
    """``"title text"`` per document (stripped, empty parts dropped), as :func:`mlirkit.io.corpus.read_corpus` joins them."""
    if titles is None:
        titles = [None] * len(texts)
    if len(titles) != len(texts):
        raise MlirkitError(f"{len(titles)} titles but {len(texts)} texts")
    return [" ".join(p.strip() for p in (title, text) if p and p.strip()) for title, text in zip(titles, texts)]


def _device_option(device: Any) -> str | None:
    if device is None:
        return None
    return str(device)


def _build(model_name: str, encoder_class: str | None, options: Mapping[str, Any]):
    from mlirkit.encoders import load_encoder

    return load_encoder(model_name, encoder_class, **dict(options))


class MlirkitDocumentEncoder(DocumentEncoder):
    """Pyserini document encoder backed by an mlirkit encoder; output rows are L2-normalised.

    ``encoder_class`` is the mlirkit encoder class (``"hf"``, ``"usem"``, ``"dcl"``) or ``None`` to
    resolve ``model_name`` like ``mlirkit.encode --encoder`` does (preset, DCL directory, else HF).
    Pyserini's per-call ``max_length``/``fp16``/``add_sep`` are not used: the mlirkit encoder's options
    (``options={"max_length": ...}``) decide, so that documents and queries are encoded alike.
    """

    def __init__(self, model_name: str, device: Any = None, *, encoder_class: str | None = None,
                 options: Mapping[str, Any] | None = None, encoder: Encoder | None = None,
                 **ignored: Any) -> None:
        opts = dict(options or {})
        if "device" not in opts and _device_option(device) is not None:
            opts["device"] = _device_option(device)
        if ignored:
            logger.debug("ignoring Pyserini encoder arguments %s", sorted(ignored))
        self.model_name = model_name
        self.encoder_class = encoder_class
        self.options = opts
        self.encoder = encoder if encoder is not None else _build(model_name, encoder_class, opts)
        #: the untransformed encoder output of the last :meth:`encode` call (for ``embeddings.npy``)
        self.last_raw: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return self.encoder.dim

    @property
    def fingerprint(self) -> dict[str, Any]:
        return self.encoder.fingerprint

    @property
    def transform(self) -> Any:
        """The language transform applied to documents (``None`` here; see ``ShiftedDocumentEncoder``)."""
        return None

    def describe_transform(self) -> dict[str, Any] | None:
        return None

    def encoder_options(self) -> dict[str, Any]:
        """What ``mlirkit.search`` needs to rebuild this encoder from ``meta.json``."""
        return {"encoder_class": self.encoder_class, **{k: v for k, v in self.options.items() if k != "device"}}

    def encode_raw(self, texts: Sequence[str], titles: Sequence[str] | None = None,
                   langs: Sequence[str | None] | None = None) -> np.ndarray:
        """``f(d)``: the encoder's document embeddings, float32 ``(n, dim)``, not normalised."""
        texts = join_title_text(titles, list(texts))
        if langs is not None and len(langs) != len(texts):
            raise MlirkitError(f"{len(langs)} languages but {len(texts)} documents")
        return self.encoder.encode_docs(texts, list(langs) if langs is not None else None)

    def encode(self, texts: Sequence[str], titles: Sequence[str] | None = None,
               langs: Sequence[str | None] | None = None, **kwargs: Any) -> np.ndarray:
        """Pyserini's call: ``encode(texts=[...], titles=[...]?, langs=[...]?, max_length=..., fp16=..., add_sep=...)``."""
        raw = self.encode_raw(texts, titles, langs)
        self.last_raw = raw
        return transform_and_normalize(raw, langs, "doc")


class MlirkitQueryEncoder(QueryEncoder):
    """Pyserini query encoder backed by an mlirkit encoder: ``normalize(T_q(g(q)))``, with batch encoding.

    ``FaissSearcher.search`` calls :meth:`encode` (one query -> ``(dim,)``), ``batch_search`` calls
    :meth:`encode_batch` (queries -> ``(n, dim)``). ``query_lang`` is the language given to the encoder
    and to a query-side transform (Pyserini's topics carry none); ``query_langs`` (query text -> language,
    read from the topics file by the search wrapper) gives each query its own language, ``query_lang``
    the rest; ``transform`` is a loaded
    :class:`mlirkit.transforms.LanguageTransform` (only its query side is used) with strength ``alpha``.
    """

    def __init__(self, encoder_dir: str | None = None, tokenizer_name: str | None = None, device: Any = None,
                 prefix: str | None = None, fp16: bool = False, *, encoder_class: str | None = None,
                 options: Mapping[str, Any] | None = None, query_lang: str | None = None,
                 transform: LanguageTransform | None = None, alpha: AlphaLike = DEFAULT_ALPHA, encoder: Encoder | None = None,
                 query_langs: Mapping[str, str] | None = None, **ignored: Any) -> None:
        super().__init__()
        if encoder is None and not encoder_dir:
            raise MlirkitError(f"an mlirkit query encoder needs {option('encoder_dir', flag='--encoder')} (a preset name, HF id "
                               "or path)")
        opts = dict(options or {})
        if "device" not in opts and _device_option(device) is not None:
            opts["device"] = _device_option(device)
        if prefix is not None and "query_prefix" not in opts:
            opts["query_prefix"] = prefix
        if fp16 and "dtype" not in opts:
            opts["dtype"] = "float16"
        if tokenizer_name:
            logger.warning("%s %s ignored: mlirkit encoders load their own tokenizer",
                           option("tokenizer_name", flag="--tokenizer"), tokenizer_name)
        if ignored:
            logger.debug("ignoring Pyserini encoder arguments %s", sorted(ignored))
        self.model_name = encoder_dir
        self.encoder_class = encoder_class
        self.options = opts
        self.encoder = encoder if encoder is not None else _build(encoder_dir, encoder_class, opts)
        self.query_lang = query_lang
        self.query_langs = dict(query_langs or {})  # query text -> language (from the topics file)
        self.transform = transform if transform is not None and transform.touches("query") else None
        self.alpha = Alpha.coerce(alpha)
        if self.transform is not None:
            self.transform.check_encoder(self.encoder.fingerprint)
            if not query_lang and not self.query_langs:
                raise MlirkitError(f"the transform {getattr(transform, 'path', '')} changes queries by language: "
                                   f"give {option('query_lang', flag='--default-lang')}")
        self.has_model = True

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def encode_batch(self, queries: Sequence[str], langs: Sequence[str | None] | None = None) -> np.ndarray:
        """Float32 ``(n, dim)`` query vectors, L2-normalised."""
        queries = list(queries)
        if not all(isinstance(q, str) for q in queries):
            raise MlirkitError("mlirkit query encoders take query texts (str)")
        if langs is None and self.query_langs:
            langs = [self.query_langs.get(q, self.query_lang or UNKNOWN) for q in queries]
        if langs is None:
            langs = [self.query_lang or UNKNOWN] * len(queries) if self.query_lang else None
        vectors = self.encoder.encode_queries(queries, list(langs) if langs is not None else None)
        return transform_and_normalize(vectors, langs, "query", self.transform, self.alpha)

    def encode(self, query: str, **kwargs: Any) -> np.ndarray:
        """One query -> float32 ``(dim,)``."""
        return self.encode_batch([query])[0]


__all__ = ["MlirkitDocumentEncoder", "MlirkitQueryEncoder"]
