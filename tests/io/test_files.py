"""mlirkit.io.files: the one gzip-aware opener (by magic bytes, not by name) and the strict line readers."""
from __future__ import annotations

import gzip

import pytest

from mlirkit.base.errors import InputFormatError, MlirkitError
from mlirkit.io.files import is_gzip, iter_lines, open_binary, open_text, read_jsonl_objects, read_lines


def test_gzip_is_recognised_by_its_magic_bytes_not_its_name(tmp_path):
    packed = tmp_path / "lines.txt"  # compressed, with a plain-text name
    packed.write_bytes(gzip.compress("a\nb\n".encode()))
    plain = tmp_path / "lines.gz"  # plain text, with a gzip name
    plain.write_text("a\nb\n", encoding="utf-8")
    assert is_gzip(packed) and not is_gzip(plain)
    for path in (packed, plain):
        assert list(iter_lines(path)) == [(1, "a"), (2, "b")]
        with open_text(path) as f:
            assert f.read() == "a\nb\n"
        with open_binary(path) as f:
            assert f.read() == b"a\nb\n"


@pytest.mark.parametrize("reader", [lambda p: list(iter_lines(p)), lambda p: open_text(p).read(),
                                    lambda p: open_binary(p).read(), read_lines])
def test_truncated_gzip_is_an_error_naming_the_file(tmp_path, reader):
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(gzip.compress(b'{"a": 1}\n' * 100)[:20])
    with pytest.raises(MlirkitError, match=r"broken\.jsonl: cannot read") as e:
        reader(broken)
    assert str(broken) in str(e.value)


def test_corrupt_gzip_is_an_error_naming_the_file(tmp_path):
    bad = tmp_path / "bad.txt"
    data = bytearray(gzip.compress(b"hello world\n" * 50))
    data[12:20] = b"\xff" * 8
    bad.write_bytes(bytes(data))
    with pytest.raises(MlirkitError, match=r"bad\.txt: cannot read"):
        list(iter_lines(bad))


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(MlirkitError, match=r"nope\.txt: no such file"):
        list(iter_lines(tmp_path / "nope.txt"))
    with pytest.raises(MlirkitError, match="no such file"):
        open_text(tmp_path)  # a directory is not a file


def test_iter_lines_blank_comment_and_utf8_rules(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes(b"a\r\n\n  # note\nb\n")
    assert list(iter_lines(p)) == [(1, "a"), (3, "  # note"), (4, "b")]
    assert list(iter_lines(p, skip_comments=True)) == [(1, "a"), (4, "b")]
    assert read_lines(p) == ["a", "", "  # note", "b"]
    p.write_bytes(b"ok\nd\xff\n")
    with pytest.raises(InputFormatError, match=r"x\.txt:2: invalid UTF-8 at byte 1"):
        list(iter_lines(p))


def test_read_jsonl_objects(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(gzip.compress(b'{"a": 1}\n\n{"b": 2}\n'))
    assert list(read_jsonl_objects(p)) == [(1, {"a": 1}), (3, {"b": 2})]
    p.write_text('{"a": 1}\n[1]\n')
    with pytest.raises(InputFormatError, match=r"x\.jsonl:2: expected a JSON object"):
        list(read_jsonl_objects(p))
    p.write_text('{"a": \n')
    with pytest.raises(InputFormatError, match=r"x\.jsonl:1: invalid JSON"):
        list(read_jsonl_objects(p))
