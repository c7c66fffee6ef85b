"""The README's Quick start block and its Python block, extracted from README.md and run verbatim (so they can
never drift).

They run in a temporary directory with the interpreter running the tests first on ``PATH`` and this
checkout first on ``PYTHONPATH``, on a slice of the corpus and few translation pairs
(``MLIRKIT_QUICKSTART_DOCS``, ``MLIRKIT_QUICKSTART_PAIRS``, which the block itself honours) and the real
offline e5-small with the backend a user gets (not the suite's ``MLIRKIT_BACKEND=torch``), so they are ``slow``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

QUICKSTART_HEADING = "## Quick start (CLIs)"
PYTHON_HEADING = "## Python"


def first_block(heading: str, language: str, readme: Path = REPO / "README.md") -> str:
    """The first ```language block after ``heading``."""
    text = readme.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(text, start)
    assert match is not None, f"no ```{language} block after {heading!r}"
    return match.group(1)


def quickstart_block() -> str:
    return first_block(QUICKSTART_HEADING, "bash")


def test_block_shape():
    """The block encodes once (keeping the raw vectors), fits from pairs, writes both runs it evaluates, one
    of them shifted; the questions' language is one variable, the runs are named by it, and every step that
    writes replaces an earlier run's output (so the block runs twice, and in another language)."""
    block = quickstart_block()
    assert block.count("mlirkit.encode") == 1 and "--save-embeddings" in block
    assert "mlirkit.shift fit" in block and "--query-shift" in block
    assert "${MLIRKIT_QUICKSTART_DOCS:-" in block and '--max-docs "$N"' in block
    assert "${MLIRKIT_QUICKSTART_PAIRS:-" in block and '--max-pairs "$P"' in block
    for run in re.findall(r"--runs ((?:runs/\S+\s*)+)", block)[0].split():
        assert f"--output {run}" in block and "$L" in run, f"{run} is evaluated but no step writes it"
    commands = re.sub(r"\\\n\s*", " ", block).splitlines()
    for command in (c for c in commands if c.startswith("python -m") and "--output" in c):
        assert "--overwrite" in command, command
    assert [line.split("#")[0].strip() for line in commands if "zh" in line.split("#")[0]] == [
        "L=zh", next(c for c in commands if "--langs" in c).split("#")[0].strip()]


def _run_block(block: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("bash") or "/bin/bash", "-c", "set -euo pipefail\n" + block], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1800)


def _env(docs: int, pairs: int) -> dict:
    return {**os.environ, "MLIRKIT_QUICKSTART_DOCS": str(docs), "MLIRKIT_QUICKSTART_PAIRS": str(pairs),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "PYTHONPATH": os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}


@pytest.mark.slow
@pytest.mark.timeout(2400)  # ~200 s of CPU; a shared 2-core machine took over 900 s of wall clock for half of it
def test_quickstart_python_block_and_a_second_run_in_german(tmp_path, monkeypatch, users_backend):
    """The block as written (once), the Python block after it in the same directory, then the newcomer's second
    try: the block again over its own outputs with every ``zh`` replaced by ``de`` (the ``--langs`` list then
    names ``de`` twice). Both pass, and the German runs are German questions' runs beside the Chinese ones."""
    ranx = pytest.importorskip("ranx")
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    block = quickstart_block()
    proc = _run_block(block, tmp_path, _env(300, 20))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tlr@20" in proc.stdout and "| a | base " in proc.stdout and "| b | shift " in proc.stdout
    runs = [ranx.Run.from_file(str(tmp_path / "runs" / f"{name}-zh.trec"), kind="trec") for name in ("base", "shift")]
    assert [r.name for r in runs] == ["base-zh", "shift-zh"]
    # 300 paragraphs: the 240 Arabic and 60 German ones; their two shifts reorder the rankings
    rankings = [{q: sorted(docs, key=docs.get, reverse=True)[:20] for q, docs in r.to_dict().items()} for r in runs]
    assert rankings[0] != rankings[1]
    qrels = ranx.Qrels(read_qrels("mlirkit/xquad-r/zh"))
    # the Python block, in the same directory, after the Quick start
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(first_block(PYTHON_HEADING, "python"), "README.md (python block)", "exec"), namespace)
    result = namespace["result"]
    # its searches (Python, k=100) give the figures of the CLI's runs (1000 hits), unshifted and shifted
    for name, run in zip(("base", "shift"), runs):
        assert result.value(name, "ndcg@20") == pytest.approx(ranx.evaluate(qrels, run, "ndcg@20"), abs=1e-6)
    assert ranx.evaluate(qrels, namespace["run"], "ndcg@20") == pytest.approx(result.value("shift", "ndcg@20"), abs=1e-12)
    # the second try: over the first one's index and vectors (replaced: every writing step has --overwrite)
    proc = _run_block(block.replace("zh", "de"), tmp_path, _env(100, 10))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tlr@20" in proc.stdout and "| b | shift " in proc.stdout
    runs_dir = tmp_path / "runs"
    assert sorted(p.name for p in runs_dir.glob("*.trec")) == ["base-de.trec", "base-zh.trec", "shift-de.trec",
                                                               "shift-zh.trec"]
    for lang in ("de", "zh"):
        qids = {q.query_id for q in read_topics(f"mlirkit/xquad-r/{lang}")}
        run_qids = {line.split()[0] for line in (runs_dir / f"shift-{lang}.trec").read_text().splitlines()}
        assert run_qids == qids, lang
