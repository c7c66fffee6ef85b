"""No Python file of the project uses a name it never defines (pyflakes' undefined-name check).

Measurement scripts are not all imported by the test suite, so a missing import there (``perf/encode_speed.py``
lost its ``import gzip`` in a refactoring and its documented ``--queries`` run crashed) is only found by
a static check. String annotations marked ``# noqa: F821`` (lazy ``torch`` types) are allowed.
"""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_no_undefined_names():
    pyflakes_api = pytest.importorskip("pyflakes.api")
    from pyflakes import messages

    class Collect:
        def __init__(self) -> None:
            self.found: list[str] = []

        def unexpectedError(self, filename, msg):  # noqa: N802 (pyflakes' reporter interface)
            self.found.append(f"{filename}: {msg}")

        def syntaxError(self, filename, msg, lineno, offset, text):  # noqa: N802
            self.found.append(f"{filename}:{lineno}: {msg}")

        def flake(self, message):
            if isinstance(message, messages.UndefinedName):
                line = Path(message.filename).read_text(encoding="utf-8").splitlines()[message.lineno - 1]
                if "noqa: F821" not in line:
                    self.found.append(str(message))

    report = Collect()
    files = [p for d in ("mlirkit", "experiments", "perf", "scripts", "tests") for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 100
    for path in files:
        pyflakes_api.checkPath(str(path), report)
    assert not report.found, "\n".join(report.found)
