"""Importing a SHIFT authors' ``.pt`` vector file checks the recorded model, not only the dimension."""
from __future__ import annotations

import logging

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.testing.fake_encoder import FakeEncoder
from mlirkit.transforms.import_pt import import_shift_pt, same_model


def _write_pt(path, model_name="intfloat/multilingual-e5-small", d=4):
    import torch

    payload = {"source_lang": "en", "v_de": torch.ones(d), "v_fr": torch.arange(d, dtype=torch.float32)}
    if model_name is not None:
        payload["model_name"] = model_name
    torch.save(payload, path)
    return path


def test_same_model_compares_ids_and_directory_names():
    assert same_model("intfloat/multilingual-e5-small", "INTFLOAT/multilingual-e5-small")
    assert same_model("intfloat/multilingual-e5-small", "/models/multilingual-e5-small/")
    assert not same_model("intfloat/multilingual-e5-small", "intfloat/multilingual-e5-base")
    assert not same_model("BAAI/bge-m3", "intfloat/multilingual-e5-small")


def test_another_models_vectors_are_refused_unless_forced(tmp_path, caplog):
    pt = _write_pt(tmp_path / "vec.pt")
    ok = import_shift_pt(pt, FakeEncoder(dim=4), encoder_name="intfloat/multilingual-e5-small")
    assert sorted(ok.languages) == ["de", "fr"]
    with pytest.raises(MlirkitError, match=r"made with model 'intfloat/multilingual-e5-small'.*\(force=True imports it anyway\)"):
        import_shift_pt(pt, FakeEncoder(dim=4), encoder_name="BAAI/bge-m3")
    with caplog.at_level(logging.WARNING, logger="mlirkit"):
        forced = import_shift_pt(pt, FakeEncoder(dim=4), encoder_name="BAAI/bge-m3", force=True)
    assert forced.meta["imported_from"]["model_name"] == "intfloat/multilingual-e5-small"
    assert "(force=True)" in caplog.text
    with pytest.raises(MlirkitError, match="4-d vectors"):  # the dimension is still checked
        import_shift_pt(pt, FakeEncoder(dim=8), encoder_name="intfloat/multilingual-e5-small")


def test_a_file_without_model_name_is_checked_by_dimension_only(tmp_path):
    pt = _write_pt(tmp_path / "anon.pt", model_name=None)
    assert import_shift_pt(pt, FakeEncoder(dim=4), encoder_name="anything").dim == 4
