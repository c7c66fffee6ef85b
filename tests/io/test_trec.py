from __future__ import annotations

import gzip

import pytest

from mlirkit.base.errors import InputFormatError, MlirkitError
from mlirkit.io.trec import (ranked, read_qrels, read_run, read_run_tag, read_run_with_tag, validate_run_tag,
                             write_qrels, write_run)


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_read_run_basic_and_string_ids(tmp_path):
    p = _write(tmp_path / "r.trec", "# comment\n001 Q0 0042 1 1.5 tagA\n\n001 Q0 d2 2 0.5 tagA\n2 Q0 d1 1 -3 tagA\n")
    run, tag = read_run_with_tag(p)
    assert tag == "tagA"
    assert run == {"001": {"0042": 1.5, "d2": 0.5}, "2": {"d1": -3.0}}
    assert all(isinstance(q, str) for q in run)
    assert read_run(p) == run and read_run_tag(p) == "tagA"


@pytest.mark.parametrize("line, message", [
    ("q1 Q0 d1 1 0.5", "expected 6 columns"),
    ("q1 Q0 d1 1 0.5 tag extra", "expected 6 columns"),
    ("q1 Q0 d1 one 0.5 tag", "rank 'one' is not an integer"),
    ("q1 Q0 d1 1 high tag", "score 'high' is not a number"),
    ("q1 Q0 d1 1 nan tag", "is not finite"),
    ("q1 Q0 d1 1 inf tag", "is not finite"),
    ("q1 Q0 d9 1 0.5 other", "run tag 'other' differs from 'tag' on line 1"),
    ("q1 Q0 d1 2 0.4 tag", "duplicate document 'd1' for query 'q1'"),
    ("q1 Q0 d9 1 0.5 b@d/tag", "invalid run tag"),
])
def test_read_run_rejects_bad_line_with_its_number(tmp_path, line, message):
    p = _write(tmp_path / "r.trec", "q1 Q0 d1 1 0.5 tag\n# note\n" + line + "\n")
    with pytest.raises(InputFormatError) as e:
        read_run(p)
    assert str(e.value).startswith(f"{p}:3: ")
    assert message in str(e.value)


def test_read_run_empty_missing_and_bad_utf8(tmp_path):
    with pytest.raises(MlirkitError, match="empty run"):
        read_run(_write(tmp_path / "e.trec", "# nothing\n\n"))
    with pytest.raises(MlirkitError, match="no such file"):
        read_run(tmp_path / "missing.trec")
    bad = tmp_path / "b.trec"
    bad.write_bytes(b"q1 Q0 d1 1 0.5 t\nq1 Q0 d\xff 2 0.4 t\n")
    with pytest.raises(InputFormatError, match=r"b.trec:2: invalid UTF-8"):
        read_run(bad)


def test_gzip_is_accepted_by_magic_and_extension(tmp_path):
    text = "q1 Q0 d1 1 0.5 t\n"
    p = tmp_path / "r.trec.gz"
    p.write_bytes(gzip.compress(text.encode()))
    assert read_run(p) == {"q1": {"d1": 0.5}}
    q = tmp_path / "r_no_ext"
    q.write_bytes(gzip.compress(text.encode()))
    assert read_run(q) == {"q1": {"d1": 0.5}}
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(text.encode())[:12])
    with pytest.raises(MlirkitError, match="cannot read"):
        read_run(broken)


def test_write_run_order_ranks_newline_and_round_trip(tmp_path):
    run = {"q2": {"b": 0.5, "a": 0.5, "c": 0.9}, "q1": {"z": 0.1 + 0.2, "y": 1e-17}}
    p = tmp_path / "run.trec"
    write_run(run, p, "my-run")
    text = p.read_text()
    assert text.endswith("\n")
    assert text.splitlines() == [
        "q1 Q0 z 1 0.30000000000000004 my-run",
        "q1 Q0 y 2 1e-17 my-run",
        "q2 Q0 c 1 0.9 my-run",
        "q2 Q0 a 2 0.5 my-run",  # tie broken by docno
        "q2 Q0 b 3 0.5 my-run",
    ]
    assert read_run_with_tag(p) == (run, "my-run")  # exact floats survive


def test_write_run_depth_gzip_deterministic_and_overwrite(tmp_path):
    run = {"q": {f"d{i}": float(i) for i in range(5)}}
    p = tmp_path / "r.trec.gz"
    write_run(run, p, "t", k=2)
    first = p.read_bytes()
    assert first[:2] == b"\x1f\x8b"
    assert read_run(p) == {"q": {"d4": 4.0, "d3": 3.0}}
    with pytest.raises(MlirkitError, match="already exists"):
        write_run(run, p, "t")
    write_run(run, p, "t", overwrite=True, k=2)
    assert p.read_bytes() == first  # mtime=0: same content, same bytes
    assert sorted(f.name for f in tmp_path.iterdir()) == ["r.trec.gz", "r.trec.gz.provenance.json"]  # no temporary left


def test_write_run_refuses_bad_tag_ids_and_scores(tmp_path):
    for tag in ["", "has space", "x" * 129, "tab\t"]:
        with pytest.raises(MlirkitError, match="invalid run tag"):
            validate_run_tag(tag)
    with pytest.raises(MlirkitError, match="invalid document id"):
        write_run({"q": {"d 1": 1.0}}, tmp_path / "a", "t")
    with pytest.raises(MlirkitError, match="invalid document id 'x y'"):  # ids are checked once, each of them
        write_run({"q1": {"d": 1.0}, "q2": {"d": 1.0, "x y": 0.5}}, tmp_path / "a", "t")
    with pytest.raises(MlirkitError, match="invalid query id"):
        write_run({"": {"d": 1.0}}, tmp_path / "b", "t")
    with pytest.raises(MlirkitError, match="non-finite"):
        write_run({"q": {"d": float("nan")}}, tmp_path / "c", "t")
    assert not any(tmp_path.iterdir())  # failures leave nothing behind


def test_ranked():
    assert ranked({"b": 1.0, "a": 1.0, "c": 2.0}) == [("c", 2.0), ("a", 1.0), ("b", 1.0)]


def test_read_qrels_trec_and_beir(tmp_path):
    trec = _write(tmp_path / "q.txt", "q1 0 d1 1\nq1 Q0 d2 0\n# c\n007\t0\td3\t2\n")
    assert read_qrels(trec) == {"q1": {"d1": 1, "d2": 0}, "007": {"d3": 2}}
    beir = _write(tmp_path / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t0\n")
    assert read_qrels(beir) == {"q1": {"d1": 1}, "q2": {"d2": 0}}
    # issue 13: an id with a space inside cannot be written to a TREC run, so it is refused where read
    _write(beir, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td 2\t0\n")
    with pytest.raises(MlirkitError, match=r"test\.tsv:3: invalid document id 'd 2'"):
        read_qrels(beir)


@pytest.mark.parametrize("text, line, message", [
    ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 columns"),
    ("q1 0 d1 1\nq1 0 d2 1 x\n", 2, "expected 4 columns"),
    ("q1 0 d1 1\nq1 0 d2 0.5\n", 2, "relevance '0.5' is not an integer"),
    ("q1 0 d1 1\nq1 0 d1 2\n", 2, "duplicate judgement of document 'd1' for query 'q1'"),
    ("q1\td1\t1\n", 1, "must start with the header"),
    ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, "expected 3 tab-separated columns"),
    ("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", 2, "relevance 'yes' is not an integer"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t0\n", 3, "duplicate judgement"),
    ("query-id\tcorpus-id\tscore\n\td1\t1\n", 2, "empty query or document id"),
])
def test_read_qrels_rejects_bad_lines(tmp_path, text, line, message):
    p = _write(tmp_path / "qrels", text)
    with pytest.raises(InputFormatError) as e:
        read_qrels(p)
    assert str(e.value).startswith(f"{p}:{line}: ")
    assert message in str(e.value)


def test_read_qrels_empty(tmp_path):
    with pytest.raises(MlirkitError, match="empty qrels"):
        read_qrels(_write(tmp_path / "q", "\n# x\n"))
    with pytest.raises(MlirkitError, match="empty qrels"):
        read_qrels(_write(tmp_path / "h.tsv", "query-id\tcorpus-id\tscore\n"))


def test_write_qrels_round_trips_both_formats(tmp_path):
    qrels = {"q2": {"b": 0, "a": 2}, "q1": {"x": 1}}
    write_qrels(qrels, tmp_path / "q.txt")
    assert (tmp_path / "q.txt").read_text() == "q1 0 x 1\nq2 0 a 2\nq2 0 b 0\n"
    assert read_qrels(tmp_path / "q.txt") == qrels
    write_qrels(qrels, tmp_path / "q.tsv.gz", beir=True)
    assert read_qrels(tmp_path / "q.tsv.gz") == qrels
    with pytest.raises(MlirkitError, match="already exists"):
        write_qrels(qrels, tmp_path / "q.txt")
    with pytest.raises(MlirkitError, match="must be an integer"):
        write_qrels({"q": {"d": 0.5}}, tmp_path / "bad.txt")


def test_default_run_tag_is_the_file_stem():
    from mlirkit.io.trec import default_run_tag

    assert default_run_tag("runs/shift.trec") == "shift"
    assert default_run_tag("runs/base.trec.gz") == "base"
    assert default_run_tag("e5 small@0.6.txt") == "e5_small@0.6"
    assert default_run_tag("run") == "run"
    assert default_run_tag(".hidden") == ".hidden"
