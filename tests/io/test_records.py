"""mlirkit.io.records: the one record family (also ir_datasets' record types of mlirkit ids)."""
from __future__ import annotations

import typing

from mlirkit.io.records import Doc, ParallelDoc, ParallelQuery, Query


def test_records_fields_and_default_text():
    assert Doc("d", "text", "de").default_text() == "text"
    assert Query("q", "question", "en").default_text() == "question"
    p = ParallelDoc("g/de", "hallo", "de", "g")
    assert p.default_text() == "hallo" and p.group_id == "g"
    q = ParallelQuery("q/g/de", "frage", "de", "g")
    assert q.default_text() == "frage" and q.group_id == "g" and (q.query_id, q.text, q.lang) == q[:3]


def test_annotations_are_real_types_for_ir_datasets():
    # ir_datasets' export reads the annotations at runtime: strings would make it write blank lines
    for cls in (Doc, Query, ParallelDoc, ParallelQuery):
        assert all(t is str for t in cls.__annotations__.values()), cls
        assert typing.get_type_hints(cls) == cls.__annotations__


def test_mlirkit_datasets_use_the_io_records():
    import ir_datasets

    import mlirkit.datasets  # noqa: F401

    assert ir_datasets.load("mlirkit/ddtp/en/test").docs_cls() is Doc
    assert ir_datasets.load("mlirkit/ddtp/en/test").queries_cls() is ParallelQuery  # translations: grouped
    assert isinstance(next(ir_datasets.load("mlirkit/ddtp/multi/test").queries_iter()), ParallelQuery)
    assert ir_datasets.load("mlirkit/xquad-r/de").queries_cls() is ParallelQuery  # group = the SQuAD id
    assert ir_datasets.load("mlirkit/belebele/de").queries_cls() is Query  # no groups declared (yet)
    assert ir_datasets.load("mlirkit/parallel/gettext").docs_cls() is ParallelDoc
    assert mlirkit.datasets.ParallelDoc is ParallelDoc
