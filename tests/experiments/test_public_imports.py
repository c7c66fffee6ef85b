"""``experiments/`` and ``perf/`` use mlirkit like any user: only public names (docs/architecture.md).

A name is public when the module imported from lists it in ``__all__`` (every public module declares one,
tests/test_public_surface.py), when no component of its module path starts with ``_``, when it is not a CLI's
internals (from the ``cli`` module of a ``python -m`` package only its ``main``, the CLI itself), and when a
function or class is imported from the module that defines it or a package that exports it (each public name
has one import path). The modules still without ``__all__`` (``PENDING_ALL``) are held to the underscore rule.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

from tests.test_public_surface import PENDING_ALL

ROOT = Path(__file__).resolve().parents[2]


def is_cli(module: str) -> bool:
    """``mlirkit.<package>.cli`` of a package run as ``python -m`` (not the CLI plumbing of ``mlirkit.base.cli``)."""
    package, _, last = module.rpartition(".")
    return last == "cli" and importlib.util.find_spec(f"{package}.__main__") is not None


def import_problems(path: Path) -> list[str]:
    """Every import of a non-public mlirkit name in the Python file ``path``, as ``file:line: what``."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("mlirkit") and any(p.startswith("_") for p in alias.name.split(".")):
                    problems.append(f"{path.name}:{node.lineno}: import {alias.name} (a private module)")
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                and node.module.split(".")[0] == "mlirkit"):
            continue
        module = node.module
        where = f"{path.name}:{node.lineno}: from {module} import"
        if any(p.startswith("_") for p in module.split(".")):
            problems.append(f"{where} ... (a private module)")
            continue
        mod = importlib.import_module(module)
        exported = getattr(mod, "__all__", None)
        if exported is None and f"{module.replace('.', '/')}.py" not in PENDING_ALL:
            problems.append(f"{where} ... ({module} declares no __all__)")
            continue
        for alias in node.names:
            name = alias.name
            if importlib.util.find_spec(f"{module}.{name}") if hasattr(mod, "__path__") else False:
                if name.startswith("_"):
                    problems.append(f"{where} {name} (a private module)")
                continue  # a submodule
            if name.startswith("_"):
                problems.append(f"{where} {name} (a private name)")
            elif is_cli(module) and name != "main":
                problems.append(f"{where} {name} (a CLI's internals: only its main is public)")
            elif exported is not None and name not in exported:
                problems.append(f"{where} {name} (not in {module}.__all__)")
            else:
                obj = getattr(mod, name)
                home = getattr(obj, "__module__", None) if inspect.isfunction(obj) or inspect.isclass(obj) else None
                if home is not None and home != module and not (exported and name in exported):
                    problems.append(f"{where} {name} (defined in {home}: import it from there)")
    return problems


@pytest.mark.parametrize("folder", ["experiments", "perf"])
def test_experiments_and_perf_import_only_public_mlirkit_names(folder):
    files = sorted((ROOT / folder).glob("*.py"))
    assert len(files) > 5
    problems = [p for f in files for p in import_problems(f)]
    assert not problems, "\n".join(problems)


def test_a_planted_private_import_is_found(tmp_path, monkeypatch):
    import mlirkit.io.topics

    planted = tmp_path / "planted.py"
    planted.write_text("from mlirkit.shift.cli import cmd_fit\n"
                       "from mlirkit.transforms.transform import _check_side\n"
                       "from mlirkit.benchmark.pipeline import fit_transforms\n"
                       "from mlirkit.search.query_shift import TIE_SLACK\n"
                       "import mlirkit._ir_datasets_hook\n"
                       "from mlirkit.io.topics import read_topics\n"
                       "from mlirkit.transforms import ShiftTransform, load_transform\n"
                       "from mlirkit.shift.cli import main\n"
                       "from mlirkit.benchmark.steps import fit_transforms\n")
    monkeypatch.delattr(mlirkit.io.topics, "__all__")  # a module that declares none
    problems = import_problems(planted)
    assert [p.split(": ", 1)[0] for p in problems] == [f"planted.py:{i}" for i in (1, 2, 3, 4, 5, 6)], problems
    assert "CLI's internals" in problems[0] and "private name" in problems[1]
    assert "not in mlirkit.benchmark.pipeline.__all__" in problems[2] and "__all__" in problems[3]
    assert "mlirkit.io.topics declares no __all__" in problems[5]
