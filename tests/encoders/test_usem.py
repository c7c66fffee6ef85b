"""The ``usem`` encoder (multilingual USE v3 in numpy)."""
from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

from mlirkit.encoders import load_encoder
from mlirkit.base.errors import MlirkitError

TEXTS = ["Hello world.", "Hallo Welt.", "The weather is nice today.", "Привет, мир!", "東京は日本の首都です。"]


@pytest.fixture(scope="module")
def usem():
    return load_encoder("usem")


def test_dims_norms_and_determinism(usem):
    from mlirkit.encoders.usem import USEMEncoder

    assert isinstance(usem, USEMEncoder) and usem.dim == 512
    a = usem.encode_docs(TEXTS)
    assert a.shape == (5, 512) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)
    np.testing.assert_array_equal(a, usem.encode_docs(TEXTS))
    np.testing.assert_allclose(usem.encode_queries(TEXTS), a, atol=1e-6)  # one encoder, no prompts
    one_by_one = np.concatenate([usem.encode_docs([t]) for t in TEXTS])
    np.testing.assert_allclose(one_by_one, a, atol=1e-5)
    np.testing.assert_allclose(usem.encode_docs(TEXTS, batch_size=2), a, atol=1e-5)
    assert usem.encode_docs([]).shape == (0, 512)
    # a translation pair is closer than an unrelated sentence
    assert a[0] @ a[1] > a[0] @ a[2]


def test_fingerprint(usem):
    fp = usem.fingerprint
    assert fp["class"] == "usem" and fp["model"] == "usem-multilingual-v3" and fp["weights"].startswith("sha256:")
    assert fp["normalize"] is True and fp["normalized_by"] == "model"
    assert load_encoder("usem-multilingual-v3", "usem").digest == usem.digest
    assert load_encoder("usem", denoise=True).digest != usem.digest


def test_unsupported_language_warns_once(caplog):
    enc = load_encoder("usem")
    with caplog.at_level(logging.WARNING, logger="mlirkit.encoders.usem"):
        enc.encode_docs(["Привіт, світ", "Добрий день", "Hallo"], ["uk", "uk", "de"])
        enc.encode_docs(["Привіт"], ["uk"])
        enc.encode_docs(["Olá"], ["pt-BR"])
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "'uk'" in warnings[0] and "2 texts" in warnings[0]


def test_bad_inputs(usem):
    with pytest.raises(MlirkitError, match="did you mean"):
        load_encoder("usem-multilingual-v2", "usem")
    with pytest.raises(MlirkitError, match="does not take option.*max_length"):
        load_encoder("usem", max_length=128)
    with pytest.raises(MlirkitError, match="2 languages given for 1 texts"):
        usem.encode_docs(["a"], ["en", "de"])
    with pytest.raises(MlirkitError, match="not a string"):
        usem.encode_docs([b"bytes"])


def test_no_torch_import():
    code = ("import sys; from mlirkit.encoders import load_encoder; e = load_encoder('usem'); "
            "e.encode_docs(['hi']); e.fingerprint; sys.exit(1 if 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
