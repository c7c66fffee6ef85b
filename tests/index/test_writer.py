"""IndexWriter under faults: nothing is left behind (temporary, lock file, new parents) whatever fails."""
from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.index.writer import IndexWriter


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def writer(path, **kw):
    return IndexWriter(path, dim=4, encoder={"class": "fake"}, normalized=True, **kw)


def test_interrupt_during_set_up_leaves_nothing(tmp_path, monkeypatch):
    from mlirkit.index.types import IndexSpec

    def interrupted(self, dim):
        raise KeyboardInterrupt

    monkeypatch.setattr(IndexSpec, "new_index", interrupted)
    with pytest.raises(KeyboardInterrupt):
        with writer(tmp_path / "new" / "index"):
            pass
    assert listing(tmp_path) == []


def test_failure_while_adding_or_finishing_leaves_nothing(tmp_path, monkeypatch):
    v = np.eye(4, dtype=np.float32)[:2]
    with pytest.raises(MlirkitError, match="duplicate document id"):
        with writer(tmp_path / "a" / "index") as w:
            w.add(["d1", "d1"], ["en", "en"], v)
    with pytest.raises(MlirkitError, match="no documents to index"):
        with writer(tmp_path / "b" / "index"):
            pass
    import mlirkit.index.writer as module

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(module, "_raw_to_npy", full)
    with pytest.raises(MlirkitError, match="cannot write .*index: No space left on device"):
        with writer(tmp_path / "c" / "index", save_embeddings=True) as w:
            w.add(["d1", "d2"], ["en", "de"], v)
    assert listing(tmp_path) == []
    monkeypatch.undo()
    with writer(tmp_path / "index", save_embeddings=True) as w:
        w.add(["d1", "d2"], ["en", "de"], v)
    assert listing(tmp_path) == ["index", "index/docid", "index/embeddings.npy", "index/index", "index/langs",
                                 "index/meta.json"]
