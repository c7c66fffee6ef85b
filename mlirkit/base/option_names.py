"""How an error message names an option: the flag inside a CLI, the keyword argument in Python.

Library code writes ``f"{option('max_pairs')} must be at least 1"``: a user of ``python -m mlirkit.shift``
reads ``--max-pairs must be at least 1``, a Python caller ``max_pairs must be at least 1``. A CLI's
``main`` is decorated with :func:`cli_main`; everything else speaks Python. Which one is a context
variable, so a CLI run in one thread leaves a Python caller in another alone; a worker thread a CLI
starts speaks its language when it runs in the CLI's context (``contextvars.copy_context().run``).
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, TypeVar

_in_cli: ContextVar[bool] = ContextVar("mlirkit_in_cli", default=False)

F = TypeVar("F", bound=Callable[..., Any])


def option(keyword: str, value: Any = None, *, flag: str | None = None, within: str | None = None) -> str:
    """``keyword`` as the user typed it: ``--max-pairs`` / ``max_pairs``; with a ``value``,
    ``--index-type flat`` / ``index_type='flat'`` (``True``: ``--force`` / ``force=True``). ``flag``
    overrides the flag derived from the keyword (``query_lang`` -> ``--default-lang``); ``within`` names the
    ``KEY=VALUE`` option that carries it on the command line (``--encoder-option quantize=int8``)."""
    if _in_cli.get() and within:
        shown = "VALUE" if value is None else str(value).lower() if isinstance(value, bool) else value
        return f"{within} {keyword}={shown}"
    if _in_cli.get():
        name = flag or "--" + keyword.replace("_", "-")
        return name if value is None or value is True else f"{name} {value}"
    return keyword if value is None else f"{keyword}={value!r}"


def in_cli() -> bool:
    """Whether messages are for a command line (a remedy that differs in more than names)."""
    return _in_cli.get()


@contextmanager
def cli_names() -> Iterator[None]:
    """Within the block (in this thread or task), :func:`option` gives command-line flags."""
    token = _in_cli.set(True)
    try:
        yield
    finally:
        _in_cli.reset(token)


def cli_main(main: F) -> F:
    """Decorate a CLI's ``main(argv)``: its messages name flags, however it is called."""
    @functools.wraps(main)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with cli_names():
            return main(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


__all__ = ["cli_main", "cli_names", "in_cli", "option"]
