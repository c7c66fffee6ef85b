"""Every file of this repository that README.md, docs/*.md, the experiments' notes, or a docstring or
top-level string of the code names or links exists (code, tests, scripts, docs, figures); no document
outside the repository is cited; the product and its reference docs carry no session history.

Moves leave old names behind (``tests/test_dcl_losses.py`` became ``tests/train/test_losses.py``); this
keeps them true. Brace groups are expanded (``mlirkit/transforms/{mining,alpha_guard}.py``). Generated
outputs (``.json``, ``.trec``) are not checked, and neither are files of other repositories that docs
cite by their upstream path.
"""
from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "experiments").rglob("*.md"))]
CODE_DIRS = ("mlirkit", "experiments", "perf", "scripts")
#: the reference: what a user reads (the notebook in experiments/notes keeps its history)
REFERENCE_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH = re.compile(r"(?<![\w/.-])((?:mlirkit|tests|experiments|perf|scripts|docs)/[\w/.{},-]*\.(?:py|sh|md))")
UPSTREAM = {  # named as the files of another repository (docs say whose)
    "scripts/prepare_data/build_benchmarks.py",  # the SHIFT authors' (github.com/yjoonjang/SHIFT)
}


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")  # markdown links relative to the document


def _expand(path: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [p for part in m.group(1).split(",") for p in _expand(path[:m.start()] + part + path[m.end():])]


def code_texts() -> list[tuple[Path, int, str]]:
    """``(file, line, text)`` of every docstring (module, class, function) and every top-level string
    constant (``NAME = "..."``) of the project's Python files."""
    out = []
    for d in CODE_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node, clean=False)
                    if doc:
                        out.append((path, getattr(node, "lineno", 1), doc))
            for node in tree.body:
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                        and isinstance(node.value.value, str):
                    out.append((path, node.lineno, node.value.value))
    return out


def texts() -> list[tuple[str, str]]:
    """``(where, line)`` of every line of the docs and of the code's docstrings and top-level strings."""
    out = [(f"{doc.relative_to(ROOT)}:{n}", line) for doc in DOC_FILES
           for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)]
    out += [(f"{path.relative_to(ROOT)}:{start + i} (docstring or top-level string)", line)
            for path, start, text in code_texts() for i, line in enumerate(text.splitlines())]
    return out


def test_code_texts_read_docstrings_and_top_level_names():
    found = {(p.name, t.split("\n")[0][:40]) for p, _, t in code_texts()}
    assert ("shift_transform.py", "SHIFT: subtract a relative language vect") in found  # a module docstring
    assert any(p.name == "defaults.py" and t == "mined"
               for p, _, t in code_texts())  # transforms/defaults.py: DEFAULT_INDEX_STATISTICS = "mined"
    assert len(found) > 500


def test_named_repository_files_exist():
    missing, seen = [], 0
    for doc in DOC_FILES:
        for lineno, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for raw in PATH.findall(line):
                for path in _expand(raw):
                    seen += 1
                    if path not in UPSTREAM and not (ROOT / path).exists():
                        missing.append(f"{doc.relative_to(ROOT)}:{lineno}: {path}")
            for target in LINK.findall(line):
                if "://" in target or target.startswith("mailto:"):
                    continue
                seen += 1
                if not (doc.parent / target).exists():
                    missing.append(f"{doc.relative_to(ROOT)}:{lineno}: link {target}")
    for path, start, text in code_texts():
        for i, line in enumerate(text.splitlines()):
            for raw in PATH.findall(line):
                for named in _expand(raw):
                    seen += 1
                    if named not in UPSTREAM and not (ROOT / named).exists():
                        missing.append(f"{path.relative_to(ROOT)}:{start + i}: {named}")
    assert seen > 50
    assert not missing, "docs and docstrings name files that do not exist:\n" + "\n".join(missing)


#: Markdown files that commands in the docs write (reports), not documents: the runs' report (``report.md``), a
#: script's rewritten result (``RESULT.md``), and every ``--report .../NAME.md`` of a documented command
#: (shell variables as wildcards: ``--report $O/pairs-$G.md`` writes ``pairs-auto.md``)
WRITTEN = {"report.md", "RESULT.md"}


def _written_patterns() -> set[str]:
    import os

    names = set(WRITTEN)
    for doc in DOC_FILES:
        for arg in re.findall(r"--(?:output|report)\s+(\S+\.md)\b", doc.read_text(encoding="utf-8")):
            names.add(re.sub(r"\$\{?\w+\}?", "*", os.path.basename(arg)))
    return names


def test_no_document_outside_the_repository_is_cited():
    """A ``NAME.md`` named in the docs or the code's docstrings is one of this repository's documents (not a
    design brief or format notes that live beside a checkout)."""
    from fnmatch import fnmatch

    ours = {p.name for p in ROOT.rglob("*.md") if not {".venv", "work"} & set(p.relative_to(ROOT).parts)}
    written = _written_patterns()
    for cited in ("DESIGN.md", "formats.md"):  # what docstrings cited before docs/design.md: still refused
        assert cited not in ours and not any(fnmatch(cited, w) for w in written)
    outside = [f"{where}: {name}" for where, line in texts()
               for name in re.findall(r"(?<![\w/$-])(?:\.\./)*[\w-]+\.md\b", line)
               if name.startswith("../") or (name not in ours and not any(fnmatch(name, w) for w in written))]
    assert not outside, "documents outside the repository cited:\n" + "\n".join(outside)


#: session history: issue numbers and the rounds of an investigation (the notes in experiments/notes keep them)
HISTORY = re.compile(r"\bissues? ?#?\d+\b|\bissue-\d+|\b(?:first|second|third|fourth|fifth|sixth) round\b"
                     r"|\brounds? (?:one|two|three|four|five)\b", re.I)


def _our_commits(tokens: set[str]) -> set[str]:
    """The hex tokens that name a commit of this repository."""
    if not tokens:
        return set()
    proc = subprocess.run(["git", "cat-file", "--batch-check"], input="".join(f"{t}^{{commit}}\n" for t in sorted(tokens)),
                          cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    return {t for t, line in zip(sorted(tokens), proc.stdout.splitlines()) if not line.endswith("missing")}


def test_no_issue_numbers_rounds_or_commit_hashes_in_the_product_and_reference_docs():
    lines = [(f"{doc.relative_to(ROOT)}:{n}", line) for doc in REFERENCE_DOCS
             for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)]
    lines += [(f"{path.relative_to(ROOT)}:{n}", line) for path in sorted((ROOT / "mlirkit").rglob("*.py"))
              for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    history = [f"{where}: {line.strip()[:100]}" for where, line in lines if HISTORY.search(line)]
    assert not history, "session history in the product or its reference docs:\n" + "\n".join(history)
    hexes = {t for _, line in lines for t in re.findall(r"\b[0-9a-f]{7,40}\b", line) if re.search(r"[a-f]", t)
             and re.search(r"\d", t)}
    ours = _our_commits(hexes)
    cited = [f"{where}: {t}" for where, line in lines for t in ours if re.search(rf"\b{t}\b", line)]
    assert not cited, "commit hashes of this repository in the product or its reference docs:\n" + "\n".join(cited)


def test_the_history_check_bites():
    assert HISTORY.search("measured in issue 18") and HISTORY.search("the second round's vectors")
    assert HISTORY.search("rounds one to three") and not HISTORY.search("every round of the mining loop")
    head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if not head:
        pytest.skip("not a git checkout")
    assert _our_commits({head, "36f973d6"}) == {head}  # another repository's commit is not ours


def test_brace_groups_expand():
    assert _expand("mlirkit/transforms/{mining,alpha_guard}.py") == ["mlirkit/transforms/mining.py",
                                                                    "mlirkit/transforms/alpha_guard.py"]
