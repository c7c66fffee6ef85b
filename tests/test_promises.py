""""What mlirkit promises" (docs/core.md) for outputs, across every CLI that writes: encode, search,
eval --report, shift fit / apply, index merge, fuse, and (with the JVM, slow) lexical index / search. Each fault ends in exit 2, one line on stderr without a
traceback, and the disk as it was (nothing half-written, no temporaries, no lock file, no new parents)."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mlirkit.base.cli import run_cli

DOCS = [
    {"_id": "d1", "title": "", "text": "The ferry leaves the harbour twice a day.", "lang": "en"},
    {"_id": "d2", "title": "", "text": "Die Fähre verlässt den Hafen zweimal am Tag.", "lang": "de"},
    {"_id": "d3", "title": "", "text": "Le traversier quitte le port deux fois par jour.", "lang": "fr"},
    {"_id": "d4", "title": "", "text": "Die Programme kopieren Dateien.", "lang": "de"},
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory, tiny_model_dir):
    """Inputs every CLI case reads: corpus, index, topics, qrels, run, SHIFT .pt vectors and a transform."""
    import torch

    from mlirkit.encode.cli import main as encode_main
    from mlirkit.encoders import load_encoder
    from mlirkit.search.cli import main as search_main
    from mlirkit.shift.cli import main as shift_main

    root = tmp_path_factory.mktemp("promises")
    (root / "corpus.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS), "utf-8")
    enc = ["--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--max-length", "64"]
    assert run_cli(encode_main, ["--corpus", str(root / "corpus.jsonl"), "--index", str(root / "index"), *enc,
                                 "--save-embeddings", "--quiet"]) == 0
    (root / "topics.tsv").write_text("q1\tferry harbour\ten\nq2\tcopy files\ten\n", encoding="utf-8")
    (root / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d4 1\n", encoding="utf-8")
    assert run_cli(search_main, ["--index", str(root / "index"), "--topics", str(root / "topics.tsv"),
                                 "--output", str(root / "run.trec"), "--hits", "3", "--quiet"]) == 0
    dim = load_encoder(str(tiny_model_dir), "hf", max_length=64).dim
    torch.save({"source_lang": "en", "v_de": torch.full((dim,), 0.1),  # no model_name: any encoder
                "v_fr": torch.full((dim,), -0.1)}, root / "vec.pt")
    assert run_cli(shift_main, ["fit", "--pairs", str(root / "vec.pt"), *enc,
                                "--output", str(root / "t.safetensors")]) == 0
    return {"root": root, "enc": enc}


def _encode(ws, out):
    from mlirkit.encode.cli import main
    return main, ["--corpus", str(ws["root"] / "corpus.jsonl"), "--index", str(out), *ws["enc"], "--quiet"]


def _search(ws, out):
    from mlirkit.search.cli import main
    return main, ["--index", str(ws["root"] / "index"), "--topics", str(ws["root"] / "topics.tsv"),
                  "--output", str(out), "--hits", "3", "--quiet"]


def _eval(ws, out):
    from mlirkit.eval.cli import main
    return main, ["--qrels", str(ws["root"] / "qrels.txt"), "--runs", str(ws["root"] / "run.trec"),
                  "--metrics", "ndcg@3", "--significance", "none", "--report", str(out)]


def _fit(ws, out):
    from mlirkit.shift.cli import main
    return main, ["fit", "--pairs", str(ws["root"] / "vec.pt"), *ws["enc"], "--output", str(out)]


def _apply(ws, out):
    from mlirkit.shift.cli import main
    return main, ["apply", "--index", str(ws["root"] / "index"), "--transform", str(ws["root"] / "t.safetensors"),
                  "--output", str(out)]


def _merge(ws, out):
    from mlirkit.index.cli import main
    return main, ["merge", str(ws["root"] / "index"), "--output", str(out), "--quiet"]


def _fuse(ws, out):
    from mlirkit.fuse.cli import main
    run = str(ws["root"] / "run.trec")
    return main, ["--runs", run, run, "--method", "rrf", "--output", str(out), "--quiet"]


def _lexical_index(ws, out):
    from mlirkit.lexical.cli import main
    return main, ["index", "--corpus", str(ws["root"] / "corpus.jsonl"), "--index", str(out), "--quiet"]


def _lexical_search(ws, out):
    from mlirkit.lexical.cli import main
    index = ws["root"] / "bm25"
    if not index.exists():
        assert main(["index", "--corpus", str(ws["root"] / "corpus.jsonl"), "--index", str(index), "--quiet"]) == 0
    return main, ["search", "--index", str(index), "--topics", str(ws["root"] / "topics.tsv"), "--output", str(out),
                  "--quiet"]


#: CLI -> (command builder, output name, is the output a directory)
CLIS = {"encode": (_encode, "index", True), "search": (_search, "run.trec", False),
        "eval-report": (_eval, "report.md", False), "shift-fit": (_fit, "t.safetensors", False),
        "shift-apply": (_apply, "shifted", True), "index-merge": (_merge, "merged", True),
        "fuse": (_fuse, "fused.trec", False), "lexical-index": (_lexical_index, "bm25", True),
        "lexical-search": (_lexical_search, "bm25.trec", False)}
#: CLIs that start the JVM (slow tests)
JVM_CLIS = {"lexical-index", "lexical-search"}
CLI_PARAMS = [pytest.param(c, marks=[pytest.mark.slow, pytest.mark.jvm]) if c in JVM_CLIS else c for c in sorted(CLIS)]


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def fails_with_one_line(main, argv, capsys, *needles: str) -> str:
    capsys.readouterr()
    code = run_cli(main, argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    # the error is one line, the last; what precedes it is logging (progress, INFO lines), never a traceback
    assert lines and lines[-1].startswith("error: ") and "Traceback" not in err, err
    assert sum(line.startswith("error:") for line in lines) == 1, err
    for needle in needles:
        assert needle in lines[-1], lines[-1]
    return lines[-1]


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_writes_and_overwrites_its_own_output(cli, ws, tmp_path, capsys):
    build, name, _ = CLIS[cli]
    main, argv = build(ws, tmp_path / "out" / name)
    assert run_cli(main, argv) == 0, capsys.readouterr().err
    before = listing(tmp_path)
    fails_with_one_line(main, argv, capsys, "already exists (use --overwrite")
    assert run_cli(main, [*argv, "--overwrite"]) == 0, capsys.readouterr().err
    assert listing(tmp_path) == before  # replaced in place: no temporaries, no lock file


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_overwrite_refuses_what_mlirkit_did_not_make(cli, ws, tmp_path, capsys):
    build, name, is_dir = CLIS[cli]
    out = tmp_path / name
    if is_dir:
        out.mkdir()
        (out / "holiday.jpg").write_bytes(b"\xff\xd8 precious")
    else:
        out.write_text("precious notes\n")
    before = listing(tmp_path)
    main, argv = build(ws, out)
    fails_with_one_line(main, [*argv, "--overwrite"], capsys, "written by mlirkit", "refusing to replace it")
    assert listing(tmp_path) == before
    assert (out / "holiday.jpg").exists() if is_dir else out.read_text() == "precious notes\n"


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_wrong_type_of_existing_output(cli, ws, tmp_path, capsys):
    build, name, is_dir = CLIS[cli]
    out = tmp_path / name
    if is_dir:
        out.write_text("a file where a directory is expected\n")
    else:
        out.mkdir()
    main, argv = build(ws, out)
    fails_with_one_line(main, [*argv, "--overwrite"], capsys, "not", "refusing to replace it")
    assert listing(tmp_path) == [name]


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_parent_is_a_file(cli, ws, tmp_path, capsys):
    build, name, _ = CLIS[cli]
    (tmp_path / "afile").write_text("x")
    main, argv = build(ws, tmp_path / "afile" / "sub" / name)
    fails_with_one_line(main, argv, capsys, "is not a directory")
    assert listing(tmp_path) == ["afile"] and (tmp_path / "afile").read_text() == "x"


class _FullDisk:
    """A file whose writes fail as on a full disk."""

    def __init__(self, f) -> None:
        self._f = f

    def write(self, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    writelines = write

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _full_disk_open(file, mode="r", *args, **kwargs):
    f = open(file, mode, *args, **kwargs)
    return _FullDisk(f) if any(c in mode for c in "wax") else f


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_disk_full_leaves_nothing(cli, ws, tmp_path, capsys, monkeypatch):
    import mlirkit.base.fs as fs
    import mlirkit.index.writer as writer
    import mlirkit.lexical.indexer as lexical_indexer

    # Python's writes fail (Lucene's, from Java, are tests/lexical/test_bm25.py's)
    for module in (fs, writer, lexical_indexer):
        monkeypatch.setattr(module, "open", _full_disk_open, raising=False)
    build, name, _ = CLIS[cli]
    (tmp_path / "keep").write_text("x")
    main, argv = build(ws, tmp_path / "new" / "deeper" / name)
    fails_with_one_line(main, argv, capsys, "cannot write", "No space left on device")
    assert listing(tmp_path) == ["keep"]  # no half-written output, no temporary, no new parent directories


_HOLDER = """
import sys, time
from pathlib import Path
from mlirkit.base.fs import OutputLock
out, ready, release = map(Path, sys.argv[1:4])
lock = OutputLock(out)
lock.acquire()
ready.write_text("1")
deadline = time.time() + 120
while not release.exists() and time.time() < deadline:
    time.sleep(0.02)
lock.release()
"""


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_a_second_writer_fails_at_once(cli, ws, tmp_path, capsys):
    build, name, _ = CLIS[cli]
    out = tmp_path / "out" / name
    out.parent.mkdir()
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out), str(ready), str(release)],
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not ready.exists():
            assert holder.poll() is None and time.time() < deadline, holder.communicate()
            time.sleep(0.02)
        main, argv = build(ws, out)
        fails_with_one_line(main, [*argv, "--overwrite"], capsys, "is being written by another process")
        assert listing(out.parent) == [f".{name}.lock"]  # the holder's lock only: nothing of ours
    finally:
        release.write_text("1")
        assert holder.wait(60) == 0, holder.stderr.read()
    assert listing(out.parent) == []


def test_faiss_failing_to_write_is_one_line(ws, tmp_path, capsys, monkeypatch):
    import faiss

    def full(index, name):
        raise RuntimeError("Error in faiss::FileIOWriter::operator()\nfwrite failed: No space left on device")

    monkeypatch.setattr(faiss, "write_index", full)
    main, argv = _encode(ws, tmp_path / "new" / "index")
    fails_with_one_line(main, argv, capsys, "cannot write", "FAISS could not write index")
    assert listing(tmp_path) == []
