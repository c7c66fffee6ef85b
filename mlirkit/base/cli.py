"""Shared CLI plumbing: logging set-up (only here, never in library code), ``--threads``
(:func:`~mlirkit.base.threads.set_threads`), the error boundary."""
from __future__ import annotations

import logging
import sys
import threading
from typing import Callable, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.threads import set_threads  # noqa: F401 (the CLIs' --threads)


class _TqdmHandler(logging.StreamHandler):
    """Log through tqdm.write so messages do not break progress bars."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from tqdm import tqdm

            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


def configure_logging(verbose: bool = False) -> None:
    handler = _TqdmHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)


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
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)
