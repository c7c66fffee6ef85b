"""The ir_datasets components of mlirkit's collections: docs_iter() slicing, ir_datasets' own export CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mlirkit.datasets.cli import main as datasets_main
from mlirkit.datasets.records import Collection, CollectionDocs, LazyCollection
from mlirkit.io.records import Doc
from tests.helpers import REPO

DOCS = [Doc(f"d{i}", f"text {i}", "en" if i % 2 else "de") for i in range(30)]


@pytest.fixture
def docs():
    return CollectionDocs(LazyCollection(lambda: Collection(docs=list(DOCS))))


def _ids(it):
    return [d.doc_id for d in it]


def test_docs_iter_iterates_and_slices_like_ir_datasets(docs):
    assert _ids(docs.docs_iter()) == [d.doc_id for d in DOCS]
    assert _ids(docs.docs_iter()[:3]) == ["d0", "d1", "d2"]
    assert _ids(docs.docs_iter()[10:13]) == ["d10", "d11", "d12"]
    assert _ids(docs.docs_iter()[::10]) == ["d0", "d10", "d20"]
    assert _ids(docs.docs_iter()[-2:]) == ["d28", "d29"]
    assert _ids(docs.docs_iter()[10:20][2:4]) == ["d12", "d13"]  # slices of slices
    assert _ids(docs.docs_iter()[0.1:0.2]) == ["d3", "d4", "d5"]  # fractions, as ir_datasets allows
    assert docs.docs_iter()[5].doc_id == "d5" and docs.docs_iter()[10:20][-1].doc_id == "d19"
    assert _ids(docs.docs_iter()[28:100]) == ["d28", "d29"]
    with pytest.raises(IndexError):
        docs.docs_iter()[30]
    with pytest.raises(TypeError):
        docs.docs_iter()["a"]
    it = docs.docs_iter()
    assert next(it).doc_id == "d0" and next(it).doc_id == "d1"  # still a plain iterator


def test_registered_id_slices_after_register_datasets():
    code = ("import mlirkit, ir_datasets; mlirkit.register_datasets(); "
            "print(next(iter(ir_datasets.load('mlirkit/ddtp/en').docs_iter()[:1])).doc_id); "
            "print(len(list(ir_datasets.load('mlirkit/ddtp/en').docs_iter()[10:20])))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    first, count = out.stdout.split()
    assert first.endswith("/cs") and count == "10"


def test_ir_datasets_export_writes_full_records(capsys):
    """``python -m mlirkit.datasets export ID docs`` is ir_datasets' export: every field of every record."""
    assert datasets_main(["export", "mlirkit/ddtp/en", "docs", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10887
    first = json.loads(lines[0])
    assert set(first) == {"doc_id", "text", "lang"} and first["text"] and first["lang"] == "cs"
    assert datasets_main(["export", "mlirkit/ddtp/en/test", "queries"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    # query_id, text, lang, group_id (the description group: DDTP queries are ParallelQuery records)
    assert len(rows) == 645 and all(len(r) == 4 and r[1] and r[2] == "en" and r[0] == f"q/{r[3]}/en" for r in rows)
    assert datasets_main(["ir_datasets", "export", "mlirkit/ddtp/en/test", "qrels"]) == 0
    qrels = capsys.readouterr().out.splitlines()
    assert qrels and all(len(line.split()) == 4 for line in qrels)


def test_ir_datasets_cli_itself_after_register_datasets():
    code = "import mlirkit, ir_datasets; mlirkit.register_datasets(); ir_datasets.main_cli()"
    out = subprocess.run([sys.executable, "-c", code, "export", "mlirkit/ddtp/en/dev", "queries", "--format", "jsonl"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 268 and set(rows[0]) == {"query_id", "text", "lang", "group_id"} and rows[0]["lang"] == "en"


def test_ir_datasets_usage_error_exits_non_zero(capsys):
    assert datasets_main(["ir_datasets", "no-such-command"]) != 0
