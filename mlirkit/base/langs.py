"""Language codes. A document or query of unknown language carries :data:`UNKNOWN` ("und", ISO 639-2).

:func:`is_unknown` is the one unknown-language rule: ``None``, ``""``, ``"und"`` and ``"unknown"``
(what the SHIFT authors' files write) are unknown; every other code is known.

:data:`ALIASES` is the one table of codes that name the same language in different sources; the
code on the right is canonical (ISO 639-1). mMARCO, ir_datasets and the SHIFT authors call Dutch
``dt`` (formats.md, section 0), MultiEuP and ISO call it ``nl``. Every place that compares or looks up
languages (transform parameters, evaluation) goes through :func:`canonical`, so a ``dt`` vector
applies to ``nl`` documents and a ``dt`` query is "the same language" as an ``nl`` document.
"""
from __future__ import annotations

UNKNOWN = "und"
UNKNOWN_NAMES = frozenset({"", UNKNOWN, "unknown"})  # (and None)

#: alias -> canonical code (one table, used everywhere)
ALIASES: dict[str, str] = {"dt": "nl"}


def is_unknown(lang: str | None) -> bool:
    return lang is None or lang in UNKNOWN_NAMES


def is_known(lang: str | None) -> bool:
    return not is_unknown(lang)


def normalize_unknown(lang: str | None) -> str:
    """``lang``, or :data:`UNKNOWN` for any unknown name."""
    return UNKNOWN if is_unknown(lang) else lang


def canonical(lang: str | None) -> str | None:
    """The canonical code of ``lang`` (``dt`` -> ``nl``); other codes, ``None`` and ``""`` unchanged."""
    if not lang:
        return lang
    return ALIASES.get(lang, lang)
