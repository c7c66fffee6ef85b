from __future__ import annotations

import sys

from mlirkit.benchmark.cli import main
from mlirkit.base.cli import run_cli


def entry() -> None:
    sys.exit(run_cli(main))


if __name__ == "__main__":
    entry()
