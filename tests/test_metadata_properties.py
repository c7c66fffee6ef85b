"""Property tests of the metadata files the CLIs read (provenance sidecars, a dense index's ``meta.json``, a BM25
index's ``meta.json``, a transform file's metadata): a field changed to a value of another JSON type (a string where an object belongs, a
number where a list does, ...) is one line naming the file and the field, exit 2, and nothing written, in
every CLI that reads that file; never a traceback, never a table from a forged value.

Every field is changed: nested ones too, except inside the objects whose content is the producer's own (an
encoder's fingerprint, the description of a query-time shift, a fusion method's parameters: they are checked
to be objects); the dense ``meta.json`` is changed in its top-level fields. A null field is left alone (a
value may replace a null: ``"transform": null`` is an index without one).
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlirkit.base.cli import run_cli
from tests.helpers import examples
from tests.io.test_provenance import searched  # noqa: F401  (a fixture: index, topics, qrels, runs/a.trec)

FAST, SLOW = 12, examples(default=80, thorough=300)  # field changes per file
COMMON = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))
#: objects whose content the producer decides (checked to be objects; not descended into)
OPAQUE = {"encoder.fingerprint", "query_shift", "fusion.params", "runs[0].provenance.encoder.fingerprint",
          "runs[1].provenance.encoder.fingerprint", "runs[0].provenance.query_shift", "runs[1].provenance.query_shift"}

VALUES = {"bool": st.booleans(), "int": st.integers(-3, 10**6), "float": st.floats(-5, 5).filter(lambda x: x != int(x)),
          "string": st.text(max_size=6), "list": st.lists(st.integers(0, 3), max_size=2),
          "object": st.dictionaries(st.sampled_from(["a", "path", "x"]), st.integers(0, 3), max_size=2)}


def _kind(v) -> str:
    return ("bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float" if isinstance(v, float)
            else "string" if isinstance(v, str) else "list" if isinstance(v, list) else "object")


def fields(doc, prefix: str = "", nested: bool = True) -> list[tuple[str, list]]:
    """``(dotted name, path of keys)`` of every non-null field of ``doc`` (see the module docstring)."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for key, value in items:
        name = f"{prefix}[{key}]" if isinstance(key, int) else f"{prefix}.{key}" if prefix else str(key)
        if value is None:
            continue
        out.append((name, [key]))
        if nested and isinstance(value, (dict, list)) and name not in OPAQUE:
            out += [(n, [key, *p]) for n, p in fields(value, name)]
    return out


def _changed(doc, path: list, value):
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


@st.composite
def type_change(draw, doc, nested: bool = True):
    name, path = draw(st.sampled_from(fields(doc, nested=nested)))
    old = doc
    for key in path:
        old = old[key]
    kinds = [k for k in VALUES if k != _kind(old) and {k, _kind(old)} != {"int", "float"}]
    return name, _changed(doc, path, draw(VALUES[draw(st.sampled_from(kinds))]))


def _refused(main, argv, capsys, file: Path, field: str, root: Path) -> None:
    from tests.helpers import tree_listing

    mine = file.relative_to(root).as_posix()
    before = [p for p in tree_listing(root) if p != mine]
    capsys.readouterr()
    code = run_cli(main, argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (field, err)
    assert lines and lines[-1].startswith("error: ") and "Traceback" not in err, (field, err)
    assert sum(line.startswith("error") for line in lines) == 1, err
    top = field.split(".")[0].split("[")[0]
    assert file.name in lines[-1] and repr(top)[1:-1] in lines[-1], (field, lines[-1])
    assert [p for p in tree_listing(root) if p != mine] == before, field


def _property(file: Path, build, capsys, root: Path, n: int, nested: bool = True, load=None, dump=None,
              derandomize: bool | None = None) -> list[str]:
    """Each of ``n`` type changes of a field of ``file`` (a JSON file; ``load``/``dump`` read and write another
    kind's metadata) makes the CLI of ``build()`` refuse with one line; the file is restored after each."""
    original = file.read_bytes()
    doc = load(file) if load else json.loads(original)
    seen = []

    @settings(max_examples=n, derandomize=n == FAST if derandomize is None else derandomize, **COMMON)
    @given(change=type_change(doc, nested))
    def check(change):
        field, changed = change
        seen.append(field)
        if dump:
            dump(file, changed)
        else:
            file.write_text(json.dumps(changed), "utf-8")
        try:
            main, argv = build()
            _refused(main, argv, capsys, file, field, root)
        finally:
            file.write_bytes(original)

    check()
    return seen


@pytest.fixture(scope="module")
def ws(searched):
    """A dense index and a run searched on it (``searched``), a fusion of that run with itself: sidecars of
    every producer but BM25's."""
    from mlirkit.fuse.cli import main as fuse_main

    run = str(searched / "runs" / "a.trec")
    assert run_cli(fuse_main, ["--runs", run, run, "--method", "rrf", "--output", str(searched / "runs" / "fused.trec"),
                               "--quiet"]) == 0
    return searched


def _eval(ws, run: str):
    from mlirkit.eval.cli import main

    return lambda: (main, ["--qrels", str(ws / "qrels.txt"), "--runs", str(ws / run), "--metrics", "ndcg@3",
                           "--significance", "none", "--output", str(ws / "out" / "r.md")])


def _fuse(ws, run: str):
    from mlirkit.fuse.cli import main

    return lambda: (main, ["--runs", str(ws / run), str(ws / run), "--method", "rrf", "--output",
                           str(ws / "out" / "f.trec"), "--quiet"])


def _search(ws):
    from mlirkit.search.cli import main

    return lambda: (main, ["--index", str(ws / "index"), "--topics", str(ws / "t.tsv"), "--output",
                           str(ws / "out" / "s.trec"), "--quiet"])


def _index_info(ws):
    from mlirkit.index.cli import main

    return lambda: (main, ["info", str(ws / "index")])


SIDECAR_CASES = {"eval reads a search run's sidecar": ("runs/a.trec", _eval), "fuse reads it": ("runs/a.trec", _fuse),
                 "eval reads a fused run's sidecar": ("runs/fused.trec", _eval),
                 "fuse reads that": ("runs/fused.trec", _fuse)}


@pytest.mark.parametrize("case", sorted(SIDECAR_CASES))
def test_a_sidecar_field_of_another_type_is_one_line(case, ws, capsys):
    run, cli = SIDECAR_CASES[case]
    seen = _property(ws / f"{run}.provenance.json", cli(ws, run), capsys, ws, FAST)
    assert len(set(seen)) > 3


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(SIDECAR_CASES))
def test_a_sidecar_field_of_another_type_is_one_line_many(case, ws, capsys):
    run, cli = SIDECAR_CASES[case]
    _property(ws / f"{run}.provenance.json", cli(ws, run), capsys, ws, SLOW)


@pytest.mark.parametrize("cli", [_search, _index_info], ids=["search", "index info"])
def test_a_dense_meta_json_field_of_another_type_is_one_line(cli, ws, capsys):
    seen = _property(ws / "index" / "meta.json", cli(ws), capsys, ws, FAST, nested=False)
    assert len(set(seen)) > 3


@pytest.mark.slow
@pytest.mark.parametrize("cli", [_search, _index_info], ids=["search", "index info"])
def test_a_dense_meta_json_field_of_another_type_is_one_line_many(cli, ws, capsys):
    _property(ws / "index" / "meta.json", cli(ws), capsys, ws, SLOW, nested=False)


@pytest.fixture(scope="module")
def bm25(tmp_path_factory):
    from mlirkit.lexical.cli import main

    root = tmp_path_factory.mktemp("bm25meta")
    (root / "c.jsonl").write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in (
            {"id": "de1", "contents": "Die Häuser sind groß", "lang": "de"},
            {"id": "en1", "contents": "The houses are big", "lang": "en"})), "utf-8")
    assert main(["index", "--corpus", str(root / "c.jsonl"), "--output", str(root / "index"), "--quiet"]) == 0
    (root / "t.tsv").write_text("q1\thouse\ten\n", "utf-8")
    assert main(["search", "--index", str(root / "index"), "--topics", str(root / "t.tsv"), "--output",
                 str(root / "bm25.trec"), "--quiet"]) == 0
    return root


def _lexical_search(root):
    from mlirkit.lexical.cli import main

    return lambda: (main, ["search", "--index", str(root / "index"), "--topics", str(root / "t.tsv"), "--output",
                           str(root / "out" / "r.trec"), "--quiet"])


@pytest.mark.slow
@pytest.mark.jvm
def test_a_bm25_meta_json_field_of_another_type_is_one_line(bm25, capsys):
    seen = _property(bm25 / "index" / "meta.json", _lexical_search(bm25), capsys, bm25, SLOW)
    assert any(s.startswith("analyzers.") for s in seen)


@pytest.mark.slow
@pytest.mark.jvm
def test_a_bm25_run_sidecar_field_of_another_type_is_one_line(bm25, capsys):
    _property(bm25 / "bm25.trec.provenance.json", _eval_bm25(bm25), capsys, bm25, SLOW)


def _eval_bm25(root):
    from mlirkit.eval.cli import main

    (root / "qrels.txt").write_text("q1 0 en1 1\n", "utf-8")
    return lambda: (main, ["--qrels", str(root / "qrels.txt"), "--runs", str(root / "bm25.trec"), "--metrics",
                           "ndcg@3", "--significance", "none"])


def test_fields_lists_nested_fields_but_not_opaque_ones():
    doc = {"a": 1, "b": None, "encoder": {"name": "x", "fingerprint": {"k": 1}}, "command": ["p", "q"]}
    assert [n for n, _ in fields(doc)] == ["a", "encoder", "encoder.name", "encoder.fingerprint", "command",
                                           "command[0]", "command[1]"]


# --------------------------------------------------------------------------- transform files
@pytest.fixture(scope="module")
def transform_ws(tmp_path_factory):
    """A SHIFT transform file as ``shift fit`` writes it (fitted from arrays, saved by mlirkit)."""
    import numpy as np

    from mlirkit.transforms import ShiftTransform
    from mlirkit.transforms.io import save_transform

    root = tmp_path_factory.mktemp("transformmeta")
    rng = np.random.default_rng(0)
    embs = rng.normal(size=(12, 8)).astype(np.float32)
    langs = ["en", "de", "fr"] * 4
    groups = np.repeat(np.arange(4), 3)
    t = ShiftTransform("en").fit(embs, langs, groups)
    t.encoder = {"class": "fake", "name": "fake", "dim": 8}
    t.meta = {**t.meta, "pairs": {"de": 4, "fr": 4}}
    save_transform(t, root / "v.shift")
    return root


def _transform_meta(path: Path) -> dict:
    import struct

    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(json.loads(data[8:8 + n])["__metadata__"]["meta"])


def _write_transform_meta(path: Path, meta: dict) -> None:
    from safetensors.numpy import load, save

    from mlirkit.transforms.io import FORMAT, FORMAT_VERSION

    tensors = load(path.read_bytes())
    path.write_bytes(save(tensors, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION),
                                             "meta": json.dumps(meta)}))


def _transform_property(path: Path, build, capsys, root: Path, n: int) -> list[str]:
    """:func:`_property` for the metadata of a transform file (JSON inside the safetensors header)."""
    return _property(path, build, capsys, root, n, nested=False, load=_transform_meta, dump=_write_transform_meta,
                     derandomize=True)


def _shift_cli(root: Path, verb: str):
    from mlirkit.shift.cli import main

    if verb == "inspect":
        return lambda: (main, ["inspect", str(root / "v.shift")])
    return lambda: (main, ["derive", "--transform", str(root / "v.shift"), "--source-lang", "de", "--output",
                           str(root / "out" / "d.shift"), "--quiet"])


@pytest.mark.parametrize("verb", ["inspect", "derive"])
def test_a_transform_file_field_of_another_type_is_one_line(verb, transform_ws, capsys):
    """``shift inspect`` and ``shift derive`` on a transform file whose metadata field has another JSON type (e.g.
    ``"pairs": [120, 80, 60]``): one line naming the file and the field, exit 2, nothing written."""
    assert run_cli(*_shift_cli(transform_ws, verb)()) == 0  # the file as written is valid
    for out in (transform_ws / "out").glob("*"):
        out.unlink()
    seen = _transform_property(transform_ws / "v.shift", _shift_cli(transform_ws, verb), capsys, transform_ws, SLOW)
    assert {"pairs", "source_lang", "method", "languages"} <= set(seen)


# --------------------------------------------------------------------------- the other readers of a meta.json or a
# transform file: shift apply and search --transform (index and transform), index merge (each shard's meta.json)
@pytest.fixture(scope="module")
def applied(ws, tiny_model_dir):
    """``ws`` plus a transform of its encoder (SHIFT vectors from a ``.pt`` file), its index with embeddings
    (``index_e``) and a second index of other documents (a shard to merge)."""
    import torch

    from mlirkit.encode.cli import main as encode_main
    from mlirkit.encoders import load_encoder
    from mlirkit.shift.cli import main as shift_main

    enc = ["--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64"]
    dim = load_encoder(str(tiny_model_dir), "hf", max_length=64).dim
    (ws / "model").symlink_to(tiny_model_dir)  # pyserini search names its query encoder
    torch.save({"source_lang": "en", "v_de": torch.full((dim,), 0.1)}, ws / "vec.pt")
    assert run_cli(shift_main, ["fit", "--pairs", str(ws / "vec.pt"), *enc, "--output", str(ws / "t.safetensors"),
                                "--quiet"]) == 0
    (ws / "c2.jsonl").write_text(json.dumps({"_id": "e1", "text": "Ein Hafen.", "lang": "de"}) + "\n", "utf-8")
    assert run_cli(encode_main, ["--corpus", str(ws / "c2.jsonl"), "--output", str(ws / "index2"), *enc,
                                 "--quiet"]) == 0
    assert run_cli(encode_main, ["--corpus", str(ws / "c.jsonl"), "--output", str(ws / "index_e"), *enc,
                                 "--save-embeddings", "--quiet"]) == 0  # what a transform is applied to
    return ws


def _apply(ws):
    from mlirkit.shift.cli import main

    return lambda: (main, ["apply", "--index", str(ws / "index_e"), "--transform", str(ws / "t.safetensors"), "--output",
                           str(ws / "out" / "ix"), "--quiet"])


def _search_transform(ws):
    from mlirkit.search.cli import main

    return lambda: (main, ["--index", str(ws / "index_e"), "--transform", str(ws / "t.safetensors"), "--topics",
                           str(ws / "t.tsv"), "--output", str(ws / "out" / "s.trec"), "--quiet"])


def _merge(ws):
    from mlirkit.index.cli import main

    return lambda: (main, ["merge", str(ws / "index2"), str(ws / "index"), "--output", str(ws / "out" / "m"),
                           "--quiet"])


def _pyserini_search(ws):
    from mlirkit.pyserini.search.cli import main

    return lambda: (main, ["--index", str(ws / "index_e"), "--topics", str(ws / "t.tsv"), "--encoder",
                           str(ws / "model"), "--output", str(ws / "out" / "p.trec")])


APPLIED = {"shift apply": _apply, "search --transform": _search_transform, "index merge": _merge,
           "pyserini search": _pyserini_search}


@pytest.mark.parametrize("cli", [pytest.param(c, marks=[pytest.mark.slow, pytest.mark.jvm]) if c == "pyserini search"
                                 else c for c in sorted(APPLIED)])
def test_a_dense_meta_json_field_of_another_type_is_one_line_in_every_reader(cli, applied, capsys):
    build = APPLIED[cli](applied)
    assert run_cli(*build()) == 0, capsys.readouterr().err  # the files as written are valid
    import shutil

    shutil.rmtree(applied / "out")
    index = "index" if cli == "index merge" else "index_e"
    seen = _property(applied / index / "meta.json", build, capsys, applied, FAST, nested=False)
    assert len(set(seen)) > 3


@pytest.mark.parametrize("cli", ["shift apply", "search --transform"])
def test_a_transform_file_field_of_another_type_is_one_line_where_it_is_applied(cli, applied, capsys):
    seen = _transform_property(applied / "t.safetensors", APPLIED[cli](applied), capsys, applied, FAST)
    assert len(set(seen)) > 3
