"""Library modules hold no argparse code: only the CLI modules (``cli.py``, ``options.py``, ``__main__.py``) build
parsers, so a library module's names are the Python API alone."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_MODULES = ("cli.py", "options.py", "__main__.py")
#: modules that are command-line code by role, with why
CLI_BY_ROLE = {"mlirkit/pyserini/wrapper.py": "the Pyserini wrappers' shared parser"}


def imports_argparse(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            return True
    return False


def test_no_library_module_imports_argparse():
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "mlirkit").rglob("*.py"))
                 if p.name not in CLI_MODULES and str(p.relative_to(ROOT)) not in CLI_BY_ROLE
                 and imports_argparse(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_a_planted_argparse_import_is_found():
    assert imports_argparse("import argparse\n") and imports_argparse("def f():\n    from argparse import Action\n")
    assert not imports_argparse("import argparse_like\n")
