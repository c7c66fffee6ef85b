"""The first evaluation or fusion says that ranx compiles its kernels (about a minute, no progress bar) when none
are cached, once per process, and says nothing when they are."""
from __future__ import annotations

import logging

from mlirkit.base import numba_cache


def test_the_first_compile_is_said_once_and_only_when_nothing_is_cached(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setattr(numba_cache, "_ANNOUNCED", set())
    with caplog.at_level(logging.INFO, logger="mlirkit"):
        assert numba_cache.announce_first_compile("fusion", "fusion") is True
        assert numba_cache.announce_first_compile("fusion", "fusion") is False  # once per process
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [f"ranx compiles its fusion kernels with numba on this first use (about a minute of CPU; "
                     f"cached in {tmp_path / 'numba'} for later runs)"]
    caplog.clear()
    (tmp_path / "numba" / "metrics_0123").mkdir(parents=True)
    (tmp_path / "numba" / "metrics_0123" / "metrics.ndcg-10.py311.nbi").write_bytes(b"")
    with caplog.at_level(logging.INFO, logger="mlirkit"):
        assert numba_cache.announce_first_compile("metrics", "metric") is False
    assert caplog.records == []
