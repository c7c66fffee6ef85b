"""Add mlirkit's encoders to Pyserini's encoder maps, reachable by explicit class name only.

Pyserini looks encoder classes up in ``pyserini.encode.document_encoder_class_map`` and
``query_encoder_class_map``. When ``--encoder-class`` is not given it guesses, taking the first key that
is a *substring* of the model name; an mlirkit key there would capture every model path containing
``mlirkit``. :func:`register` therefore replaces both maps with an :class:`ExplicitClassMap`: Pyserini's
entries unchanged (iteration and guessing see only those), mlirkit's entries returned for an exact
``map[name]`` lookup only.

Class names (derived from :data:`mlirkit.encoders.ENCODER_CLASSES`):

- ``mlirkit``: resolve ``--encoder`` as ``mlirkit.encode --encoder`` does (preset such as
  ``multilingual-e5-small-q4`` or ``usem``, a DCL directory, else a Hugging Face id/path);
- ``mlirkit-hf``, ``mlirkit-usem``, ``mlirkit-dcl``, ...: that mlirkit encoder class.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from mlirkit.encoders import ENCODER_CLASSES
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.transform import LanguageTransform
from mlirkit.base.registry import UnknownNameError, did_you_mean
from mlirkit.base.option_names import option

logger = logging.getLogger(__name__)

PREFIX = "mlirkit"


def class_names() -> list[str]:
    """The ``--encoder-class`` names mlirkit adds to Pyserini: ``mlirkit``, ``mlirkit-<class>``..."""
    return [PREFIX] + [f"{PREFIX}-{name}" for name in ENCODER_CLASSES.names()]


def mlirkit_encoder_class(name: str) -> str | None:
    """``"mlirkit"`` -> None (automatic resolution), ``"mlirkit-hf"`` -> ``"hf"``; unknown names refused."""
    names = class_names()
    if name not in names:
        raise UnknownNameError(f"unknown mlirkit encoder class {name!r}{did_you_mean(name, names)}; "
                               f"known: {', '.join(names)}")
    return None if name == PREFIX else name[len(PREFIX) + 1:]


@dataclass
class EncoderSettings:
    """What the mlirkit classes are built with beyond Pyserini's own arguments.

    ``options``: mlirkit encoder options (``max_length``, ``doc_prefix``, ``batch_size``, ...);
    ``transform``/``alpha``/``strict``/``force``: a language transform for documents (and for queries
    when it has a query side, with ``query_lang``); ``index_encoder``: the encoder fingerprint an index
    was built with, which query encoders must match (``force`` searches anyway, warned).
    """

    options: dict[str, Any] = field(default_factory=dict)
    transform: LanguageTransform | None = None
    alpha: Alpha = field(default_factory=Alpha)
    strict: bool = False
    force: bool = False
    query_lang: str | None = None
    query_langs: dict[str, str] | None = None  # query text -> language (per-query languages of the topics)
    index_encoder: dict[str, Any] | None = None
    query_encoder: Any = None  # the mlirkit query encoder built for Pyserini (its fingerprint goes into provenance)


class DocumentEncoderFactory:
    """What Pyserini's ``init_encoder`` calls as ``factory(model_name=..., device=...)``."""

    def __init__(self, name: str, settings: EncoderSettings,
                 on_create: Callable[[Any], None] | None = None) -> None:
        self.name = name
        self.encoder_class = mlirkit_encoder_class(name)
        self.settings = settings
        self.on_create = on_create

    def __call__(self, model_name: str, device: Any = None, **kwargs: Any):
        from mlirkit.pyserini.encoders import MlirkitDocumentEncoder

        s = self.settings
        # Pyserini always passes a device (default cuda:0 -> cpu); only an explicit options["device"] counts
        encoder = MlirkitDocumentEncoder(model_name, None, encoder_class=self.encoder_class, options=s.options, **kwargs)
        if s.transform is not None:
            from mlirkit.pyserini.shifted import ShiftedDocumentEncoder

            encoder = ShiftedDocumentEncoder(encoder, s.transform, s.alpha, strict=s.strict, force=s.force)
        if self.on_create is not None:
            self.on_create(encoder)
        return encoder

    def __repr__(self) -> str:
        return f"DocumentEncoderFactory({self.name!r})"


class QueryEncoderFactory:
    """What Pyserini's ``init_query_encoder`` calls as ``factory(encoder_dir=..., tokenizer_name=..., ...)``."""

    def __init__(self, name: str, settings: EncoderSettings) -> None:
        self.name = name
        self.encoder_class = mlirkit_encoder_class(name)
        self.settings = settings

    def __call__(self, encoder_dir: str | None = None, device: Any = None, **kwargs: Any):
        from mlirkit.pyserini.encoders import MlirkitQueryEncoder

        s = self.settings
        transform = s.transform
        if isinstance(transform, (str, os.PathLike)):
            from mlirkit.transforms.io import load_transform

            transform = load_transform(transform)
        encoder = MlirkitQueryEncoder(encoder_dir, encoder_class=self.encoder_class, options=s.options,
                                      query_lang=s.query_lang, transform=transform, alpha=s.alpha,
                                      query_langs=s.query_langs, **kwargs)
        if s.index_encoder is not None:
            from mlirkit.encoders.base import check_same_encoder
            from mlirkit.base.errors import MlirkitError

            try:
                check_same_encoder(s.index_encoder, encoder.encoder.fingerprint, "the index")
            except MlirkitError as e:
                if not s.force:
                    raise MlirkitError(f"{e} (use {option('force', True)} to search anyway)") from None
                logger.warning("%s; searching anyway (%s)", e, option("force", True))
        s.query_encoder = encoder.encoder
        return encoder

    def __repr__(self) -> str:
        return f"QueryEncoderFactory({self.name!r})"


class ExplicitClassMap(dict):
    """Pyserini's class map plus entries that only an exact lookup reaches (see module docstring)."""

    def __init__(self, base: dict, explicit: dict[str, Any] | None = None) -> None:
        super().__init__(base)
        self.explicit: dict[str, Any] = dict(explicit or {})

    def __missing__(self, key: str) -> Any:
        try:
            return self.explicit[key]
        except KeyError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or key in self.explicit


def register(settings: EncoderSettings | None = None, *,
             on_document_encoder: Callable[[Any], None] | None = None) -> list[str]:
    """Start the JVM, import ``pyserini.encode`` and add mlirkit's classes to its maps; returns the names.

    Idempotent: calling it again replaces the mlirkit entries (e.g. with other ``settings``).
    """
    from mlirkit.base.jvm import boot_jvm

    boot_jvm()
    import pyserini.encode as pe

    settings = settings if settings is not None else EncoderSettings()
    names = class_names()
    docs = {name: DocumentEncoderFactory(name, settings, on_document_encoder) for name in names}
    queries = {name: QueryEncoderFactory(name, settings) for name in names}
    for attr, entries in (("document_encoder_class_map", docs), ("query_encoder_class_map", queries)):
        current = getattr(pe, attr)
        clash = sorted(set(entries) & set(dict.keys(current)))
        if clash:
            raise ValueError(f"Pyserini already has encoder classes named {clash}")
        if isinstance(current, ExplicitClassMap):
            current.explicit.update(entries)
        else:
            setattr(pe, attr, ExplicitClassMap(current, entries))
    logger.debug("registered Pyserini encoder classes %s", names)
    return names


def registered() -> bool:
    """True when :func:`register` has run in this process (without importing Pyserini)."""
    import sys

    pe = sys.modules.get("pyserini.encode")
    return pe is not None and isinstance(getattr(pe, "document_encoder_class_map", None), ExplicitClassMap)


__all__ = ["EncoderSettings", "ExplicitClassMap", "QueryEncoderFactory", "class_names", "mlirkit_encoder_class",
           "register", "registered"]
