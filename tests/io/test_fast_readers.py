"""The block line reader and the quick test of run lines against the readers they replace: every line
decoded and checked on its own (same dict, same order, same error message, on good and planted-bad files)."""
from __future__ import annotations

import gzip
import random

import pytest

import mlirkit.io.files as files
from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.io.fields import check_id
from mlirkit.io.trec import _check_ids, _check_run_line, read_qrels, read_run_with_tag

GOOD = [f"q{q} Q0 d{d} {r} {1.0 / r:.6f} tagA" for q in range(3) for r, d in enumerate((7, 3, 11, 5), 1)]
PLANTED = [
    "q1 Q0 d1 1 0.5", "q1 Q0 d1 1 0.5 tagA extra", "q1 Q0 d1 one 0.5 tagA", "q1 Q0 d1 1 high tagA",
    "q1 Q0 d1 1 nan tagA", "q1 Q0 d1 1 -inf tagA", "q1 Q0 d9 1 0.5 other", "q0 Q0 d7 9 0.1 tagA",
    "q1 Q0 d9 1 0.5 b@d/tag", "q\x00 Q0 d1 1 0.5 tagA", "q1 Q0 d\u200b 1 0.5 tagA", "q1 Q0 d\x7f 1 0.5 tagA",
    "q1 Q0 d1 1.5 0.5 tagA", "q1 Q0 d1 " + "9" * 5000 + " 0.5 tagA", "q1\u00a0Q0 d1 1 0.5 tagA",
]
ODD_BUT_GOOD = ["q9\tQ0\td1\t1\t0.5\ttagA", "q9 Q0 d2 +2 1e3 tagA", "q9 Q0 d3 3 -0 tagA", "  q9 Q0 d4 4 .5 tagA  ",
                "q9 Q0 d\u00e9 5 0.25 tagA", "# q9 Q0 d5 5 0.5 tagA", "", "   ", "q9 Q0 d6 6 1_0 tagA"]


def reference_read_run(path):
    """The run reader before the quick test: each line decoded on its own, every check on every line."""
    run, tag, tag_line = {}, None, 0
    for line_no, line in files._iter_lines_one_by_one(path):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        cols = line.split()
        score = _check_run_line(cols, path, line_no, tag, tag_line)
        if tag is None:
            tag, tag_line = cols[5], line_no
        docs = run.setdefault(cols[0], {})
        if cols[2] in docs:
            raise format_error(path, line_no, f"duplicate document {cols[2]!r} for query {cols[0]!r}")
        docs[cols[2]] = score
    if tag is None:
        raise MlirkitError(f"{path}: empty run (no result lines)")
    return run, tag


def outcome(read, path):
    """What a reader gives: its result with the order of its keys, or its error's type and message."""
    try:
        run, tag = read(path)
    except MlirkitError as e:
        return type(e).__name__, str(e)
    return [(q, list(docs.items())) for q, docs in run.items()], tag


def _files(tmp_path):
    rng = random.Random(0)
    texts = [GOOD, GOOD + ODD_BUT_GOOD, [], ["# only a comment"]]
    texts += [GOOD[:k] + [bad] + GOOD[k:] for bad in PLANTED for k in (0, 5)]
    texts += [rng.sample(GOOD + ODD_BUT_GOOD + PLANTED[:3], 12) for _ in range(20)]
    for i, lines in enumerate(texts):
        yield f"text{i}", "\n".join(lines).encode("utf-8") + b"\n"
    body = "\n".join(GOOD).encode("utf-8")
    yield "bom-crlf", b"\xef\xbb\xbf" + body.replace(b"\n", b"\r\n") + b"\r\n"
    yield "no-final-newline", body
    yield "bad-utf8-late", body + b"\nq5 Q0 d\xff 1 0.5 tagA\n"
    yield "bad-line-before-bad-utf8", body + b"\nq5 Q0 d1 x 0.5 tagA\n" + b"q5 Q0 d\xc3 1 0.5 tagA\n"
    yield "stray-cr", body.replace(b"\n", b"\r\r\n", 3)
    yield "gzip", gzip.compress(body + b"\n")
    yield "truncated-gzip", gzip.compress((body + b"\n") * 50)[:300]


@pytest.mark.parametrize("block_bytes", [1 << 20, 40])  # one block, and a block every line or two
def test_read_run_equals_the_line_by_line_reader(tmp_path, monkeypatch, block_bytes):
    monkeypatch.setattr(files, "BLOCK_BYTES", block_bytes)
    for name, data in _files(tmp_path):
        path = tmp_path / f"{name}.trec"
        path.write_bytes(data)
        assert outcome(read_run_with_tag, path) == outcome(reference_read_run, path), name


@pytest.mark.parametrize("block_bytes", [1 << 20, 40])
def test_iter_lines_equals_the_line_by_line_reader(tmp_path, monkeypatch, block_bytes):
    monkeypatch.setattr(files, "BLOCK_BYTES", block_bytes)

    def lines(read, path, **kwargs):
        try:
            return list(read(path, **kwargs))
        except MlirkitError as e:
            return type(e).__name__, str(e)

    def one_by_one(path, skip_comments=False, keep_blank=False):
        for line_no, line in files._iter_lines_one_by_one(path):
            stripped = line.strip()
            if keep_blank or (stripped and not (skip_comments and stripped.startswith("#"))):
                yield line_no, line

    for name, data in _files(tmp_path):
        path = tmp_path / f"{name}.txt"
        path.write_bytes(data)
        for kwargs in ({}, {"skip_comments": True}, {"keep_blank": True}):
            assert lines(files.iter_lines, path, **kwargs) == lines(one_by_one, path, **kwargs), (name, kwargs)


def test_quick_id_check_accepts_only_what_check_id_accepts(tmp_path):
    rng = random.Random(1)
    alphabet = ["a", "7", " ", "\t", "\x00", "\x7f", "\u200b", "\u00a0", "\u00e9", "\ud800", "#", "\u2028"]
    for _ in range(3000):
        qid, docno = ("".join(rng.choices(alphabet, k=rng.randint(0, 3))) for _ in range(2))

        def reference():
            check_id(qid, "f:1", "query id")
            check_id(docno, "f:1", "document id")

        def quick():
            _check_ids(qid, docno, "f", 1)

        got = [None, None]
        for i, fn in enumerate((reference, quick)):
            try:
                fn()
            except MlirkitError as e:
                got[i] = str(e)
        assert got[0] == got[1], (qid, docno)


def test_read_qrels_with_the_quick_id_check(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("query-id\tcorpus-id\tscore\nq1\td 1\t1\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"q\.tsv:2: invalid document id 'd 1'.*found ' '"):
        read_qrels(p)
    p.write_text("q1 0 d1 1\nq1 0 d\u200b 2\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"q\.tsv:2: invalid document id"):
        read_qrels(p)
