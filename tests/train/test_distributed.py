"""Two CPU processes (gloo, launched by torchrun) equal one process on the concatenated batch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tests.helpers import REPO  # noqa: E402

HERE = Path(__file__).resolve().parent


@pytest.mark.slow
def test_ddp_two_processes_equal_single_process(tiny_model_dir, tmp_path):
    from safetensors.torch import load_file

    from tests.train.ddp_worker import run

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    out = tmp_path / "ddp"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         str(HERE / "ddp_worker.py"), str(tiny_model_dir), str(out)],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ddp_params = load_file(str(out / "params.safetensors"))
    ddp_logs = json.loads((out / "logs.json").read_text())

    single, single_logs = run(str(tiny_model_dir), str(tmp_path / "single"), world=1)
    ref = single.model.state_dict()
    changed = 0
    for k, v in ref.items():
        torch.testing.assert_close(ddp_params[k], v, rtol=1e-4, atol=2e-6, msg=k)
    # training moved the weights (so equality is not trivial)
    from mlirkit.encoders.dcl_model import DisentangledEncoder

    start = DisentangledEncoder.from_backbone(str(tiny_model_dir), head_dim=16, max_length=16, seed=0).state_dict()
    changed = sum(not torch.allclose(start[k], v) for k, v in ref.items())
    assert changed > 10
    for a, b in zip(ddp_logs, single_logs):
        for key in ("ret", "sent_p", "sent_q", "ldcl", "orth", "total"):
            assert a[key] == pytest.approx(b[key], rel=1e-4, abs=1e-6), key
