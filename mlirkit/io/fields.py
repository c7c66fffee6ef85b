"""The checks of the values every reader takes from a record: identifiers and texts.

An **id** (document id, query id) is a non-empty string that is printable (``str.isprintable``: no
control, format, surrogate, private-use or unassigned characters) and contains no whitespace, so it
survives the TREC formats, the index's ``docid`` file and the ``langs`` file unchanged. A JSON integer
is accepted and converted to its decimal text (BEIR files often write ``"_id": 123``); a float, a
boolean, a list, an object or ``null`` is refused, never stringified.

A **text** is a string (a JSON number is refused, never stringified) that is valid Unicode (JSON
escapes can produce lone surrogates, which no UTF-8 file can hold). A text is **blank** when it has no
visible character: only whitespace, control and format characters (zero-width spaces, direction marks).

Languages follow :func:`mlirkit.base.langs.check_lang`. Every error starts with ``where``
(``file:line``, or a dataset id and record number).
"""
from __future__ import annotations

from mlirkit.base.errors import InputFormatError


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def check_id(value: object, where: object, what: str = "id") -> str:
    """``value`` as an id (see the module docstring), else :class:`~mlirkit.base.errors.InputFormatError` ``"{where}: invalid {what} ..."``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputFormatError(f"{where}: {what} must be a string or an integer, got {_type_name(value)}")
    if not value:
        raise InputFormatError(f"{where}: empty {what}")
    if " " in value or not value.isprintable():
        bad = next(c for c in value if c == " " or not c.isprintable())
        raise InputFormatError(f"{where}: invalid {what} {value[:80]!r}: ids must not contain whitespace or "
                           f"control characters (found {bad!r})")
    return value


def check_text(value: object, where: object, field: str = "text") -> str:
    """``value`` if it is a string of valid Unicode, else :class:`~mlirkit.base.errors.InputFormatError` naming ``field``."""
    if not isinstance(value, str):
        raise InputFormatError(f"{where}: field {field!r} must be a string, got {_type_name(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputFormatError(f"{where}: field {field!r} is not valid Unicode (lone surrogate at character "
                           f"{e.start})") from None
    return value


def is_blank(text: str) -> bool:
    """Whether ``text`` has no visible character (whitespace, control and format characters only: ``"  "``,
    ``"\\u200b"``, ``"\\u202e"``); what a query must not be."""
    import unicodedata

    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in text)


__all__ = ["check_id", "check_text", "is_blank"]
