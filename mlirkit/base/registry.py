"""A name -> object registry that refuses duplicates and answers unknown names with close matches."""
from __future__ import annotations

import difflib
from typing import Callable, Generic, Iterator, TypeVar

from mlirkit.base.errors import MlirkitError

T = TypeVar("T")


class UnknownNameError(MlirkitError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def did_you_mean(name: str, choices: list[str]) -> str:
    """' (did you mean: a, b?)' or '' when nothing is close."""
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


class Registry(Generic[T]):
    """Registry of named objects of one kind (encoder classes, transforms, ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, obj: T | None = None) -> Callable[[T], T] | T:
        """``registry.register("hf", HFEncoder)`` or as a decorator ``@registry.register("hf")``."""
        if obj is None:
            def decorator(o: T) -> T:
                self._add(name, o)
                return o
            return decorator
        self._add(name, obj)
        return obj

    def _add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}{did_you_mean(name, self.names())}; "
                f"known: {', '.join(self.names())}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)


__all__ = ["Registry", "UnknownNameError", "did_you_mean"]
