"""The README's Quick start block, extracted from README.md and run verbatim with bash (so it can never drift).

It runs in a temporary directory whose ``.venv`` is the interpreter running the tests, with this
checkout first on ``PYTHONPATH``, on a small corpus slice and few translation groups
(``MLIRKIT_QUICKSTART_DOCS``, ``MLIRKIT_QUICKSTART_PAIRS``, which the block itself honours) and the real
offline e5-small, so it is ``slow``.
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


def quickstart_block(readme: Path = REPO / "README.md") -> str:
    """The first ```bash block after the Quick start heading."""
    text = readme.read_text(encoding="utf-8")
    start = text.index(QUICKSTART_HEADING)
    match = re.compile(r"```bash\n(.*?)```", re.S).search(text, start)
    assert match is not None, "no ```bash block after the Quick start heading"
    return match.group(1)


def _fake_venv(root: Path) -> None:
    """``root/.venv/bin/activate`` that puts the running interpreter's bin directory first on PATH."""
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python_bin = Path(sys.executable).parent
    assert (python_bin / "python").exists(), f"no `python` beside {sys.executable}"
    (bin_dir / "activate").write_text(f'export PATH="{python_bin}:$PATH"\nhash -r\n', encoding="utf-8")


def test_block_shape():
    """The block encodes once, applies (not re-encodes) SHIFT, writes both runs it evaluates."""
    block = quickstart_block()
    assert block.count("mlirkit.encode") == 1 and "--save-embeddings" in block
    assert "mlirkit.shift apply" in block and "--max-pairs" in block
    assert "${MLIRKIT_QUICKSTART_DOCS:-" in block and '--max-docs "$N"' in block
    assert "${MLIRKIT_QUICKSTART_PAIRS:-" in block and '--max-pairs "$P"' in block
    for run in re.findall(r"--runs ((?:runs/\S+\s*)+)", block)[0].split():
        assert f"--output {run}" in block, f"{run} is evaluated but no step writes it"


@pytest.mark.slow
def test_quickstart_runs_verbatim(tmp_path):
    ranx = pytest.importorskip("ranx")
    _fake_venv(tmp_path)
    env = {**os.environ, "MLIRKIT_QUICKSTART_DOCS": "60", "MLIRKIT_QUICKSTART_PAIRS": "20",
           "PYTHONPATH": os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    script = "set -euo pipefail\n" + quickstart_block()
    proc = subprocess.run([shutil.which("bash") or "/bin/bash", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tlr@20" in proc.stdout
    runs = [ranx.Run.from_file(str(tmp_path / "runs" / f"{name}.trec"), kind="trec") for name in ("base", "shift")]
    assert [r.name for r in runs] == ["base", "shift"]
    from mlirkit.io.qrels import read_qrels

    qrels = ranx.Qrels(read_qrels("mlirkit/ddtp/en"))
    report = ranx.compare(qrels, runs, metrics=["ndcg@20"])
    assert report.model_names == ["base", "shift"]
    assert len(report.to_dataframe()) == 2
