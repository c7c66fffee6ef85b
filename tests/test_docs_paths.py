"""Every file of this repository that README.md or docs/*.md names or links exists (code, tests, scripts, docs, figures).

The test-layout consolidation moved tests into packages (``tests/test_dcl_losses.py`` became
``tests/train/test_losses.py``) and docs kept the old names; this keeps them true. Brace groups are
expanded (``mlirkit/transforms/{mining,alpha_guard}.py``). Generated outputs (``.json``, ``.trec``) are not
checked, and neither are files of other repositories that docs cite by their upstream path.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "experiments").rglob("*.md"))]
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
    assert seen > 50
    assert not missing, "docs name files that do not exist:\n" + "\n".join(missing)


def test_brace_groups_expand():
    assert _expand("mlirkit/transforms/{mining,alpha_guard}.py") == ["mlirkit/transforms/mining.py",
                                                                    "mlirkit/transforms/alpha_guard.py"]
