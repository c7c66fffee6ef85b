"""Language codes. A document or query of unknown language carries :data:`UNKNOWN` ("und", ISO 639-2).

:func:`is_unknown` is the one unknown-language rule: ``None``, ``""``, ``"und"`` and ``"unknown"``
(what the SHIFT authors' files write; any case) are unknown; every other code is known.

:func:`check_lang` is the one grammar of a language code and the one canonicaliser, applied wherever a
code enters mlirkit (every reader of ``mlirkit.io``, index ``langs`` files, transform files and the
SHIFT authors' ``.pt`` keys, parallel text, CLI options, alpha overrides): a BCP-47-like string
:data:`LANG_RE`, i.e. a 2-3 letter primary code followed by optional ``-subtag`` parts of 2-8 letters
or digits (``en``, ``pt-BR``, ``zh-Hant``, ``sr-Latn-RS``, ``es-419``, mMARCO's ``dt``), returned in
the BCP 47 case (:func:`bcp47_case`, RFC 5646 section 2.1.1: BCP 47 tags are case-insensitive, so
``EN``, ``En`` and ``en`` are one language and come out as ``en``; ``zh-hans`` as ``zh-Hans``; ``PT-br``
as ``pt-BR``). After it, codes compare exactly as strings. Lists, numbers, NaN, ``en_US``
(underscore), ``english``/``English`` (names, not codes), codes with spaces or a trailing newline are
refused with the place they came from; the unknown names become :data:`UNKNOWN` (or are refused
where a known language is required, ``known=True``: a transform's languages).

:data:`ALIASES` is the one table of codes that name the same language in different sources; the
code on the right is canonical (ISO 639-1). mMARCO, ir_datasets and the SHIFT authors call Dutch
``dt``, MultiEuP and ISO call it ``nl``. Readers keep the code a source
writes (in its BCP 47 case); every place that compares or looks languages up (transform parameters,
alpha overrides, evaluation) goes through :func:`canonical` (case and alias), so a ``dt`` vector
applies to ``nl`` documents and a ``dt`` query is "the same language" as an ``nl`` document.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from mlirkit.base.errors import MlirkitError

UNKNOWN = "und"
UNKNOWN_NAMES = frozenset({"", UNKNOWN, "unknown"})  # (and None; compared in lower case)
#: the grammar of a language code (see the module docstring)
LANG_RE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")

#: alias -> canonical code (one table, used everywhere)
ALIASES: dict[str, str] = {"dt": "nl"}


def is_unknown(lang: str | None) -> bool:
    return lang is None or (isinstance(lang, str) and lang.lower() in UNKNOWN_NAMES)


def is_known(lang: str | None) -> bool:
    return not is_unknown(lang)


def normalize_unknown(lang: str | None) -> str:
    """``lang``, or :data:`UNKNOWN` for any unknown name."""
    return UNKNOWN if is_unknown(lang) else lang


def bcp47_case(code: str) -> str:
    """``code`` in the case BCP 47 recommends (RFC 5646, 2.1.1): the primary subtag lower case, later
    2-letter subtags (regions) upper case, later 4-letter subtags (scripts) title case, every other
    subtag lower case: ``EN`` -> ``en``, ``zh-hans`` -> ``zh-Hans``, ``pt-br`` -> ``pt-BR``,
    ``SR-LATN-RS`` -> ``sr-Latn-RS``, ``es-419`` unchanged. (:data:`LANG_RE` has no singleton
    subtags, after which the rule would keep lower case.)"""
    first, *rest = code.split("-")
    out = [first.lower()]
    for part in rest:
        if len(part) == 2 and part.isalpha():
            out.append(part.upper())
        elif len(part) == 4 and part.isalpha():
            out.append(part.title())
        else:
            out.append(part.lower())
    return "-".join(out)


@lru_cache(maxsize=4096)
def canonical(lang: str | None) -> str | None:
    """The code to compare and look ``lang`` up by: its BCP 47 case and the alias table (``DT`` -> ``nl``,
    ``zh-hans`` -> ``zh-Hans``, ``UNKNOWN`` -> ``und``); ``None`` and ``""`` unchanged, and so is a string
    that is no code at all (readers refuse those where they enter, :func:`check_lang`)."""
    if not lang:
        return lang
    if lang.lower() in UNKNOWN_NAMES:
        return UNKNOWN
    if not is_lang_code(lang):
        return lang
    code = bcp47_case(lang)
    return ALIASES.get(code, code)


def is_lang_code(value: object) -> bool:
    """True when ``value`` is a string following :data:`LANG_RE` (the unknown names aside)."""
    return isinstance(value, str) and LANG_RE.fullmatch(value) is not None


def check_lang(value: object, where: object, *, known: bool = False) -> str:
    """``value`` as a language code in its BCP 47 case (:func:`bcp47_case`): an unknown name (or None) ->
    :data:`UNKNOWN`; a string following :data:`LANG_RE` -> its canonical case; anything else (a list, a
    number, NaN, ``en_US``, ``english``, ``"de\\n"``) raises :class:`MlirkitError` starting with ``where``
    (e.g. ``corpus.jsonl:3``). With ``known=True`` the unknown names (``""``, ``und``, None) are refused
    too: where a language must be named (a transform's languages, a source language)."""
    if value is None or (isinstance(value, str) and value.lower() in UNKNOWN_NAMES):
        if known:
            raise MlirkitError(f"{where}: {'missing' if not value else 'unknown'} language {value!r} "
                               "(expected a code such as en, pt-BR or zh-Hant)")
        return UNKNOWN
    if is_lang_code(value):
        return bcp47_case(value)  # type: ignore[arg-type]
    what = repr(value) if isinstance(value, str) else f"{type(value).__name__} {value!r}"[:80]
    also = "" if known else ", or 'und' for unknown"
    raise MlirkitError(f"{where}: invalid language {what[:80]} (expected a code such as en, pt-BR or zh-Hant{also})")


def canonical_codes(codes: Sequence[object], path: object) -> list[str]:
    """``codes`` (one per line of ``path``, e.g. an index's ``langs`` file) through :func:`check_lang`,
    each distinct value checked once; a bad one is an error naming ``path:line``."""
    seen: dict[object, str] = {}
    out = []
    for line, code in enumerate(codes, start=1):
        if code not in seen:
            seen[code] = check_lang(code, f"{path}:{line}")
        out.append(seen[code])
    return out


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
