"""Process-group set-up for CUDA training, checked on the CPU side (no GPU, no second process)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mlirkit.train import distributed as dd  # noqa: E402


@pytest.mark.parametrize("device,backend", [("cuda", "cpu:gloo,cuda:nccl"), ("cpu", "gloo")])
def test_init_distributed_picks_the_backend_from_torchrun_env(monkeypatch, device, backend):
    calls = []
    state = {"init": False}
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(dd.dist, "is_initialized", lambda: state["init"])

    def fake_init(backend):
        calls.append(backend)
        state["init"] = True
    monkeypatch.setattr(dd.dist, "init_process_group", fake_init)
    monkeypatch.setattr(dd.dist, "get_rank", lambda: 1)
    monkeypatch.setattr(dd.dist, "get_world_size", lambda: 2)
    assert dd.env_world() == (1, 1, 2)
    assert dd.init_distributed(device) == (1, 2)
    assert calls == [backend]
    # a second call (already initialised) does not initialise again
    assert dd.init_distributed(device) == (1, 2) and calls == [backend]


def test_single_process_without_torchrun_env(monkeypatch):
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(dd.dist, "init_process_group", lambda **kw: pytest.fail("must not initialise"))
    assert dd.env_world() == (0, 0, 1)
    if not dd.dist.is_initialized():
        assert dd.init_distributed("cuda") == (0, 1)
    x = torch.arange(3)
    assert dd.gather(x) is x and dd.gather_labels(x) is x and dd.mean_across({"a": 1.0}) == {"a": 1.0}
