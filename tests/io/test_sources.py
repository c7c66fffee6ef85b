"""mlirkit.io.sources: the one answer to "file, directory or dataset id?"."""
from __future__ import annotations

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.sources import SourceKind, file_format, load_ir_dataset, source_kind


def test_source_kind(tmp_path):
    (tmp_path / "f.jsonl").write_text("{}\n")
    assert source_kind(tmp_path / "f.jsonl") is SourceKind.FILE
    assert source_kind(str(tmp_path)) is SourceKind.DIRECTORY
    assert source_kind("mlirkit/ddtp/en/test") is SourceKind.DATASET
    assert source_kind(tmp_path / "missing.jsonl") is SourceKind.DATASET  # not an existing path


def test_load_ir_dataset_did_you_mean():
    assert load_ir_dataset("mlirkit/ddtp/en/test").has_qrels()
    with pytest.raises(MlirkitError, match="neither an existing file nor an ir_datasets id.*did you mean"):
        load_ir_dataset("mlirkit/ddtp/en/tset")


def test_file_format():
    assert file_format("a/corpus.jsonl.gz") == "jsonl" and file_format("q.TSV") == "tsv"
    with pytest.raises(MlirkitError, match="unknown file type"):
        file_format("x.csv")
