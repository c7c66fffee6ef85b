"""How an error message names an option: the flag inside a CLI, the keyword argument in Python.

Library code writes ``f"{option('max_pairs')} must be at least 1"``: a user of ``python -m mlirkit.shift``
reads ``--max-pairs must be at least 1``, a Python caller ``max_pairs must be at least 1``. A CLI's
``main`` is decorated with :func:`cli_main`; everything else speaks Python.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

_in_cli = False  # process-wide, not per thread: a CLI's worker threads speak its language too

F = TypeVar("F", bound=Callable[..., Any])


def option(keyword: str, value: Any = None, *, flag: str | None = None) -> str:
    """``keyword`` as the user typed it: ``--max-pairs`` / ``max_pairs``; with a ``value``,
    ``--index-type flat`` / ``index_type='flat'`` (``True``: ``--force`` / ``force=True``). ``flag``
    overrides the flag derived from the keyword (``query_langs`` -> ``--query-lang``)."""
    if _in_cli:
        name = flag or "--" + keyword.replace("_", "-")
        return name if value is None or value is True else f"{name} {value}"
    return keyword if value is None else f"{keyword}={value!r}"


def in_cli() -> bool:
    """Whether messages are for a command line (a remedy that differs in more than names)."""
    return _in_cli


@contextmanager
def cli_names() -> Iterator[None]:
    """Within the block, :func:`option` gives command-line flags."""
    global _in_cli
    before, _in_cli = _in_cli, True
    try:
        yield
    finally:
        _in_cli = before


def cli_main(main: F) -> F:
    """Decorate a CLI's ``main(argv)``: its messages name flags, however it is called."""
    @functools.wraps(main)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with cli_names():
            return main(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


__all__ = ["cli_main", "cli_names", "in_cli", "option"]
