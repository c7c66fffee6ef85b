"""Language codes. A document or query of unknown language carries :data:`UNKNOWN` ("und", ISO 639-2).

:func:`is_unknown` is the one unknown-language rule: ``None``, ``""``, ``"und"`` and ``"unknown"``
(what the SHIFT authors' files write) are unknown; every other code is known.
"""
from __future__ import annotations

UNKNOWN = "und"
UNKNOWN_NAMES = frozenset({"", UNKNOWN, "unknown"})  # (and None)


def is_unknown(lang: str | None) -> bool:
    return lang is None or lang in UNKNOWN_NAMES


def is_known(lang: str | None) -> bool:
    return not is_unknown(lang)


def normalize_unknown(lang: str | None) -> str:
    """``lang``, or :data:`UNKNOWN` for any unknown name."""
    return UNKNOWN if is_unknown(lang) else lang
