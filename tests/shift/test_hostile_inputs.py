"""Hostile inputs to ``mlirkit.shift apply`` / ``fit --from-index`` / ``select-alpha`` and ``mlirkit.index merge``
(issue 13): NaN/inf vectors, an alpha for a language the transform lacks, bad counts; exit 2, one line,
nothing written."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc
from mlirkit.shift.cli import main as shift_main
from tests.helpers import assert_refused, assert_usage_error

DOCS = [Doc("d1", "The ferry leaves twice a day.", "en"), Doc("d2", "Die Fähre fährt zweimal am Tag.", "de"),
        Doc("d3", "Le ferry part deux fois par jour.", "fr"), Doc("d4", "Install the package.", "en")]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, tiny_encoder):
    from mlirkit.encode import Indexer
    from mlirkit.transforms.io import save_transform
    from mlirkit.transforms.shift_transform import ShiftTransform

    root = tmp_path_factory.mktemp("shift_hostile")
    Indexer(root / "index", tiny_encoder, show_progress=False, save_embeddings=True).index(DOCS)
    t = ShiftTransform.from_tensors({"de": np.full(tiny_encoder.dim, 0.01, dtype=np.float32)}, encoder=tiny_encoder.fingerprint,
                       source_lang="en")
    save_transform(t, root / "t.safetensors")
    return root


def _copy_with_nan(setup, tmp_path, value=np.nan):
    index = tmp_path / "index"
    shutil.copytree(setup / "index", index)
    embs = np.load(index / "embeddings.npy")
    embs[1, 3] = value
    np.save(index / "embeddings.npy", embs)
    return index


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_apply_refuses_nan_embeddings(setup, tmp_path, capsys, value):
    index = _copy_with_nan(setup, tmp_path, value)
    argv = ["apply", "--index", str(index), "--transform", str(setup / "t.safetensors"), "--output", str(tmp_path / "out")]
    assert_refused(shift_main, argv, capsys, tmp_path, "embeddings.npy, rows 0-3): doc vectors contains NaN or inf")


def test_select_alpha_and_fit_from_index_refuse_nan_embeddings(setup, tmp_path):
    from mlirkit.shift.from_index import fit_from_index, index_document_embeddings

    index = _copy_with_nan(setup, tmp_path)
    with pytest.raises(MlirkitError, match="document vectors contains NaN or inf"):
        index_document_embeddings(index)  # (what select-alpha reads)
    with pytest.raises(MlirkitError, match="NaN or inf"):
        fit_from_index(index, "en", vectors="corpus", min_docs=1)


def test_merge_refuses_nan_embeddings(setup, tmp_path):
    from mlirkit.index.merge import merge_indexes

    bad = _copy_with_nan(setup, tmp_path)
    with pytest.raises(MlirkitError, match="embeddings.npy contains NaN or inf"):
        merge_indexes([bad], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_apply_alpha_for_a_language_the_transform_lacks(setup, tmp_path, capsys):
    argv = ["apply", "--index", str(setup / "index"), "--transform", str(setup / "t.safetensors"),
            "--alpha", "0.5", "fr=1.0", "ja=0.2", "--output", str(tmp_path / "out")]
    line = assert_refused(shift_main, argv, capsys, tmp_path, "--alpha for 'fr', 'ja'")
    assert "languages: de" in line


def test_alpha_overrides_are_checked_where_alpha_meets_the_transform(setup):
    from mlirkit.transforms.io import load_transform

    t = load_transform(setup / "t.safetensors")
    assert t.check_alpha({"*": 0.5, "de": 1.0}).for_lang("de") == 1.0
    x = np.zeros((1, t.dim), dtype=np.float32)
    with pytest.raises(MlirkitError, match="^alpha for 'xx'"):
        t.transform(x, ["de"], "doc", {"*": 1.0, "xx": 0.5})


@pytest.mark.parametrize("argv, option", [
    (["select-alpha", "--k", "0"], "--k"),
    (["select-alpha", "--max-probes", "-1"], "--max-probes"),
])
def test_counts_must_be_positive(setup, tmp_path, capsys, argv, option):
    full = [argv[0], "--index", str(setup / "index"), "--transform", str(setup / "t.safetensors"), *argv[1:]]
    assert_usage_error(shift_main, full, capsys, tmp_path, option)
