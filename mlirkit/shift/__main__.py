from __future__ import annotations

import sys

from mlirkit.base.cli import run_cli
from mlirkit.shift.cli import main


def entry() -> None:
    sys.exit(run_cli(main))


if __name__ == "__main__":
    entry()
