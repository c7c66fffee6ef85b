"""One set of transform options (encode, shift apply, the Pyserini encode wrapper), read once."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform, save_transform
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.options import TransformOptions, add_transform_args, transform_from_args

ENC = {"model": "m", "dim": 4}


def _parser(**kwargs) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_transform_args(p, **kwargs)
    return p


@pytest.fixture()
def transform_file(tmp_path):
    path = tmp_path / "t.safetensors"
    save_transform(ShiftTransform.from_tensors({"de": np.ones(4, np.float32)}, encoder=ENC, source_lang="en"), path)
    return path


def test_no_transform():
    opts = transform_from_args(_parser().parse_args([]))
    assert opts == TransformOptions() and opts.transform is None and opts.alpha == Alpha()
    opts.check_encoder({"model": "other", "dim": 8})  # nothing to check


def test_loads_once_with_alpha_and_flags(transform_file, monkeypatch):
    import mlirkit.transforms.io as io

    calls = []
    real = io.load_transform
    monkeypatch.setattr(io, "load_transform", lambda p: calls.append(p) or real(p))
    opts = transform_from_args(_parser().parse_args(["--transform", str(transform_file), "--alpha", "0.5", "de=1",
                                                     "--strict", "--force"]))
    assert len(calls) == 1
    assert isinstance(opts.transform, ShiftTransform) and opts.transform.path == transform_file
    assert opts.alpha == Alpha(0.5, {"de": 1.0}) and opts.strict and opts.force and opts.langid_threshold is None
    opts.check_encoder({"model": "other", "dim": 4})  # --force: warned only
    with pytest.raises(MlirkitError, match="dimension"):
        opts.check_encoder({"model": "m", "dim": 8})


@pytest.mark.parametrize("argv, kwargs, message", [
    (["--alpha", "0.5"], {}, "^--alpha and --langid need --transform$"),
    (["--langid", "0.9"], {}, "^--alpha and --langid need --transform$"),
    (["--alpha", "0.5"], {"langid": False}, "^--alpha needs --transform$"),
])
def test_options_without_transform_refused(argv, kwargs, message):
    with pytest.raises(MlirkitError, match=message):
        transform_from_args(_parser(**kwargs).parse_args(argv))


def test_langid_needs_a_classifier(transform_file):
    with pytest.raises(MlirkitError, match="has no language classifier"):
        transform_from_args(_parser().parse_args(["--transform", str(transform_file), "--langid", "0.9"]))


def test_missing_file_and_required(tmp_path):
    with pytest.raises(MlirkitError, match="no such transform file"):
        transform_from_args(_parser().parse_args(["--transform", str(tmp_path / "missing.safetensors")]))
    with pytest.raises(SystemExit):
        _parser(required=True).parse_args([])
