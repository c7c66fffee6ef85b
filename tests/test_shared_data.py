"""The ``shared_data`` fixture's rule: missing shared data fails a test in CI and skips it elsewhere."""
from __future__ import annotations

import pytest

from tests.helpers import require_shared_data


def test_missing_shared_data_fails_in_ci_and_skips_elsewhere(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-dir"
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="not present.*CI is set"):
        require_shared_data(missing)
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="not present"):
        require_shared_data(missing)
    assert require_shared_data(tmp_path) == tmp_path
