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
:func:`canonical` also standardises the tag by BCP 47 and CLDR (``langcodes.standardize_tag`` with
macrolanguages): ISO 639-2/3 codes become their two-letter code (``eng`` -> ``en``, ``zho``/``cmn`` -> ``zh``,
``deu-DE`` -> ``de-DE``), deprecated codes their replacement (``iw`` -> ``he``).

:func:`lookup` is the one matching rule where two tags meet (a transform's vectors and a document's or
query's language; a query's language and the documents' in evaluation): RFC 4647 section 3.4 lookup on
canonical codes, i.e. the tag itself, else the tag truncated subtag by subtag from the end (``pt-BR`` ->
``pt``, ``zh-CN`` -> ``zh``, ``es-419`` -> ``es``), except that a script subtag is never dropped
(``zh-Hant`` does not fall back to ``zh``: the scripts are written differently). :func:`meets` is the
symmetric form (``zh`` meets ``zh-CN``; ``zh-CN`` and ``zh-TW`` do not meet), :func:`meeting_codes` the
mapping evaluation uses, and :func:`log_fallback` logs each fallback once per process
(``pt-BR documents use the pt vector``).
"""
from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Iterable, Sequence

from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

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
    code = ALIASES.get(code, code)
    return ALIASES.get(_standardize(code), _standardize(code))


@lru_cache(maxsize=4096)
def _standardize(code: str) -> str:
    """``code`` standardised by ``langcodes`` (BCP 47 + CLDR aliases, macrolanguages); unchanged where
    ``langcodes`` cannot parse it (mMARCO's ``dt``) or would give something that is no code here."""
    import langcodes

    try:
        out = langcodes.standardize_tag(code, macro=True)
    except (ValueError, LookupError):
        return code
    return out if is_lang_code(out) else code


def _is_script(subtag: str) -> bool:
    return len(subtag) == 4 and subtag.isalpha()


def lookup(tag: str | None, available: Iterable[str | None]) -> str | None:
    """The code of ``available`` that ``tag`` uses (RFC 4647 section 3.4 lookup on :func:`canonical` codes):
    the tag itself, else its truncations from the end (``pt-BR`` -> ``pt``; a singleton left at the end
    is dropped too), never dropping a script subtag (``zh-Hant`` -> nothing, ``zh-Hant-TW`` ->
    ``zh-Hant``); None for an unknown language or no match. Returns the element of ``available`` as given.

    ==============  ===================  =========
    tag             available            result
    ==============  ===================  =========
    ``pt-BR``       ``pt``               ``pt``
    ``eng``         ``en``               ``en``
    ``zh-Hant-TW``  ``zh-Hant``, ``zh``  ``zh-Hant``
    ``zh-Hant``     ``zh``               None
    ``pt``          ``pt-BR``            None (a vector of pt-BR is not one of pt; :func:`meets` is symmetric)
    ==============  ===================  =========
    """
    if is_unknown(tag):
        return None
    code = canonical(tag)
    if not is_lang_code(code):
        return None
    have: dict[str, str] = {}
    for a in available:
        if not is_unknown(a):
            have.setdefault(canonical(a) or "", a)  # type: ignore[arg-type]
    parts = code.split("-")  # type: ignore[union-attr]
    while parts:
        hit = have.get("-".join(parts))
        if hit is not None:
            return hit
        if len(parts) > 1 and _is_script(parts[-1]):
            return None
        parts.pop()
        while len(parts) > 1 and len(parts[-1]) == 1:
            parts.pop()
    return None


def meets(a: str | None, b: str | None) -> bool:
    """Whether tags ``a`` and ``b`` name the same language by :func:`lookup`, either way round (``zh`` and
    ``zh-CN``, ``eng`` and ``en``; not ``zh-CN`` and ``zh-TW``, not ``zh`` and ``zh-Hant``)."""
    return lookup(a, [b]) is not None or lookup(b, [a]) is not None


def meeting_codes(left: Iterable[str | None], right: Iterable[str | None]) -> dict[str, str]:
    """``{canonical code: canonical code it meets}`` for the known codes of each side that are not on the
    other side as they stand but meet one there by :func:`lookup` (``zh-CN`` queries and ``zh`` documents:
    ``{"zh-CN": "zh"}``; ``zh`` queries and ``zh-CN`` documents: ``{"zh-CN": "zh"}``): mapping both sides
    through it makes the codes that meet equal."""
    a = {canonical(x) for x in left if not is_unknown(x)}
    b = {canonical(x) for x in right if not is_unknown(x)}
    out: dict[str, str] = {}
    for mine, other in ((a, b), (b, a)):
        for code in sorted(c for c in mine - other if c):
            hit = lookup(code, other)
            if hit is not None and code not in out:
                out[code] = hit  # type: ignore[assignment]
    return out


_LOGGED: set[tuple[str, str, str]] = set()


def log_fallback(tag: str, used: str, what: str = "documents", noun: str = "vector") -> None:
    """Log once per process that ``tag`` meets ``used`` by :func:`lookup` and not as written:
    ``pt-BR documents use the pt vector``."""
    if canonical(tag) == canonical(used) and canonical(tag) == tag:
        return
    key = (tag, used, what)
    if key not in _LOGGED:
        _LOGGED.add(key)
        logger.info("%s %s use the %s %s", tag, what, used, noun)


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


def did_you_mean_lang(lang: str, present: list[str]) -> str:
    """``' (did you mean: ...?)'`` naming the codes of ``present`` close to ``lang`` (or ``''``)."""
    return _suggest(lang, present)


def _suggest(lang: str, present: list[str]) -> str:
    """' (did you mean: ...?)': the codes of the same language (case, alias, primary subtag: pt for pt-BR),
    else close spellings (``deu`` -> ``de``); two-letter typos (``fe``) are too ambiguous to guess."""
    import difflib

    def key(code: str) -> str:
        return (canonical(code.split("-")[0].lower()) or "")

    close = [p for p in present if key(p) == key(lang)] or difflib.get_close_matches(lang, present, n=3, cutoff=0.67)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


__all__ = ["ALIASES", "UNKNOWN", "bcp47_case", "canonical", "canonical_codes", "check_lang", "did_you_mean_lang",
           "is_known", "is_lang_code", "is_unknown", "log_fallback", "lookup", "meeting_codes", "meets",
           "normalize_unknown", "require_langs"]
