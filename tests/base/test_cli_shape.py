"""Every CLI package has the same shape: ``cli.py`` with ``build_parser()`` and ``main(argv)``, and the
same 4-statement ``__main__.py`` whose ``entry`` is the console script of setup.cfg."""
from __future__ import annotations

import configparser
import importlib
from pathlib import Path

import pytest

import mlirkit

ROOT = Path(mlirkit.__file__).parent
MAINS = sorted(ROOT.rglob("__main__.py"))
#: CLIs without options of their own: every argument goes to the wrapped Pyserini module
PASS_THROUGH = {"mlirkit.pyserini.trec_eval"}

MAIN_TEMPLATE = '''from __future__ import annotations

import sys

from mlirkit.base.cli import run_cli
from {package}.cli import main


def entry() -> None:
    sys.exit(run_cli(main))


if __name__ == "__main__":
    entry()
'''


def _package(path: Path) -> str:
    return ".".join(("mlirkit", *path.parent.relative_to(ROOT).parts))


def test_there_are_cli_packages():
    assert len(MAINS) >= 10


@pytest.mark.parametrize("path", MAINS, ids=_package)
def test_main_module_has_the_one_shape(path):
    assert path.read_text(encoding="utf-8") == MAIN_TEMPLATE.format(package=_package(path))


@pytest.mark.parametrize("path", MAINS, ids=_package)
def test_cli_module_has_build_parser_and_main(path):
    cli = importlib.import_module(f"{_package(path)}.cli")
    assert callable(cli.main)
    if _package(path) in PASS_THROUGH:
        return
    assert callable(cli.build_parser)
    assert cli.build_parser().prog.startswith("python -m mlirkit.")
    assert not hasattr(cli, "_parser")


def test_console_scripts_are_the_entry_functions():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT.parent / "setup.cfg", encoding="utf-8")
    scripts = [line.split("=", 1)[1].strip() for line in cfg["options.entry_points"]["console_scripts"].splitlines()
               if line.strip()]
    assert sorted(scripts) == sorted(f"{_package(p)}.__main__:entry" for p in MAINS)


def test_one_logger_name():
    """``logger = logging.getLogger(__name__)``, never ``log``."""
    offenders = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                 if "\nlog = logging.getLogger" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_no_progress_flag_is_quiet_everywhere():
    """``--quiet`` everywhere, ``--no-progress`` nowhere."""
    from mlirkit.train.cli import build_parser

    p = build_parser()
    assert p.parse_args(["--quiet"]).quiet
    with pytest.raises(SystemExit):
        p.parse_args(["--no-progress"])
    for path in MAINS:
        source = (path.parent / "cli.py").read_text(encoding="utf-8")
        assert "--no-progress" not in source, path
