"""No code from data: a crafted trainer checkpoint or SHIFT ``.pt`` with a pickled callable is refused
(one-line :class:`MlirkitError`) and its payload never runs."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest
import torch

from mlirkit.base.errors import MlirkitError
from mlirkit.train.trainer import _numpy_rng_state, _set_numpy_rng_state, load_checkpoint_file
from mlirkit.transforms.io import read_shift_pt


class _Payload:
    """Unpickling this calls ``os.system`` (writes the marker file)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _crafted(path, marker, **extra) -> None:
    torch.save({"step": 3, "optimizer": _Payload(str(marker)), **extra}, path)


def test_crafted_trainer_state_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    _crafted(tmp_path / "trainer_state.pt", marker)
    with pytest.raises(MlirkitError, match="trainer_state.pt: refused as a trainer checkpoint") as e:
        load_checkpoint_file(tmp_path / "trainer_state.pt")
    assert "\n" not in str(e.value)
    assert not marker.exists()


def test_crafted_shift_pt_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    _crafted(tmp_path / "vec.pt", marker, source_lang="en", v_de=torch.ones(4))
    with pytest.raises(MlirkitError, match="weights_only=True") as e:
        read_shift_pt(tmp_path / "vec.pt")
    assert "\n" not in str(e.value)
    assert not marker.exists()


def test_rng_state_round_trips_through_a_weights_only_file(tmp_path):
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    np.random.standard_normal()  # leaves a cached gaussian in numpy's state
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": _numpy_rng_state()}
    expected = (torch.rand(3), random.random(), np.random.standard_normal(4))
    torch.save(state, tmp_path / "rng.pt")
    loaded = load_checkpoint_file(tmp_path / "rng.pt")
    torch.set_rng_state(loaded["torch"]), random.setstate(loaded["python"]), _set_numpy_rng_state(loaded["numpy"])
    torch.testing.assert_close(torch.rand(3), expected[0])
    assert random.random() == expected[1]
    np.testing.assert_array_equal(np.random.standard_normal(4), expected[2])


def test_truncated_checkpoint_is_one_line(tmp_path):
    (tmp_path / "trainer_state.pt").write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(MlirkitError, match="refused as a trainer checkpoint") as e:
        load_checkpoint_file(tmp_path / "trainer_state.pt")
    assert "\n" not in str(e.value)


def test_every_torch_load_in_mlirkit_is_weights_only():
    import re
    from pathlib import Path

    import mlirkit

    calls = []
    for path in Path(mlirkit.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "weights_only=False" not in text, path
        calls += [(path, m.group(0)) for m in re.finditer(r"torch\.load\([^)]*\)", text)]
    assert calls and all("weights_only=True" in call for _, call in calls), calls
