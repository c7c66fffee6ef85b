"""Language codes. A document or query of unknown language carries :data:`UNKNOWN` ("und", ISO 639-2).

:func:`is_unknown` is the one unknown-language rule: ``None``, ``""``, ``"und"`` and ``"unknown"``
(what the SHIFT authors' files write) are unknown; every other code is known.

:data:`ALIASES` is the one table of codes that name the same language in different sources; the
code on the right is canonical (ISO 639-1). mMARCO, ir_datasets and the SHIFT authors call Dutch
``dt``, MultiEuP and ISO call it ``nl``. Every place that compares or looks up
languages (transform parameters, evaluation) goes through :func:`canonical`, so a ``dt`` vector
applies to ``nl`` documents and a ``dt`` query is "the same language" as an ``nl`` document.
:func:`check_lang` is the one grammar of a language code, applied by every reader (``mlirkit.io``):
a BCP-47-like string :data:`LANG_RE`, i.e. a 2-3 letter primary code followed by optional
``-subtag`` parts of 2-8 letters or digits: ``en``, ``pt-BR``, ``zh-Hant``, ``sr-Latn-RS``, and
mMARCO's ``dt`` (Dutch). Case is kept as written. Lists, numbers, NaN, ``en_US`` (underscore),
``english`` (too long) and codes with spaces are refused; the unknown names are normalised to
:data:`UNKNOWN`.
"""
from __future__ import annotations

import re
from typing import Iterable

from mlirkit.base.errors import MlirkitError

UNKNOWN = "und"
UNKNOWN_NAMES = frozenset({"", UNKNOWN, "unknown"})  # (and None)
#: the grammar of a language code (see the module docstring)
LANG_RE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")

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
def is_lang_code(value: object) -> bool:
    """True when ``value`` is a string following :data:`LANG_RE` (the unknown names aside)."""
    return isinstance(value, str) and LANG_RE.fullmatch(value) is not None


def check_lang(value: object, where: object) -> str:
    """``value`` as a language code: an unknown name (or None) -> :data:`UNKNOWN`; a string following
    :data:`LANG_RE` -> itself; anything else (a list, a number, NaN, ``en_US``) raises
    :class:`MlirkitError` starting with ``where`` (e.g. ``corpus.jsonl:3``)."""
    if value is None or (isinstance(value, str) and value in UNKNOWN_NAMES):
        return UNKNOWN
    if is_lang_code(value):
        return value
    what = repr(value) if isinstance(value, str) else f"{type(value).__name__} {value!r}"[:80]
    raise MlirkitError(f"{where}: invalid language {what} (expected a code such as en, pt-BR or zh-Hant, "
                       "or 'und' for unknown)")


def require_langs(requested: Iterable[str], present: Iterable[str], what: str, where: str = "") -> None:
    """The one "unknown language asked for" error: every code of ``requested`` must be in ``present``,
    else :class:`MlirkitError` ``no <what> of xx (did you mean: ...?) <where> (languages present: ...)``
    (e.g. ``fit --langs`` naming a language the corpus or parallel data does not hold)."""
    have = sorted({str(p) for p in present if not is_unknown(p)})
    missing = [la for la in dict.fromkeys(requested) if la not in have]
    if missing:
        raise MlirkitError(f"no {what} of {', '.join(la + _suggest(la, have) for la in missing)}{where} "
                           f"(languages present: {', '.join(have) or 'none'})")


def _suggest(lang: str, present: list[str]) -> str:
    """' (did you mean: ...?)': the codes of the same language (case, alias, primary subtag: pt for pt-BR),
    else close spellings (``deu`` -> ``de``); two-letter typos (``fe``) are too ambiguous to guess."""
    import difflib

    def key(code: str) -> str:
        return (canonical(code.split("-")[0].lower()) or "")

    close = [p for p in present if key(p) == key(lang)] or difflib.get_close_matches(lang, present, n=3, cutoff=0.67)
    return f" (did you mean: {', '.join(close)}?)" if close else ""
