"""Property-based tests of every reader (issue 13): whatever the bytes, a reader either yields valid
records or raises :class:`MlirkitError`; no other exception escapes.

The default suite runs a few hundred generated files per reader; the ``slow`` run a few thousand.
"""
from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, is_lang_code
from mlirkit.io.corpus import read_corpus
from mlirkit.io.doc_langs import read_doc_langs
from mlirkit.io.fields import check_id
from mlirkit.io.qrels import read_qrels
from mlirkit.io.topics import read_topics
from mlirkit.io.trec import read_run_with_tag
from mlirkit.transforms.parallel import read_parallel_jsonl
from tests.helpers import examples

FAST = 200
SLOW = examples(default=300, thorough=3000)  # the slow tests' random examples per reader

KEYS = ["_id", "id", "docid", "doc_id", "text", "title", "contents", "lang"]
WORDS = ["q1", "d1", "d2", "en", "pt-BR", "zh-Hant", "dt", "und", "unknown", "", "0", "1", "-1", "Q0", "tag",
         "1.5", "nan", "inf", "1e999", "query-id", "corpus-id", "score", "#", "{", "}", "\u00a0", "\x00", "\ufeff",
         "d\u2028x", "[1]", "1" * 5000, "[" * 3000]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=8), st.sampled_from(WORDS))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
# values near the edge of what is valid, for records that are almost well-formed
GOOD_IDS = st.text(alphabet="abcdq0123456789/-_", min_size=1, max_size=5)
IDS = st.one_of(*[GOOD_IDS] * 8, st.integers(-10, 10**20), st.text(max_size=4),
                st.sampled_from(["d\x00", "d\u200b", " d1", "d 1", "", "d\x1f"]))
GOOD_LANGS = st.sampled_from(["en", "de", "pt-BR", "zh-Hant", "dt", "und", "unknown", "sr-Latn-RS"])
LANGS = st.one_of(*[GOOD_LANGS] * 6, st.text(max_size=4),
                  st.sampled_from(["", "en_US", "english", "e", "x-1", "en-"]))
GOOD_NUMBERS = st.one_of(st.integers(-3, 3).map(str), st.floats(-5, 5).map(repr))
NUMBERS = st.one_of(*[GOOD_NUMBERS] * 6, st.integers(10**20, 10**30).map(str),
                    st.floats().map(repr), st.sampled_from(["x", "", "1" * 5000]))
GOOD_TEXTS = st.sampled_from(["hello world", "caf\u00e9 au lait", "x", "a b c"])
TEXTS = st.one_of(*[GOOD_TEXTS] * 6, st.sampled_from([" ", "", "\ud800"]), st.text(max_size=10))


CLEAN = {"ids": GOOD_IDS, "langs": GOOD_LANGS, "numbers": GOOD_NUMBERS, "texts": GOOD_TEXTS}
HOSTILE = {"ids": IDS, "langs": LANGS, "numbers": NUMBERS, "texts": TEXTS}


@st.composite
def json_line(draw, pools: dict | None = None) -> str:
    if pools is None:
        if draw(st.booleans()):
            return json.dumps(draw(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=5)))
        pools = HOSTILE
    hostile = pools is HOSTILE
    obj = {draw(st.sampled_from(["_id", "id"])): draw(st.one_of(*[pools["ids"]] * 6, JSON_VALUES) if hostile
                                                      else pools["ids"]),
           "text": draw(st.one_of(*[pools["texts"]] * 6, JSON_VALUES) if hostile else pools["texts"])}
    if draw(st.integers(0, 5)):
        obj["lang"] = draw(st.one_of(*[pools["langs"]] * 6, JSON_VALUES) if hostile else pools["langs"])
    if hostile and draw(st.integers(0, 5)) == 0:
        obj[draw(st.sampled_from(["title", "contents", "docid"]))] = draw(JSON_VALUES)
    return json.dumps(obj, ensure_ascii=draw(st.booleans()))


COLUMN_SHAPES = {  # name -> function drawing the columns of one line from pools, and the separator
    "run": (lambda d, p: [str(d(p["ids"])), "Q0", str(d(p["ids"])), d(st.integers(1, 9).map(str)) if p is CLEAN
                          else d(p["numbers"]), d(p["numbers"]), d(st.sampled_from(["t"] * 9 + ["x y"]))], " "),
    "qrels": (lambda d, p: [str(d(p["ids"])), "0", str(d(p["ids"])), d(st.integers(0, 3).map(str)) if p is CLEAN
                            else d(p["numbers"])], " "),
    "beir": (lambda d, p: [str(d(p["ids"])), str(d(p["ids"])), d(st.integers(0, 3).map(str)) if p is CLEAN
                           else d(p["numbers"])], "\t"),
    "tsv3": (lambda d, p: [str(d(p["ids"])), d(p["texts"]), d(p["langs"])], "\t"),
    "tsv2": (lambda d, p: [str(d(p["ids"])), d(p["texts"])], "\t"),
    "ws2": (lambda d, p: [str(d(p["ids"])), d(p["langs"])], " "),
}


@st.composite
def column_line(draw, shape: str | None = None, pools: dict | None = None) -> str:
    if shape is None:
        cols = draw(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), min_size=1, max_size=7))
        return draw(st.sampled_from(["\t", " ", "  "])).join(cols)
    make, sep = COLUMN_SHAPES[shape]
    return sep.join(make(draw, pools or HOSTILE))


# lines that break naive parsers: deep nesting (RecursionError), integers beyond int max str digits (ValueError)
PATHOLOGICAL = st.sampled_from(["[" * 3000, '{"_id": ' + "[" * 3000, "1" * 5000, '{"_id": ' + "9" * 5000 + "}",
                                '{"_id": "d1", "text": "a", "lang": "en", "x": ' + "-" + "7" * 4400 + "}", "\ufeff{}",
                                '{"_id": "d1", "text": "\\ud800", "lang": "en"}', '{"_id": NaN, "text": "a"}'])
JUNK = st.one_of(json_line(), column_line(), st.text(max_size=20), st.sampled_from(WORDS), PATHOLOGICAL, PATHOLOGICAL)


@st.composite
def hostile_file(draw, shapes: tuple[str, ...] = ("json",)) -> bytes:
    """Arbitrary bytes, or lines of one shape (mostly one of the reader's ``shapes``: records near the
    edge of valid) with junk lines mixed in, with a BOM, gzip-compressed, cut or a fake gzip header."""
    others = ["bytes", "junk", "json", *COLUMN_SHAPES]
    shape = draw(st.sampled_from(shapes)) if draw(st.integers(0, 3)) else draw(st.sampled_from(others))
    if shape == "bytes":
        return draw(st.binary(max_size=300))
    clean = draw(st.booleans())  # lines from valid values only, or from values near the edge of valid
    pools = CLEAN if clean else HOSTILE
    good = json_line(pools) if shape == "json" else JUNK if shape == "junk" else column_line(shape, pools)
    lines = draw(st.lists(good, min_size=1, max_size=4))
    if not clean and draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(JUNK))
    if shape == "beir" and draw(st.integers(0, 3)):
        lines.insert(0, "query-id\tcorpus-id\tscore")
    newline = draw(st.sampled_from(["\n", "\r\n"] if clean else ["\n", "\n", "\r\n", "\r"]))
    data = newline.join(lines).encode("utf-8", "surrogatepass")  # lone surrogates: invalid UTF-8
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    wrap = draw(st.sampled_from(["plain", "gzip"] if clean else ["plain", "plain", "gzip", "cut-gzip", "fake-gzip"]))
    if wrap == "gzip":
        data = gzip.compress(data)
    elif wrap == "cut-gzip":
        packed = gzip.compress(data)
        data = packed[:draw(st.integers(0, max(len(packed) - 1, 0)))]
    elif wrap == "fake-gzip":
        data = b"\x1f\x8b" + data
    return data


def _valid_id(value: object) -> bool:
    return isinstance(value, str) and check_id(value, "x") == value


def _valid_lang(value: object) -> bool:
    return value == UNKNOWN or is_lang_code(value)


def _corpus(path):
    docs = list(read_corpus(path, default_lang="en"))
    for d in docs:
        assert _valid_id(d.doc_id) and _valid_lang(d.lang) and isinstance(d.text, str) and d.text.strip()


def _topics(path):
    for q in read_topics(path):
        assert _valid_id(q.query_id) and _valid_lang(q.lang) and isinstance(q.text, str) and q.text.strip()


def _qrels(path):
    for qid, docs in read_qrels(path).items():
        assert _valid_id(qid) and docs
        assert all(_valid_id(d) and type(rel) is int for d, rel in docs.items())


def _run(path):
    run, tag = read_run_with_tag(path)
    assert isinstance(tag, str) and tag
    for qid, docs in run.items():
        assert _valid_id(qid)
        assert all(_valid_id(d) and math.isfinite(s) for d, s in docs.items())


def _doc_langs(path):
    for doc_id, lang in read_doc_langs(path).items():
        assert _valid_id(doc_id) and _valid_lang(lang)


def _parallel(path):
    for group in read_parallel_jsonl(path):
        assert _valid_id(group.id)
        assert all(_valid_lang(lang) and isinstance(t, str) for lang, t in group.texts.items())


READERS = {  # file name -> (reader, the shapes of lines it reads)
    "corpus.jsonl": (_corpus, ("json",)), "corpus.tsv": (_corpus, ("tsv3", "tsv2")),
    "queries.jsonl": (_topics, ("json",)), "topics.tsv": (_topics, ("tsv3", "tsv2")),
    "qrels.txt": (_qrels, ("qrels", "beir")), "run.txt": (_run, ("run",)),
    "doc-langs.tsv": (_doc_langs, ("tsv3", "tsv2", "ws2")), "doc-langs.jsonl": (_doc_langs, ("json",)),
    "parallel.jsonl": (_parallel, ("json",)),
}


def _check(tmp_path, name: str, data: bytes) -> bool:
    """True when ``data`` parsed into valid records, False when the reader raised MlirkitError."""
    path = tmp_path / name
    path.write_bytes(data)
    try:
        READERS[name][0](path)
        return True
    except MlirkitError as e:
        assert str(e) and "\n" not in str(e)
        return False


COMMON = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.filter_too_much])


def _run_examples(tmp_path, name: str, n: int, derandomize: bool) -> None:
    outcomes = []

    @settings(max_examples=n, **{**COMMON, "derandomize": derandomize})
    @given(data=hostile_file(READERS[name][1]))
    def check(data):
        outcomes.append(_check(tmp_path, name, data))

    check()
    # the inputs reach the parsers: some files are valid, most are refused
    assert 0 < sum(outcomes) < len(outcomes), f"{sum(outcomes)} of {len(outcomes)} files parsed"


@pytest.mark.parametrize("name", sorted(READERS))
def test_reader_yields_valid_records_or_mlirkit_error(tmp_path, name):
    _run_examples(tmp_path, name, FAST, derandomize=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(READERS))
def test_reader_survives_thousands_of_hostile_files(tmp_path, name):
    _run_examples(tmp_path, name, SLOW, derandomize=False)


# ---------------------------------------------------------------------------------------------- binary formats
# Valid files of every binary format mlirkit reads, damaged the ways files are: cut short, bytes overwritten,
# junk appended, replaced by random bytes. Whatever the bytes, the reader gives a sound value or one
# MlirkitError line; no other exception escapes.

def _valid_binary(name: str, directory) -> bytes:
    import faiss
    import torch
    from safetensors.numpy import save

    from mlirkit.transforms.io import save_transform
    from mlirkit.transforms.shift_transform import ShiftTransform

    path = directory / f"valid-{name}"
    if name == "model.safetensors":
        return save({"w": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.ones(2, dtype=np.int64)})
    if name == "embeddings.npy":
        np.save(path, np.arange(12, dtype=np.float32).reshape(3, 4))
    elif name == "transform.safetensors":
        save_transform(ShiftTransform.from_tensors({"de": np.full(4, 0.1, np.float32), "fr": np.zeros(4, np.float32)},
                                      encoder={"model": "m"}, source_lang="en"), path, overwrite=True)
    elif name == "vectors.pt":
        torch.save({"source_lang": "en", "model_name": "m", "v_de": torch.ones(4)}, path)
    elif name == "index":
        index = faiss.IndexFlatIP(4)
        index.add(np.eye(4, dtype=np.float32)[:3])
        faiss.write_index(index, str(path))
    return path.read_bytes()


def _read_safetensors(path):
    from safetensors.numpy import load_file

    from mlirkit.io.binary import check_safetensors

    header = check_safetensors(path)
    tensors = load_file(str(path))  # what passes the check, the library loads
    assert sorted(tensors) == sorted(k for k in header if k != "__metadata__")


def _read_npy(path):
    from mlirkit.io.binary import load_npy

    array = load_npy(path)
    assert not array.dtype.hasobject


def _read_transform(path):
    from mlirkit.transforms.io import load_transform

    t = load_transform(path)
    assert all(is_lang_code(la) for la in t.languages) and is_lang_code(t.source_lang)


def _read_pt(path):
    from mlirkit.transforms.io import read_shift_pt

    _, source, vectors = read_shift_pt(path)
    assert is_lang_code(source) and vectors and all(is_lang_code(la) for la in vectors)


def _read_faiss(path):
    from mlirkit.index import DenseIndex

    (path.parent / "docid").write_text("d0\nd1\nd2\n", "utf-8")
    DenseIndex(path.parent).faiss_index


BINARY_READERS = {"model.safetensors": _read_safetensors, "embeddings.npy": _read_npy,
                  "transform.safetensors": _read_transform, "vectors.pt": _read_pt, "index": _read_faiss}


@st.composite
def damaged(draw, valid: bytes) -> bytes:
    kind = draw(st.sampled_from(["cut", "overwrite", "append", "random", "valid"]))
    if kind == "cut":
        return valid[: draw(st.integers(0, max(len(valid) - 1, 0)))]
    if kind == "overwrite":
        data = bytearray(valid)
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "append":
        return valid + draw(st.binary(min_size=1, max_size=64))
    if kind == "random":
        return draw(st.binary(max_size=256))
    return valid


def _run_binary_examples(tmp_path, name: str, n: int, derandomize: bool) -> None:
    valid = _valid_binary(name, tmp_path)
    outcomes = []
    directory = tmp_path / "case"
    directory.mkdir()

    @settings(max_examples=n, **{**COMMON, "derandomize": derandomize})
    @given(data=damaged(valid))
    def check(data):
        path = directory / name
        path.write_bytes(data)
        try:
            BINARY_READERS[name](path)
            outcomes.append(True)
        except MlirkitError as e:
            assert str(e) and "\n" not in str(e)
            outcomes.append(False)

    check()
    assert 0 < sum(outcomes) < len(outcomes), f"{sum(outcomes)} of {len(outcomes)} files read"


@pytest.mark.parametrize("name", sorted(BINARY_READERS))
def test_binary_reader_gives_a_sound_value_or_one_line(tmp_path, name):
    _run_binary_examples(tmp_path, name, FAST // 2, derandomize=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BINARY_READERS))
def test_binary_reader_survives_thousands_of_damaged_files(tmp_path, name):
    _run_binary_examples(tmp_path, name, SLOW, derandomize=False)
