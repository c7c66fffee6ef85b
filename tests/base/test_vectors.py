"""base/vectors: the one finiteness check and the one SHIFT step refuse NaN/inf (issue 13)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.vectors import check_finite, transform_and_normalize


def test_check_finite():
    check_finite("x", np.ones((2, 3)))
    for bad in (np.nan, np.inf, -np.inf):
        a = np.ones((2, 3), dtype=np.float32)
        a[1, 2] = bad
        with pytest.raises(MlirkitError, match=r"^f\.npy: x contains NaN or inf$"):
            check_finite("x", a, "f.npy")


def test_transform_and_normalize_refuses_non_finite_input():
    x = np.ones((2, 4), dtype=np.float32)
    assert np.allclose(np.linalg.norm(transform_and_normalize(x, ["en", "de"], "doc"), axis=1), 1.0)
    x[0, 0] = np.nan
    with pytest.raises(MlirkitError, match="encoder: query vectors contains NaN or inf"):
        transform_and_normalize(x, ["en", "de"], "query", where="encoder")
