"""The layer contracts of setup.cfg hold (imports inside functions included), and mlirkit's ids reach ir_datasets."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_layer_contracts_hold():
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.fail("lint-imports (import-linter) is not installed: pip install -e '.[test]'")
    proc = subprocess.run([str(exe), "--no-cache", "--no-logo", "--config", str(ROOT / "setup.cfg")], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout
    # the product never imports the repository's experiments/ and perf/; no import cycle inside a package
    # (every contract is there and kept)
    assert "mlirkit imports neither experiments nor perf KEPT" in proc.stdout
    assert "mlirkit layers (top to bottom) KEPT" in proc.stdout
    assert "no import cycle between sibling modules or packages of mlirkit KEPT" in proc.stdout


def test_the_acyclic_contract_finds_a_cycle(tmp_path):
    """A planted cycle (two modules of one package importing each other, one inside a function) breaks it."""
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from toy import b\n")
    (pkg / "b.py").write_text("def f():\n    from toy import a\n")
    (pkg / "c.py").write_text("from toy import a\n")
    (tmp_path / "setup.cfg").write_text("[importlinter]\nroot_package = toy\n\n[importlinter:contract:acyclic]\n"
                                        "name = acyclic\ntype = acyclic_siblings\nancestors =\n    toy\n")
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(exe), "--no-cache", "--no-logo", "--config", str(tmp_path / "setup.cfg")], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert proc.returncode == 1 and "acyclic BROKEN" in proc.stdout and "No cycles are allowed in toy" in proc.stdout


def test_layers_cover_every_subpackage():
    """Every package and module directly under mlirkit/ is named in the layers contract."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    layers = cfg["importlinter:contract:layers"]["layers"]
    named = {name.strip() for line in layers.splitlines() for name in line.split("|") if name.strip()}
    present = {p.stem if p.is_file() else p.name for p in (ROOT / "mlirkit").iterdir()
               if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}
    assert present - named == set()
    assert named <= present


@pytest.mark.parametrize("order", ["mlirkit, ir_datasets", "ir_datasets, mlirkit"])
def test_register_datasets_makes_ids_visible_to_ir_datasets(order, tmp_path):
    """``import mlirkit`` alone registers nothing (ir_datasets has no plugin discovery); one call does, in
    either import order."""
    code = (f"import sys; import {order}\n"
            "try:\n    ir_datasets.load('mlirkit/ddtp/en')\nexcept KeyError:\n    print('unknown')\n"
            "mlirkit.register_datasets()\n"
            "ds = ir_datasets.load('mlirkit/ddtp/en')\n"
            "print(ds.docs_count() > 1000, ds.queries_lang())")
    env = {"PATH": "", "HOME": str(tmp_path), "IR_DATASETS_HOME": str(tmp_path / "irds"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["unknown", "True", "en"]


def test_mlirkits_readers_take_its_ids_without_a_registration_call(tmp_path):
    """The readers register the ids before the first id lookup (``mk.read_topics("mlirkit/...")`` as it is)."""
    code = ("import mlirkit as mk\n"
            "from mlirkit.io.qrels import read_qrels\n"
            "print(len(mk.read_topics('mlirkit/ddtp/en/dev')) > 10, len(read_qrels('mlirkit/ddtp/en/dev')) > 10)")
    env = {"PATH": "", "HOME": str(tmp_path), "IR_DATASETS_HOME": str(tmp_path / "irds"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_import_mlirkit_does_not_import_ir_datasets():
    out = subprocess.run([sys.executable, "-c", "import sys, mlirkit; print('ir_datasets' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_machine_paths_in_tracked_files():
    """Code defaults, tests, docs and recorded commands name no developer machine's absolute paths
    (placeholders such as $SHARED_DATA, $MLIRKIT_CACHE or relative work/ directories instead)."""
    import re

    files = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.sh", "*.cfg", "*.json", "*.txt"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    pattern = re.compile(r"(^|[^A-Za-z0-9_.$])/(work|home|tmp|root)/")
    hits = [f"{f}:{n}" for f in files if (ROOT / f).is_file()
            for n, line in enumerate((ROOT / f).read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if pattern.search(line)]
    assert hits == []


#: the modules that may take an ``argparse.Namespace``: a CLI, its ``__main__``, the CLI option groups
CLI_MODULES = ("cli.py", "options.py", "__main__.py")


def namespace_takers(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: function`` (``file`` relative to ``root``) for every function of ``path`` with a parameter
    annotated ``argparse.Namespace``."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if any(a.annotation is not None and "Namespace" in ast.unparse(a.annotation)
                   and "SimpleNamespace" not in ast.unparse(a.annotation) for a in args):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {node.name}")
    return out


def test_no_product_function_outside_a_cli_module_takes_a_namespace(tmp_path):
    found = [f for p in sorted((ROOT / "mlirkit").rglob("*.py")) if p.name not in CLI_MODULES
             for f in namespace_takers(p)]
    assert found == []
    planted = tmp_path / "mlirkit" / "base" / "planted.py"  # a planted taker (in tmp_path: never in the source tree)
    planted.parent.mkdir(parents=True)
    planted.write_text("import argparse\n\ndef f(x: int, args: argparse.Namespace) -> None: ...\n")
    assert namespace_takers(planted, tmp_path) == ["mlirkit/base/planted.py:3: f"]
