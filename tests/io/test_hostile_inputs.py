"""Hostile inputs to the readers (issue 13): every one ends in one :class:`MlirkitError` naming file and
line; ids and languages are validated where they are read; a byte-order mark never reaches an id."""
from __future__ import annotations

import gzip
import json
import os

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, check_lang
from mlirkit.io.corpus import read_corpus
from mlirkit.io.doc_langs import read_doc_langs
from mlirkit.io.fields import check_id, check_text
from mlirkit.io.qrels import read_qrels
from mlirkit.io.topics import read_topics
from mlirkit.io.trec import read_run
from mlirkit.transforms.parallel import read_parallel_jsonl

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("code", ["en", "pt-BR", "zh-Hant", "dt", "sr-Latn-RS", "yue", "und"])
def test_valid_language_codes(code):
    assert check_lang(code, "f:1") == code


@pytest.mark.parametrize("name", ["unknown", "und", "", None])
def test_unknown_names_normalise_to_und(name):
    assert check_lang(name, "f:1") == UNKNOWN


@pytest.mark.parametrize("value", [["en"], 1, 1.5, float("nan"), True, {"a": 1}, "en_US", "english", "e", "en ",
                                   "pt-", "zh-Hant-toolongsubtag", "e1"])
def test_invalid_languages(value):
    with pytest.raises(MlirkitError, match=r"^f:3: invalid language"):
        check_lang(value, "f:3")


def test_ids_integers_coerced_others_refused():
    assert check_id("d-1/x", "f:1") == "d-1/x"
    assert check_id(123, "f:1") == "123" and check_id(-4, "f:1") == "-4"
    for bad in (1.0, True, None, ["d1"], {"d": 1}):
        with pytest.raises(MlirkitError, match=r"^f:2: id must be a string or an integer"):
            check_id(bad, "f:2")
    for bad in ("", "d 1", "d\t1", "d\x00", "d\u2028", "d\u200b", "\ufeffd1", "d\x85"):
        with pytest.raises(MlirkitError, match=r"^f:2: (empty|invalid) id"):
            check_id(bad, "f:2")


def test_text_must_be_a_unicode_string():
    assert check_text("café", "f:1") == "café"
    with pytest.raises(MlirkitError, match=r"field 'text' must be a string, got int"):
        check_text(5, "f:1")
    with pytest.raises(MlirkitError, match="lone surrogate"):
        check_text("a\ud800", "f:1")


def _jsonl(path, *objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def test_corpus_ids_texts_and_languages(tmp_path):
    p = _jsonl(tmp_path / "c.jsonl", {"_id": 7, "text": "a", "lang": "unknown"}, {"_id": "d2", "text": "b", "lang": "pt-BR"})
    assert [tuple(d) for d in read_corpus(p)] == [("7", "a", UNKNOWN), ("d2", "b", "pt-BR")]
    for obj, message in [({"_id": 1.5, "text": "a", "lang": "en"}, "must be a string or an integer, got float"),
                         ({"_id": None, "text": "a", "lang": "en"}, "got null"),
                         ({"_id": "d 1", "text": "a", "lang": "en"}, "invalid document id"),
                         ({"_id": "d1", "text": 5, "lang": "en"}, "field 'text' must be a string, got int"),
                         ({"_id": "d1", "title": ["x"], "text": "a", "lang": "en"}, "field 'title' must be a string"),
                         ({"_id": "d1", "text": "a", "lang": ["en"]}, "invalid language list"),
                         ({"_id": "d1", "text": "a", "lang": 3}, "invalid language int")]:
        _jsonl(p, {"_id": "d0", "text": "x", "lang": "en"}, obj)
        with pytest.raises(MlirkitError, match=rf"c\.jsonl:2: .*{message}"):
            list(read_corpus(p))
    t = tmp_path / "c.tsv"
    t.write_text("d1\ttext\ten_US\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"c\.tsv:1: invalid language 'en_US'"):
        list(read_corpus(t))


def test_topics_unknown_gets_the_default_and_ids_are_checked(tmp_path):
    p = _jsonl(tmp_path / "q.jsonl", {"_id": 1, "text": "a", "lang": "unknown"}, {"_id": "q2", "text": "b"},
               {"_id": "q3", "text": "c", "lang": "de"})
    assert [tuple(q) for q in read_topics(p)] == [("1", "a", UNKNOWN), ("q2", "b", UNKNOWN), ("q3", "c", "de")]
    assert [q.lang for q in read_topics(p, default_lang="en")] == ["en", "en", "de"]
    _jsonl(p, {"_id": "q\x001", "text": "a"})
    with pytest.raises(MlirkitError, match=r"q\.jsonl:1: invalid query id"):
        read_topics(p)
    _jsonl(p, {"_id": "q1", "text": 12})
    with pytest.raises(MlirkitError, match=r"q\.jsonl:1: field 'text' must be a string"):
        read_topics(p)


def test_doc_langs_and_parallel_validate(tmp_path):
    p = tmp_path / "l.tsv"
    p.write_text("d1\tunknown\nd2\tzh-Hant\n", encoding="utf-8")
    assert read_doc_langs(p) == {"d1": UNKNOWN, "d2": "zh-Hant"}
    p.write_text("d1\ten\nd\x002\tde\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"l\.tsv:2: invalid document id"):
        read_doc_langs(p)
    j = _jsonl(tmp_path / "l.jsonl", {"id": 1.0, "lang": "en"})
    with pytest.raises(MlirkitError, match=r"l\.jsonl:1: document id must be a string or an integer, got float"):
        read_doc_langs(j)
    par = _jsonl(tmp_path / "p.jsonl", {"id": 1, "lang": "en", "text": "a"}, {"id": 1, "lang": "unknown", "text": "b"})
    assert [tuple(g) for g in read_parallel_jsonl(par)] == [("1", {"en": "a", UNKNOWN: "b"})]
    _jsonl(par, {"id": "g", "lang": "en", "text": 3})
    with pytest.raises(MlirkitError, match=r"p\.jsonl:1: field 'text' must be a string"):
        list(read_parallel_jsonl(par))


def test_index_langs_file_is_validated(tmp_path):
    idx = tmp_path / "idx"
    idx.mkdir()
    (idx / "index").write_bytes(b"x")
    (idx / "docid").write_text("d1\nd2\n", encoding="utf-8")
    (idx / "langs").write_text("unknown\nen\n", encoding="utf-8")
    assert read_doc_langs(idx) == {"d1": UNKNOWN, "d2": "en"}
    (idx / "langs").write_text("en\n[1]\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=r"langs:2: invalid language '\[1\]'"):
        read_doc_langs(idx)


# a byte-order mark at the start of a file is dropped, in every format, plain or gzip
BOM_CASES = [
    ("c.tsv", b"d1\thello\ten\n", lambda p: [d.doc_id for d in read_corpus(p)], ["d1"]),
    ("c.jsonl", b'{"_id": "d1", "text": "hello", "lang": "en"}\n', lambda p: [d.doc_id for d in read_corpus(p)], ["d1"]),
    ("q.tsv", b"q1\thello\n", lambda p: [q.query_id for q in read_topics(p)], ["q1"]),
    ("q.jsonl", b'{"_id": "q1", "text": "hello"}\n', lambda p: [q.query_id for q in read_topics(p)], ["q1"]),
    ("qrels.txt", b"q1 0 d1 1\n", lambda p: list(read_qrels(p)), ["q1"]),
    ("qrels.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n", lambda p: list(read_qrels(p)), ["q1"]),
    ("run.txt", b"q1 Q0 d1 1 2.5 t\n", lambda p: list(read_run(p)), ["q1"]),
    ("l.tsv", b"d1\ten\n", lambda p: list(read_doc_langs(p)), ["d1"]),
    ("p.jsonl", b'{"id": "g1", "lang": "en", "text": "a"}\n', lambda p: [g.id for g in read_parallel_jsonl(p)], ["g1"]),
]


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("name, data, first_ids, expected", BOM_CASES, ids=[c[0] for c in BOM_CASES])
def test_byte_order_mark_is_stripped(tmp_path, name, data, first_ids, expected, compress):
    p = tmp_path / name
    p.write_bytes(gzip.compress(BOM + data) if compress else BOM + data)
    assert first_ids(p) == expected


READ_ANY = [lambda p: list(read_corpus(p, default_lang="en")), read_topics, read_qrels, read_run, read_doc_langs,
            lambda p: list(read_parallel_jsonl(p))]


@pytest.mark.parametrize("read", READ_ANY)
@pytest.mark.parametrize("data, message", [
    (b"\x1f\x8bnot really gzip", "cannot read"),
    (gzip.compress(b'{"_id": "d1", "text": "a", "lang": "en"}\n' * 50, mtime=0)[:-12], None),  # (a bad record may come first)
    (b"ok\td\xff\n", "invalid UTF-8"),
    (b"[" * 100000 + b"\n", ":1: "),
    (b"1" * 5000 + b"\n", ":1: "),
])
def test_hostile_bytes_give_one_error(tmp_path, read, data, message):
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    with pytest.raises(MlirkitError, match=message) as info:
        read(p)
    assert "x.jsonl" in str(info.value) and "\n" not in str(info.value)


def test_deep_json_and_huge_integers_name_the_line(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"_id": "d0", "text": "a", "lang": "en"}\n{"_id": ' + b"[" * 100000 + b"\n")
    with pytest.raises(MlirkitError, match=r"c\.jsonl:2: invalid JSON \(nested too deeply\)"):
        list(read_corpus(p))
    p.write_bytes(b'{"_id": ' + b"9" * 5000 + b', "text": "a", "lang": "en"}\n')
    with pytest.raises(MlirkitError, match=r"c\.jsonl:1: invalid JSON"):
        list(read_corpus(p))


@pytest.mark.parametrize("read", READ_ANY)
def test_directory_or_unreadable_file(tmp_path, read):
    with pytest.raises(MlirkitError):
        read(tmp_path / "missing.jsonl")
    if os.geteuid() != 0:  # root reads every file
        p = tmp_path / "locked.jsonl"
        p.write_text("x\n")
        p.chmod(0)
        with pytest.raises(MlirkitError, match=r"locked\.jsonl: cannot read"):
            read(p)


def test_directory_given_for_a_file(tmp_path):
    from mlirkit.io.files import iter_lines

    with pytest.raises(MlirkitError, match="it is a directory"):
        list(iter_lines(tmp_path))


def test_unreadable_file_and_read_error_are_one_error(tmp_path, monkeypatch):
    """Permission denied when opening, an I/O error in the middle of a file (root reads every file, so both
    are simulated): one MlirkitError naming the file."""
    import io as _io

    import mlirkit.io.files as files

    p = tmp_path / "c.tsv"
    p.write_text("d1\ta\ten\nd2\tb\ten\n", encoding="utf-8")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files, "open", denied, raising=False)
    with pytest.raises(MlirkitError, match=r"c\.tsv: cannot read \(.*Permission denied"):
        list(read_corpus(p))
    monkeypatch.undo()

    class Failing(_io.BytesIO):
        def readline(self, size=-1):
            if self.tell() > 0:
                raise OSError(5, "Input/output error")
            return super().readline(size)

    monkeypatch.setattr(files, "open_binary", lambda path: Failing(p.read_bytes()))
    with pytest.raises(MlirkitError, match=r"c\.tsv: cannot read \(.*Input/output error"):
        list(read_corpus(p))
