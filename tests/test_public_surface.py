"""mlirkit's public surface is written down: every module lists what users and other layers may use in
``__all__`` (or is private by name, ``_io.py``, ``__main__.py``), every name listed exists, one module imports
from another only what that one lists, and library modules hold no argparse code (only the CLI modules,
``cli.py``, ``options.py``, ``__main__.py``, build parsers). The modules are read with ``ast``; only a
package whose ``__all__`` is computed, or that makes names on first use (a module ``__getattr__``), is
imported to read it."""
from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
CLI_MODULES = ("cli.py", "options.py", "__main__.py")
#: modules that are command-line code by role, with why
CLI_BY_ROLE = {"mlirkit/pyserini/wrapper.py": "the Pyserini wrappers' shared parser"}
#: modules still without ``__all__`` (none now). The list only shrinks (a listed module that declares one fails the test)
PENDING_ALL: frozenset[str] = frozenset()
COMPUTED = object()  # an ``__all__`` that is not a literal list (``sorted(EXPORTS)``)


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


def module_name(path: Path, root: Path = ROOT) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def is_private(path: Path, root: Path = ROOT) -> bool:
    """Private by name: a component of the module's path starts with ``_`` (a package's ``__init__`` is the
    package itself, so it is public when the package is)."""
    parts = path.relative_to(root).with_suffix("").parts
    return any(p.startswith("_") for p in parts if p != "__init__")


def declared_all(tree: ast.Module):
    """The module's ``__all__``: a list of names, :data:`COMPUTED`, or None when it declares none."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:
                return COMPUTED
    return None


def bound_names(body: list[ast.stmt]) -> set[str]:
    """The names a module's top level binds (definitions, assignments, imports; through ``if``/``try``)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            names |= bound_names(node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
                                 + [s for h in getattr(node, "handlers", []) for s in h.body])
    return names


@functools.lru_cache(maxsize=None)
def exports(path: Path, root: Path = ROOT) -> tuple[list[str] | None, set[str] | None]:
    """``(__all__, the names the module has)``; a computed ``__all__`` or a module ``__getattr__`` is read from
    the imported module (None for the names: every listed one is looked up there)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    listed, bound = declared_all(tree), bound_names(tree.body)
    if listed is COMPUTED or "__getattr__" in bound:
        module = importlib.import_module(module_name(path, root))
        return list(module.__all__), None
    return listed, bound


def surface_problems(package: Path, pending: frozenset[str] = frozenset()) -> list[str]:
    """Every public module of ``package`` without ``__all__``, every ``__all__`` naming what its module does not
    have (or naming a name twice), and every entry of ``pending`` that is no longer pending."""
    root, problems = package.parent, []
    for path in sorted(package.rglob("*.py")):
        where = str(path.relative_to(root))
        if is_private(path, root):
            continue
        listed, bound = exports(path, root)
        if listed is None:
            if where not in pending:
                problems.append(f"{where}: no __all__ (list the public names, or make the module private: _name.py)")
            continue
        if where in pending:
            problems.append(f"{where}: declares __all__ now; remove it from PENDING_ALL")
        for name in sorted({n for n in listed if listed.count(n) > 1}):
            problems.append(f"{where}: __all__ lists {name!r} twice")
        module = None if bound is not None else importlib.import_module(module_name(path, root))
        for name in listed:
            if not (name in bound if bound is not None else hasattr(module, name)):
                problems.append(f"{where}: __all__ lists {name!r}, which the module does not define or import")
    problems += [f"{p}: listed in PENDING_ALL but not there" for p in sorted(pending) if not (root / p).is_file()]
    return problems


def test_every_module_lists_its_public_names_and_only_names_it_has():
    problems = surface_problems(ROOT / "mlirkit", PENDING_ALL)
    assert not problems, "\n".join(problems)


def test_a_planted_module_without_all_or_with_a_missing_name_is_found(tmp_path):
    package = tmp_path / "planted"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('"""A package."""\n__all__ = ["Thing"]\nfrom planted.sub.things import Thing\n')
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "things.py").write_text('class Thing: ...\nif True:\n    OTHER = 1\n__all__ = ["Thing", "OTHER"]\n')
    (package / "sub" / "loose.py").write_text("def helper(): ...\n")
    (package / "sub" / "_private.py").write_text("def helper(): ...\n")
    (package / "sub" / "__main__.py").write_text("print('run')\n")
    (package / "typo.py").write_text('def read(): ...\n__all__ = ["read", "raed", "read"]\n')
    problems = surface_problems(package)
    assert problems == ["planted/sub/__init__.py: no __all__ (list the public names, or make the module private: _name.py)",
                        "planted/sub/loose.py: no __all__ (list the public names, or make the module private: _name.py)",
                        "planted/typo.py: __all__ lists 'read' twice",
                        "planted/typo.py: __all__ lists 'raed', which the module does not define or import"], problems
    assert surface_problems(package, frozenset({"planted/sub/loose.py", "planted/sub/__init__.py"}))[0] == \
        "planted/typo.py: __all__ lists 'read' twice"
    assert surface_problems(package, frozenset({"planted/typo.py"}))[2] == \
        "planted/typo.py: declares __all__ now; remove it from PENDING_ALL"


def cross_imports(source: str, me: str, where: str, root: Path = ROOT) -> list[str]:
    """Each ``from mlirkit.X import name`` in the module ``me`` (its ``source``) of a name that ``X`` (another
    module, one that declares ``__all__``) does not list, as ``where:line: X.name``; importing a submodule is
    always allowed."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                and node.module.split(".")[0] == "mlirkit" and node.module != me):
            continue
        path = root.joinpath(*node.module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        listed, _ = exports(path, root)
        for alias in node.names if listed is not None else ():
            sub = path.parent / alias.name
            if alias.name not in listed and not (path.name == "__init__.py" and (sub.is_dir() or sub.with_suffix(".py").is_file())):
                problems.append(f"{where}:{node.lineno}: {node.module}.{alias.name}")
    return problems


def test_modules_import_from_each_other_only_what_the_other_lists():
    problems = [p for path in sorted((ROOT / "mlirkit").rglob("*.py"))
                for p in cross_imports(path.read_text(encoding="utf-8"), module_name(path), str(path.relative_to(ROOT)))]
    assert not problems, "not in the imported module's __all__:\n" + "\n".join(problems)


def test_a_planted_import_of_an_unlisted_name_is_found():
    source = "from mlirkit.io.trec import write_run, _format_score\nfrom mlirkit.io import trec\n"
    assert cross_imports(source, "mlirkit.planted", "planted.py") == ["planted.py:1: mlirkit.io.trec._format_score"]


def module_file(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def table_names(markdown: str) -> dict[str, list[str]]:
    """The rows of docs/architecture.md's public-surface tables: module -> the plain names (no dots) its second
    column shows (for ``mlirkit``, those before its parenthesis)."""
    section = markdown.split("## The public surface", 1)[1].split("\n## ", 1)[0]
    shown = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            first, names = line.split(" | ")[:2]
            module = first.strip("| `")
            module = module if module == "mlirkit" else f"mlirkit.{module}"
            shown[module] = re.findall(r"`(\w+)`", names.split("(")[0] if module == "mlirkit" else names)
    return shown


def test_the_architecture_tables_show_exported_names_and_every_package():
    """docs/architecture.md's public-surface tables: a row per package, and each name they show is in the
    package's (for the benchmark's steps, the module's) ``__all__``."""
    shown = table_names((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    packages = {module_name(p) for p in (ROOT / "mlirkit").glob("*/__init__.py")} | {"mlirkit"}
    assert packages <= set(shown), sorted(packages - set(shown))
    missing = [f"{m}.{n}" for m, names in shown.items() for n in names if n not in exports(module_file(m))[0]]
    assert not missing, missing
    planted = "## The public surface\n| `eval` | `evaluate`, `evaluat` | metrics |\n## Next\n"
    assert table_names(planted) == {"mlirkit.eval": ["evaluate", "evaluat"]}
