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


def positive_int(text: str) -> int:
    """argparse ``type=`` of every count option (``--hits``, ``--chunk-size``, ``--batch-size``, ``--k``,
    shard counts, ...): an integer >= 1, else argparse's error (exit 2) naming the option."""
    return _bounded_int(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """argparse ``type=`` of an index or a number that may be 0 (``--shard-id``, ``--digits``, ``--threads`` where 0 keeps the default): an integer >= 0."""
    return _bounded_int(text, 0, "an integer >= 0")


def _bounded_int(text: str, minimum: int, what: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value
