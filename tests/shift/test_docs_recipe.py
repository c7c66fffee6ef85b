"""docs/shift.md's ``fit --from-index`` recipe, extracted from the page and run as written on its collection
(whose Chinese slice, 19 documents, is one short of the default ``--min-docs``), the encoder of step 1
swapped for the tiny test model (the steps after it read the index, whatever encoded it)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

PAGE = REPO / "docs" / "shift.md"
HEADING = "## Language vectors without parallel text: `fit --from-index`"


def recipe() -> list[str]:
    """The commands of the first ```bash block after :data:`HEADING`, continuation lines joined."""
    text = PAGE.read_text(encoding="utf-8")
    block = re.compile(r"```bash\n(.*?)```", re.S).search(text, text.index(HEADING)).group(1)
    return [line for line in re.sub(r"\\\n\s*", " ", block).splitlines() if line.startswith("python -m ")]


def test_the_recipe_has_the_four_steps():
    steps = recipe()
    assert [shlex.split(c)[2:4] for c in steps] == [["mlirkit.encode", "--corpus"], ["mlirkit.shift", "fit"],
                                                    ["mlirkit.shift", "select-alpha"], ["mlirkit.shift", "apply"]]
    assert "--encoder multilingual-e5-small-q4" in steps[0]


@pytest.mark.slow  # about 2 minutes: encodes the 899 documents, mines, sweeps alpha
@pytest.mark.timeout(900)
def test_the_recipe_runs_as_written(tmp_path, tiny_model_dir, shared_data):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    steps = recipe()
    steps[0] = steps[0].replace("--encoder multilingual-e5-small-q4", f"--encoder {tiny_model_dir} --encoder-class hf")
    for command in steps:
        words = shlex.split(command)
        proc = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{command}\n{proc.stderr[-2000:]}"
    from mlirkit.transforms.io import load_transform

    t = load_transform(tmp_path / "mined.safetensors")
    assert "zh" in t.languages and (tmp_path / "idx-mined" / "meta.json").is_file()
