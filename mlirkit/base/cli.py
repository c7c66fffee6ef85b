"""Shared CLI plumbing: logging set-up (only here, never in library code), the argument parser
every CLI builds (:class:`ArgumentParser`: plain text and defaults in ``--help``, an example each), ``--threads``
(:func:`~mlirkit.base.threads.set_threads`), the error boundary."""
from __future__ import annotations

import argparse
import logging
import re
import sys
import threading
from typing import Callable, Sequence

from mlirkit.base.errors import MlirkitError


class _TqdmHandler(logging.StreamHandler):
    """Log through tqdm.write so messages do not break progress bars."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from tqdm import tqdm

            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


def configure_logging(verbose: bool = False, quiet: bool = False) -> None:
    """Log mlirkit's own messages to stderr: INFO, DEBUG with ``verbose``, only warnings and errors
    with ``quiet``. Only the ``mlirkit`` logger is configured, never the root logger, so other
    libraries' INFO chatter (faiss's loader, ...) stays silent; their warnings still show (Python's
    last-resort handler). ``quiet`` also turns off transformers' and huggingface_hub's progress bars
    ("Loading weights") and transformers' advisory messages."""
    handler = _TqdmHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    package = logging.getLogger("mlirkit")
    for old in [h for h in package.handlers if isinstance(h, _TqdmHandler)]:
        package.removeHandler(old)
    package.addHandler(handler)
    package.propagate = False
    package.setLevel(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
    if quiet:
        _quiet_third_party()


def _quiet_third_party() -> None:
    """Progress bars and advisory logging of the Hugging Face libraries off (before or after their import)."""
    import os

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    if "huggingface_hub" in sys.modules:
        sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.S)


def plain_text(text: str | None) -> str | None:
    """A docstring's reStructuredText as the plain text of ``--help``: double backticks dropped, a role
    reduced to its target (``:func:`~a.b.f``` -> ``f``, ``:mod:`a.b``` -> ``a.b``), a closing ``::`` -> ``:``."""
    if not text:
        return text
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    text = _LITERAL.sub(r"\1", text)
    return re.sub(r"\s*::$", ":", text, flags=re.M)


def examples(*commands: str) -> str:
    """An epilog: ``example:`` (or ``examples:``) and the commands, indented as the options are."""
    return ("example:" if len(commands) == 1 else "examples:") + "".join(f"\n  {c}" for c in commands)


def with_examples(parser: argparse.ArgumentParser, examples_by_command: dict[str, str]) -> argparse.ArgumentParser:
    """``parser`` with the epilog ``examples_by_command[""]`` and each subcommand's its own (key: its name)."""
    parser.epilog = examples_by_command[""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name in examples_by_command:
                    sub.epilog = examples_by_command[name]
    return parser


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written (in plain text: :func:`plain_text`), and each option's default appended to its
    help as ``(default: X)`` unless the help already says its default or there is none (None, False, suppressed)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = plain_text(action.help) or ""
        default = action.default
        if ("default" in help_text.lower() or default is None or default is False
                or default is argparse.SUPPRESS or action.option_strings == []
                or isinstance(action, (argparse._HelpAction, argparse._VersionAction))):
            return help_text
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else default
        return f"{help_text} (default: {shown})".strip() if help_text else f"(default: {shown})"


class ArgumentParser(argparse.ArgumentParser):
    """The parser of every mlirkit CLI: :class:`HelpFormatter` (defaults shown), also in subcommands; no
    abbreviations (``--out`` is not ``--output``): a command accepts exactly the options its ``--help`` shows."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        self.description, self.epilog = plain_text(self.description), plain_text(self.epilog)
        return super().format_help()

    def error(self, message: str):
        """A usage error is one line on stderr, like every other mlirkit error, and exit code 2."""
        self.exit(2, f"error: {self.prog}: {message} (see --help)\n")


def cli_command(module: str, argv: Sequence[str] | None = None) -> list[str]:
    """The command line of the CLI ``module`` run with ``argv`` (``sys.argv[1:]`` when None), as a run's
    provenance records it: ``cli_command("mlirkit.search.cli", ["--hits", "5"])`` is ``["python", "-m",
    "mlirkit.search", "--hits", "5"]``. Each CLI that writes a run passes it to the writer
    (``write_run(..., provenance={"command": ...})``, :mod:`mlirkit.io.provenance`)."""
    module = module.removesuffix(".cli").removesuffix(".__main__")
    return ["python", "-m", module, *map(str, sys.argv[1:] if argv is None else argv)]


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)``; a :class:`MlirkitError` becomes ``error: <message>`` on stderr and exit 2.

    SIGTERM is turned into ``SystemExit(143)`` so that writers clean up their temporary outputs.
    """
    import signal

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return main(argv)
    except MlirkitError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # the environment (a permission, a full disk, no usable temporary directory): one line
        logging.getLogger(__name__).debug("OSError", exc_info=True)
        print(f"error: {os_error_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def os_error_line(e: OSError) -> str:
    """An ``OSError`` in one line: its reason and the file(s) it names; tempfile's "No usable temporary
    directory" gets the fix (``TMPDIR``)."""
    reason = e.strerror or str(e).splitlines()[0] if str(e) else type(e).__name__
    files = " -> ".join(str(f) for f in (e.filename, e.filename2) if f is not None)
    hint = " (set TMPDIR to a writable directory)" if "temporary directory" in str(e) else ""
    return f"{files}: {reason}{hint}" if files else f"{reason}{hint}"


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)


__all__ = ["ArgumentParser", "cli_command", "configure_logging", "examples", "plain_text", "run_cli",
           "with_examples"]
