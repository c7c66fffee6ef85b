"""The one ``KEY=VALUE`` parser of the command lines (``--encoder-option``, ``--index-param``, ``--alpha``, ...)."""
from __future__ import annotations

from typing import Iterable

from mlirkit.base.errors import MlirkitError


def split_key_value(item: str, option: str, *, expected: str = "KEY=VALUE") -> tuple[str, str]:
    """``"k=v"`` -> ``("k", "v")`` (the key stripped, the value as given: it may be a prefix ending in a space);
    a missing ``=`` or key is an error naming ``option``."""
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise MlirkitError(f"{option} {item!r} is not {expected}")
    return key, value


def parse_key_values(items: Iterable[str] | None, option: str, *, expected: str = "KEY=VALUE",
                     unique: bool = False) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; a later key wins unless ``unique`` (then it is an error)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, value = split_key_value(item, option, expected=expected)
        if unique and key in out:
            raise MlirkitError(f"{option}: {key!r} given twice")
        out[key] = value
    return out
