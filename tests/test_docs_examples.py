"""Every fenced code block in README.md and docs/ says what it is, in a visible line right above it
(rendered in italics, indented as the block):

- ``_Run as written by tests/test_x.py._`` (or ``... tests/test_x.py (what it swaps)._``): a test runs
  the block as written (it extracts the block from the page; the named test file names the page);
- ``_Sketch: REASON._``: not run by the tests, and REASON says why (placeholder names such as
  ``my-corpus.jsonl``, an output or a file excerpt, a command that needs the full data or hours).

``pytest -s`` on this file prints every block run and every sketch (with its reason).
"""
from __future__ import annotations

import re
from pathlib import Path


from tests.helpers import REPO

MARKER = re.compile(r"_(Sketch: [^_]+|Run as written by (tests/\S+\.py)(?: \([^_)]*\))?)\._")
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(page: Path) -> list[tuple[int, str | None, str | None]]:
    """``(line, kind, test)`` of every fenced block of ``page``: kind ``"sketch"``, ``"run"`` or None
    (no marker), and the test file that runs it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, inside = [], False
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("```"):
            continue
        if not inside:
            above = lines[i - 1].strip() if i else ""
            m = MARKER.fullmatch(above)
            out.append((i + 1, None if m is None else "sketch" if m.group(2) is None else "run",
                        None if m is None else m.group(2)))
        inside = not inside
    return out


def _name(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


def test_every_block_is_run_or_a_sketch():
    unmarked = [f"{_name(p)}:{line}" for p in PAGES for line, kind, _ in blocks(p) if kind is None]
    assert not unmarked, f"blocks without a marker (see this file's docstring): {unmarked}"


def test_each_run_marker_names_a_test_that_reads_its_page():
    for page in PAGES:
        for line, kind, test in blocks(page):
            if kind == "run":
                path = REPO / test  # type: ignore[operator]
                assert path.is_file(), f"{_name(page)}:{line}: no {test}"
                text = path.read_text(encoding="utf-8")
                assert page.name in text, f"{_name(page)}:{line}: {test} does not read {page.name}"


def test_list_of_blocks(capsys):
    """The list (printed with ``-s``): every block run and every sketch."""
    listed = [(f"{_name(page)}:{line}", kind, test) for page in PAGES for line, kind, test in blocks(page)]
    for where, kind, test in listed:
        print(f"{where}: {'run by ' + str(test) if kind == 'run' else kind}")
    runs = {test for _, kind, test in listed if kind == "run"}
    assert runs == {"tests/test_docs_python.py", "tests/test_readme_quickstart.py", "tests/shift/test_docs_recipe.py"}
    assert len(listed) > 100 and {kind for _, kind, _ in listed} == {"run", "sketch"}
