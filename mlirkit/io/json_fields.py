"""The fields of mlirkit's JSON metadata files, checked where they are read: one error naming file and field.

A *shape* describes a JSON value: :func:`value` (one or more JSON types, optionally a condition),
:func:`record` (an object with known fields; others allowed unless ``closed``), :func:`list_of`,
:func:`map_of` (an object used as a mapping) and :func:`either`. :func:`check_json` checks a parsed
document against a shape and raises ``MlirkitError("FILE: field 'index.path' must be a string, got 5")``
for the first field that does not fit, so a data file with a number where a list belongs is refused
where it enters instead of failing later with ``TypeError``. Used by the provenance sidecars
(:mod:`mlirkit.io.provenance`) and the BM25 index's ``meta.json`` (:mod:`mlirkit.lexical.layout`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from mlirkit.base.errors import MlirkitError

#: JSON type name -> (Python types, how a message says it)
_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "null": ((type(None),), "null"), "bool": ((bool,), "a boolean"), "int": ((int,), "an integer"),
    "number": ((int, float), "a number"), "string": ((str,), "a string"), "list": ((list,), "a list"),
    "object": ((dict,), "an object"),
}


class ShapeError(Exception):
    """A value that does not fit its shape: ``field`` (dotted, from the document's root) and ``expected``."""

    def __init__(self, field: str, expected: str, got: Any) -> None:
        super().__init__(field, expected)
        self.field, self.expected, self.got = field, expected, got


Shape = Callable[[Any, str], None]  # raises ShapeError(field, expected, value)


def _is(kind: str, v: Any) -> bool:
    types, _ = _TYPES[kind]
    if kind in ("int", "number") and isinstance(v, bool):
        return False
    if kind == "number" and isinstance(v, float) and not math.isfinite(v):
        return False
    return isinstance(v, types)


@dataclass(frozen=True)
class value:
    """A value of one of ``kinds`` (``"string"``, ``"int"``, ``"number"``, ``"bool"``, ``"null"``, ``"list"``,
    ``"object"``); ``test`` further restricts it (``what`` says how, e.g. ``"an integer >= 1"``)."""

    kinds: tuple[str, ...]
    test: Callable[[Any], bool] | None = None
    what: str | None = None

    def __init__(self, *kinds: str, test: Callable[[Any], bool] | None = None, what: str | None = None) -> None:
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "test", test)
        object.__setattr__(self, "what", what)

    def describe(self) -> str:
        return self.what or " or ".join(_TYPES[k][1] for k in self.kinds)

    def __call__(self, v: Any, field: str) -> None:
        if not any(_is(k, v) for k in self.kinds) or (self.test is not None and v is not None and not self.test(v)):
            raise ShapeError(field, self.describe(), v)


@dataclass(frozen=True)
class record:
    """An object whose ``fields`` have their shapes (``required`` ones must be there); other fields are
    allowed (a newer writer may add some) unless ``closed``."""

    fields: Mapping[str, Shape]
    required: Sequence[str] = ()
    closed: bool = False

    def __call__(self, v: Any, field: str) -> None:
        if not _is("object", v):
            raise ShapeError(field, "an object", v)
        for name in self.required:
            if name not in v:
                raise ShapeError(_join(field, name), "present", None)
        for name, item in v.items():
            shape = self.fields.get(name)
            if shape is not None:
                shape(item, _join(field, name))
            elif self.closed:
                raise ShapeError(_join(field, name), f"one of {', '.join(self.fields)} (no such field)", item)


@dataclass(frozen=True)
class list_of:
    """A list whose items have the shape ``item``."""

    item: Shape

    def __call__(self, v: Any, field: str) -> None:
        if not _is("list", v):
            raise ShapeError(field, "a list", v)
        for i, x in enumerate(v):
            self.item(x, f"{field}[{i}]")


@dataclass(frozen=True)
class map_of:
    """An object used as a mapping: every value has the shape ``item`` (keys are strings in JSON)."""

    item: Shape

    def __call__(self, v: Any, field: str) -> None:
        if not _is("object", v):
            raise ShapeError(field, "an object", v)
        for k, x in v.items():
            self.item(x, _join(field, k))


@dataclass(frozen=True)
class either:
    """One of ``shapes`` (tried in order; the message names the first's expectation)."""

    shapes: tuple[Shape, ...]

    def __init__(self, *shapes: Shape) -> None:
        object.__setattr__(self, "shapes", shapes)

    def __call__(self, v: Any, field: str) -> None:
        first: ShapeError | None = None
        for shape in self.shapes:
            try:
                shape(v, field)
                return
            except ShapeError as e:
                first = first or e
                if e.field != field and e.expected != "present":  # the value had this shape's type: its own
                    raise                                              # field is what is wrong
        assert first is not None
        raise first


def _join(field: str, name: str) -> str:
    return f"{field}.{name}" if field else str(name)


ANY: Shape = lambda v, field: None  # noqa: E731  (any JSON value)
STRING = value("string")
OPT_STRING = value("string", "null")
POSITIVE_INT = value("int", test=lambda v: v >= 1, what="an integer >= 1")
NON_NEGATIVE_INT = value("int", test=lambda v: v >= 0, what="an integer >= 0")
SHA256 = value("string", test=lambda v: len(v) == 64 and all(c in "0123456789abcdef" for c in v),
               what="a sha256 (64 hexadecimal digits)")
OPT_SHA256 = value("string", "null", test=lambda v: SHA256.test(v), what="a sha256 (64 hexadecimal digits) or null")


def check_json(file: object, document: Any, shape: Shape) -> Any:
    """``document`` if it has ``shape``, else ``MlirkitError("FILE: field 'a.b' must be ..., got ...")``."""
    try:
        shape(document, "")
    except ShapeError as e:
        if not e.field:
            raise MlirkitError(f"{file}: expected {e.expected}, got {_show(e.got)}") from None
        if e.expected == "present":
            raise MlirkitError(f"{file}: field {e.field!r} is missing") from None
        raise MlirkitError(f"{file}: field {e.field!r} must be {e.expected}, got {_show(e.got)}") from None
    return document


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def read_json_file(path: Any) -> Any:
    """A JSON file's document; unreadable, not UTF-8 or not JSON is one error naming the file."""
    import json
    from pathlib import Path

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise MlirkitError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise MlirkitError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise MlirkitError(f"{path}: not valid JSON ({str(e) or type(e).__name__})") from None


__all__ = ["ANY", "NON_NEGATIVE_INT", "OPT_SHA256", "OPT_STRING", "POSITIVE_INT", "SHA256", "STRING", "Shape",
           "ShapeError", "check_json", "either", "list_of", "map_of", "read_json_file", "record", "value"]
