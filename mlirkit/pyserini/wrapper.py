"""Run one of Pyserini's own CLIs (``python -m pyserini.encode``, ``pyserini.search.faiss``) with mlirkit's
encoder classes selectable.

Pyserini's CLIs declare ``--encoder-class`` with a hard-coded ``choices`` list inside their
``if __name__ == "__main__"`` block. :func:`run_pyserini_module` runs that block (``runpy``) with its own
``import argparse`` answered by :func:`argparse_with_choices`, a copy of the module whose parsers append
mlirkit's class names to exactly that option's list; argparse itself is not changed, and everything else
is Pyserini's code, arguments and behaviour. The other patches are undone when the run ends.

The wrapper's own options (``--encoder-option``, ``--transform``, ...) are taken out of the command line
first (:func:`split_wrapper_args`); the rest goes to Pyserini untouched. ``-h`` prints the wrapper's help
without importing Pyserini (which starts Java); ``--pyserini-help`` runs Pyserini's own ``-h``.
"""
from __future__ import annotations

import argparse
import builtins
import logging
import runpy
import sys
import types
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import add_verbosity_args
from mlirkit.encoders.options import OPTION, parse_encoder_options

logger = logging.getLogger(__name__)

ENCODER_CLASS_OPTION = "--encoder-class"
HELP_FLAGS = frozenset({"-h", "--help"})
PYSERINI_HELP_HEADING = "Pyserini's own options (passed through):"
PYSERINI_HELP = "--pyserini-help"


def wrapper_parser(prog: str, usage: str, description: str, pyserini_module: str, encoder_options: str,
                   example: str) -> tuple[argparse.ArgumentParser, argparse._ArgumentGroup]:
    """The parser of a wrapper's own options (``-h``, ``--pyserini-help``, ``--encoder-option``) and the group to
    add further ones to; ``encoder_options`` lists the option keys the wrapper's encoders take (help text),
    ``example`` is the epilog (:func:`mlirkit.base.cli.examples`)."""
    epilog = (f"{example}\n\nEvery other argument goes to python -m {pyserini_module} unchanged; {PYSERINI_HELP} "
              f"lists them\n(it starts Pyserini and Java: about half a minute).")
    p = argparse.ArgumentParser(prog=prog, add_help=False, allow_abbrev=False, usage=usage, description=description,
                                epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group(f"wrapper options (everything else is passed to {pyserini_module})")
    g.add_argument("-h", "--help", "--wrapper-help", dest="wrapper_help", action="store_true",
                   help="show this help and exit (Pyserini is not started)")
    g.add_argument(PYSERINI_HELP, action="store_true",
                   help=f"show the help of python -m {pyserini_module} and exit")
    g.add_argument(OPTION, action="append", default=[], metavar="KEY=VALUE",
                   help=f"mlirkit encoder option ({encoder_options}); repeatable")
    add_verbosity_args(g, "only mlirkit's warnings and errors (Pyserini's own output unchanged)")
    return p, g


def split_wrapper_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None,
                       shared_options: Sequence[tuple[str, str, Any]]
                       ) -> tuple[argparse.Namespace, list[str], dict[str, Any]] | None:
    """Parse the wrapper's options out of ``argv`` (default ``sys.argv[1:]``).

    Returns ``(wrapper args, Pyserini's arguments in order, mlirkit encoder options)``, or None after
    printing the wrapper's help; ``--pyserini-help`` becomes a ``-h`` at the end of Pyserini's arguments, so
    Pyserini prints its own help. The encoder options are ``--encoder-option KEY=VALUE`` plus the
    Pyserini options that mlirkit encoders also take, ``shared_options`` = ``(flag, option key, type)``
    (e.g. ``("--max-length", "max_length", int)``), read without removing them from Pyserini's arguments.
    """
    args, rest = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if args.wrapper_help:
        parser.print_help()
        return None
    if args.pyserini_help:
        print(PYSERINI_HELP_HEADING, flush=True)
        rest = [*rest, "-h"]
    options = parse_encoder_options(args.encoder_option)
    for flag, key, type_ in shared_options:
        value = peek_option(rest, flag, type_)
        if value is not None:
            options.setdefault(key, value)
    return args, rest, options


def peek_option(argv: Sequence[str], option: str, type_: Any = str) -> Any:
    """The value of ``option`` in ``argv`` (``--x V`` or ``--x=V``; the last one wins), or None; argv is not changed."""
    value = None
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(option + "="):
            value = arg[len(option) + 1:]
    if value is None:
        return None
    try:
        return type_(value)
    except ValueError:
        raise MlirkitError(f"{option} {value!r}: expected {getattr(type_, '__name__', type_)}") from None


def argparse_with_choices(option: str, names: Sequence[str]) -> types.ModuleType:
    """A copy of the ``argparse`` module whose parsers (and their subparsers) append ``names`` to the
    choices of an ``add_argument(option, choices=[...])`` call; the real module is left as it is."""

    class ArgumentParser(argparse.ArgumentParser):
        def add_argument(self, *args, **kwargs):
            if option in args and kwargs.get("choices") is not None:
                kwargs["choices"] = list(kwargs["choices"]) + [n for n in names if n not in kwargs["choices"]]
            return super().add_argument(*args, **kwargs)

    module = types.ModuleType("argparse", argparse.__doc__)
    vars(module).update({k: v for k, v in vars(argparse).items() if not k.startswith("__")})
    module.ArgumentParser = ArgumentParser
    return module


def builtins_importing(replacements: dict[str, types.ModuleType]) -> dict[str, Any]:
    """The builtins of a module run with ``runpy`` whose ``import NAME`` gives ``replacements[NAME]`` (only
    that module's own code sees them; ``sys.modules`` is not touched)."""
    real_import = builtins.__import__

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A001, N807
        if level == 0 and name in replacements:
            return replacements[name]
        return real_import(name, globals, locals, fromlist, level)

    return {**vars(builtins), "__import__": __import__}


@contextmanager
def patched_attr(obj: Any, name: str, value: Any) -> Iterator[None]:
    """Set ``obj.name = value`` for the duration of the block."""
    original = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, original)


@contextmanager
def patched_argv(argv: Sequence[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = list(argv)
    try:
        yield
    finally:
        sys.argv = saved


def run_pyserini_module(module: str, argv: Sequence[str], class_names: Sequence[str],
                        patches: Sequence[tuple[Any, str, Any]] = ()) -> int:
    """Run ``python -m <module> <argv>`` in this process with mlirkit's classes selectable; returns its exit code.

    Pyserini's own encoder classes load models without saying ``trust_remote_code``; transformers would then ask
    on the terminal whether to run a model's own code: that question is switched off (answered no), so a model
    directory's code runs only when mlirkit is told to (:mod:`mlirkit.encoders.model_code`)."""
    import transformers.dynamic_module_utils as dynamic_modules

    with ExitStack() as stack:
        stack.enter_context(patched_attr(dynamic_modules, "TIME_OUT_REMOTE_CODE", 0))
        for obj, name, value in patches:
            stack.enter_context(patched_attr(obj, name, value))
        stack.enter_context(patched_argv([f"python -m {module}", *argv]))
        try:
            own_builtins = builtins_importing({"argparse": argparse_with_choices(ENCODER_CLASS_OPTION, class_names)})
            runpy.run_module(module, init_globals={"__builtins__": own_builtins}, run_name="__main__",
                             alter_sys=False)
        except SystemExit as e:  # argparse errors, Pyserini's exit()
            if e.code is None or isinstance(e.code, int):
                return int(e.code or 0)
            print(e.code, file=sys.stderr)
            return 1
        except MlirkitError:
            raise  # mlirkit's own (encoder, transform): run_cli prints it, exit 2
        except Exception as e:  # Pyserini's own failure: one line, exit 1 (the traceback with --verbose logging)
            logger.debug("%s failed", module, exc_info=True)
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print(f"error: {module}: {type(e).__name__}{': ' + first if first else ''}", file=sys.stderr)
            return 1
    return 0


__all__ = ["HELP_FLAGS", "argparse_with_choices", "peek_option", "run_pyserini_module", "split_wrapper_args",
           "wrapper_parser"]
