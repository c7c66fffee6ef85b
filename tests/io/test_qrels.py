"""mlirkit.io.qrels.read_qrels: a qrels file or an ir_datasets id, one duplicate rule."""
from __future__ import annotations

import pytest

from mlirkit.base.errors import InputFormatError, MlirkitError
from mlirkit.io.qrels import read_qrels


def test_from_a_file(tmp_path):
    p = tmp_path / "qrels.txt"
    p.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n")
    assert read_qrels(p) == {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
    p.write_text("q1 0 d1 1\nq1 0 d1 1\n")
    with pytest.raises(InputFormatError, match=r"qrels\.txt:2: duplicate judgement of document 'd1' for query 'q1'"):
        read_qrels(p)


def test_from_an_ir_datasets_id():
    import ir_datasets

    import mlirkit.datasets  # noqa: F401

    qrels = read_qrels("mlirkit/ddtp/en/test")
    expected: dict = {}
    for r in ir_datasets.load("mlirkit/ddtp/en/test").qrels_iter():
        expected.setdefault(r.query_id, {})[r.doc_id] = r.relevance
    assert qrels == expected and len(qrels) > 10


class _Qrel:
    def __init__(self, query_id, doc_id, relevance):
        self.query_id, self.doc_id, self.relevance = query_id, doc_id, relevance


class _Dataset:
    def __init__(self, qrels):
        self._qrels = qrels

    def has_qrels(self):
        return self._qrels is not None

    def qrels_iter(self):
        return iter(self._qrels)


def test_dataset_duplicates_and_empty_follow_the_same_rule(monkeypatch):
    import mlirkit.io.qrels as qrels_module

    data = {"dup": _Dataset([_Qrel("q", "d", 1), _Qrel("q", "e", 1), _Qrel("q", "d", 0)]),
            "none": _Dataset(None), "empty": _Dataset([])}
    monkeypatch.setattr(qrels_module, "load_ir_dataset", data.__getitem__)
    with pytest.raises(InputFormatError, match=r"dup \(qrel 3\): duplicate judgement of document 'd' for query 'q'"):
        read_qrels("dup")
    with pytest.raises(MlirkitError, match="none has no qrels"):
        read_qrels("none")
    with pytest.raises(MlirkitError, match="empty: empty qrels"):
        read_qrels("empty")


def test_unknown_id_did_you_mean():
    with pytest.raises(MlirkitError, match="did you mean"):
        read_qrels("mlirkit/ddtp/en/tset")
