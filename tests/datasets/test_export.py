"""``mlirkit.datasets.export``: what it writes, mlirkit's readers and TREC tools read back; an id or a question
that cannot be written faithfully is refused in one line, and nothing is left behind."""
from __future__ import annotations

from typing import NamedTuple

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.datasets.export import export


class _Doc(NamedTuple):
    doc_id: str
    text: str


class _Query(NamedTuple):
    query_id: str
    text: str


class _Qrel(NamedTuple):
    query_id: str
    doc_id: str
    relevance: int


class _Dataset:
    def __init__(self, docs, queries, qrels):
        self.docs, self.queries, self.qrels = docs, queries, qrels

    def has_docs(self): return True  # noqa: E704
    def has_queries(self): return True  # noqa: E704
    def has_qrels(self): return True  # noqa: E704
    def docs_lang(self): return "en"  # noqa: E704
    def queries_lang(self): return "en"  # noqa: E704
    def docs_iter(self): return iter(self.docs)  # noqa: E704
    def queries_iter(self): return iter(self.queries)  # noqa: E704
    def qrels_iter(self): return iter(self.qrels)  # noqa: E704


def _dataset(doc_id="d1", query_id="q1", question="where?", qrel=("q1", "d1")):
    return _Dataset([_Doc(doc_id, "a text")], [_Query(query_id, question)], [_Qrel(*qrel, 1)])


@pytest.mark.parametrize("fmt", ["beir", "trec"])
@pytest.mark.parametrize("changes, message", [
    ({"doc_id": "d\x01"}, "doc id 'd\\x01'"),
    ({"query_id": "q\x1b[31m", "qrel": ("q\x1b[31m", "d1")}, "query id"),
    ({"question": " \t "}, "query 'q1': field 'text' is empty or whitespace only"),
    ({"qrel": ("q 1", "d1")}, "qrels query id 'q 1'"),
    ({"qrel": ("q1", "d 1")}, "qrels doc id 'd 1'"),
    ({"qrel": ("q1", "d\u200b")}, "qrels doc id"),
])
def test_what_no_reader_takes_back_is_refused_in_one_line(tmp_path, monkeypatch, fmt, changes, message):
    import ir_datasets

    monkeypatch.setattr(ir_datasets, "load", lambda _: _dataset(**changes))
    with pytest.raises(MlirkitError) as e:
        export("fake", fmt, tmp_path / "out")
    assert message in str(e.value) and "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_a_clean_dataset_round_trips_through_mlirkit_readers(tmp_path, monkeypatch):
    import ir_datasets

    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    monkeypatch.setattr(ir_datasets, "load", lambda _: _dataset())
    assert export("fake", "trec", tmp_path / "out") == {"docs": 1, "queries": 1, "qrels": 1}
    assert [(q.query_id, q.text) for q in read_topics(tmp_path / "out" / "topics.tsv")] == [("q1", "where?")]
    assert dict(read_qrels(tmp_path / "out" / "qrels.txt")) == {"q1": {"d1": 1}}


def test_overwrite_refuses_an_export_holding_a_user_file(tmp_path, monkeypatch):
    import ir_datasets

    monkeypatch.setattr(ir_datasets, "load", lambda _: _dataset())
    out = tmp_path / "out"
    export("any/dataset", "beir", out)
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(MlirkitError, match="notes.txt is not mlirkit's") as e:
        export("any/dataset", "beir", out, overwrite=True)
    assert "\n" not in str(e.value) and (out / "notes.txt").read_text() == "mine\n"
    (out / "notes.txt").unlink()
    export("any/dataset", "trec", out, overwrite=True)  # its own output: replaced
    assert sorted(p.name for p in out.iterdir()) == ["corpus.jsonl", "qrels.txt", "topics.tsv"]
