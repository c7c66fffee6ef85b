"""Hostile inputs to ``mlirkit.eval`` (issue 13): exit 2, one line naming file and line, no report written."""
from __future__ import annotations

import gzip
import json

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.eval.cli import main
from tests.helpers import assert_refused, assert_usage_error

BOM = b"\xef\xbb\xbf"
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 3.0 t\n"


def _argv(tmp_path, *extra):
    return ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "run.trec"), "--metrics", "ndcg@10",
            "--output", str(tmp_path / "report.json"), *extra]


def _write(tmp_path, qrels=QRELS, run=RUN, langs=None):
    (tmp_path / "qrels.txt").write_bytes(qrels)
    (tmp_path / "run.trec").write_bytes(run)
    if langs is not None:
        (tmp_path / "langs.tsv").write_bytes(langs)


def test_byte_order_marks_do_not_change_the_metrics(tmp_path, capsys):
    _write(tmp_path)
    assert run_cli(main, _argv(tmp_path)) == 0

    def scores() -> dict:  # the report without the list of inputs (their hashes differ with the bytes)
        report = json.loads((tmp_path / "report.json").read_text())
        report["_meta"].pop("inputs")
        return report

    plain = scores()
    _write(tmp_path, BOM + QRELS, gzip.compress(BOM + RUN))
    assert run_cli(main, _argv(tmp_path, "--overwrite")) == 0, capsys.readouterr().err
    assert scores() == plain


@pytest.mark.parametrize("qrels, run, message", [
    (b"q1 0 d\x001 1\n", RUN, "qrels.txt:1: invalid document id"),
    (b"query-id\tcorpus-id\tscore\nq 1\td1\t1\n", RUN, "qrels.txt:2: invalid query id 'q 1'"),
    (QRELS, b"q1 Q0 d1 1 2.0 t\nq\x7f2 Q0 d3 1 3.0 t\n", "run.trec:2: invalid query id"),
    (QRELS, RUN[:-3] + b"\xff\n", "run.trec:3: invalid UTF-8"),
    (QRELS, b"\x1f\x8b\x08\x00junk", "run.trec: cannot read"),
    (QRELS, gzip.compress(RUN + b"".join(b"q3 Q0 d%d 1 1.0 t\n" % i for i in range(60)), mtime=0)[:-8], "run.trec: cannot read"),
    (b"q1 0 d1 " + b"9" * 5000 + b"\n", RUN, "qrels.txt:1: relevance"),
])
def test_eval_refuses_hostile_files(tmp_path, capsys, qrels, run, message):
    _write(tmp_path, qrels, run)
    assert_refused(main, _argv(tmp_path), capsys, tmp_path, message)


@pytest.mark.parametrize("langs, message", [
    (b"d1\ten\nd2\t[1]\n", "langs.tsv:2: invalid language '[1]'"),
    (b'{"id": "d1", "lang": 5}\n', "langs.tsv:1: field 'lang' must be a string"),
    (b"d1\ten\nd\x002\tde\n", "langs.tsv:2: invalid document id"),
])
def test_eval_refuses_hostile_doc_langs(tmp_path, capsys, langs, message):
    _write(tmp_path, langs=langs)
    argv = _argv(tmp_path, "--metrics", "tlr@2", "--doc-langs", str(tmp_path / "langs.tsv"), "--default-lang", "en")
    assert_refused(main, argv, capsys, tmp_path, message)


def test_unknown_document_language_is_not_a_language(tmp_path, capsys):
    """``unknown`` in a doc-langs file reads as ``und`` (TLR does not count it as a language)."""
    from mlirkit.io.doc_langs import read_doc_langs

    _write(tmp_path, langs=b"d1\tunknown\nd2\tund\nd3\ten\n")
    assert set(read_doc_langs(tmp_path / "langs.tsv").values()) == {"und", "en"}


@pytest.mark.parametrize("option", ["--permutations", "--k"])
def test_counts_must_be_positive(tmp_path, capsys, option):
    _write(tmp_path)
    assert_usage_error(main, _argv(tmp_path, option, "0"), capsys, tmp_path, option)
