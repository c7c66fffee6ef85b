"""Help texts of ``python -m mlirkit.train``'s per-field options, read from :class:`TrainConfig` itself.

Each field's ``#:`` comment in ``mlirkit/train/config.py`` is its help (one source for the code
and the CLI), else the comment heading its group (``# losses: coefficients and temperatures``);
the field's default is appended, since the options themselves default to None (a config file's
value, then the dataclass default, applies).
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from functools import lru_cache

_FIELD = re.compile(r"^\s+(\w+)\s*:[^=]*(?:=\s*(.*?))?(?:\s+#:\s*(.*))?$")
_GROUP = re.compile(r"^\s+#\s+(.+)$")


@lru_cache(maxsize=None)
def _comments(cls: type) -> dict[str, tuple[str, str]]:
    """field name -> (its ``#:`` comment, its group heading)."""
    out: dict[str, tuple[str, str]] = {}
    group = ""
    for line in inspect.getsource(cls).splitlines():
        if m := _GROUP.match(line):
            group = m.group(1).strip()
        elif m := _FIELD.match(line):
            out[m.group(1)] = ((m.group(3) or "").strip(), group)
    return out


def field_help(cls: type, field: dataclasses.Field) -> str:
    """The ``--help`` text of one config field: its comment (or group), then its default."""
    comment, group = _comments(cls).get(field.name, ("", ""))
    text = comment or (f"{group}: {field.name}" if group else field.name)
    if field.default is not dataclasses.MISSING:
        default = field.default
    elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        default = field.default_factory()  # type: ignore[misc]
    else:
        return text
    shown = "" if default == "" else default
    return f"{text} (default: {shown!r})" if shown == "" else f"{text} (default: {shown})"


__all__ = ["field_help"]
