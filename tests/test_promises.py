""""What mlirkit promises" (docs/core.md) for outputs. Each fault ends in exit 2, one line on stderr without a
traceback, and the disk as it was (nothing half-written, no temporaries, no lock file, no new parents).

The output contract is implemented once (``mlirkit.base.cli.run_cli``, ``mlirkit.base.fs.claim_output``): it is
tested once there, on a file and a directory output (``CONTRACT``), and every CLI that writes (encode, search,
eval --report, shift fit / apply, index merge, fuse, and with the JVM, slow, lexical index / search: ``CLIS``)
gets one smoke case that it keeps the contract (``test_every_cli_keeps_the_output_contract``)."""
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
    enc = ["--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64"]
    assert run_cli(encode_main, ["--corpus", str(root / "corpus.jsonl"), "--output", str(root / "index"), *enc,
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
    return main, ["--corpus", str(ws["root"] / "corpus.jsonl"), "--output", str(out), *ws["enc"], "--quiet"]


def _search(ws, out):
    from mlirkit.search.cli import main
    return main, ["--index", str(ws["root"] / "index"), "--topics", str(ws["root"] / "topics.tsv"),
                  "--output", str(out), "--hits", "3", "--quiet"]


def _eval(ws, out):
    from mlirkit.eval.cli import main
    return main, ["--qrels", str(ws["root"] / "qrels.txt"), "--runs", str(ws["root"] / "run.trec"),
                  "--metrics", "ndcg@3", "--significance", "none", "--output", str(out)]


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
    return main, ["index", "--corpus", str(ws["root"] / "corpus.jsonl"), "--output", str(out), "--quiet"]


def _lexical_search(ws, out):
    from mlirkit.lexical.cli import main
    index = ws["root"] / "bm25"
    if not index.exists():
        assert main(["index", "--corpus", str(ws["root"] / "corpus.jsonl"), "--output", str(index), "--quiet"]) == 0
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


def _contract_cli(directory: bool):
    """A command that writes its output the one way every mlirkit CLI does (``cli_main``, ``run_cli``,
    ``claim_output``): a TREC run, or an index directory (its ``meta.json``)."""

    from mlirkit.base.option_names import cli_main

    @cli_main
    def main(argv) -> int:
        from mlirkit.base.cli import ArgumentParser
        from mlirkit.base.fs import atomic_directory, atomic_file, write_durably

        parser = ArgumentParser(prog="contract")
        parser.add_argument("--output", required=True)
        parser.add_argument("--overwrite", action="store_true")
        args = parser.parse_args(argv)
        if directory:
            with atomic_directory(args.output, args.overwrite, kind="index") as tmp:
                write_durably(tmp / "meta.json", json.dumps({"format": "mlirkit-dense-index"}).encode())
        else:
            with atomic_file(args.output, args.overwrite, kind="run") as f:
                f.write("q1 Q0 d1 1 0.5 contract\n")
        return 0

    return lambda ws, out: (main, ["--output", str(out)])


#: where the contract is implemented: output kind -> (command builder, output name, is the output a directory)
CONTRACT = {"file": (_contract_cli(False), "run.trec", False), "directory": (_contract_cli(True), "index", True)}


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def fails_with_one_line(main, argv, capsys, *needles: str) -> str:
    capsys.readouterr()
    try:
        code = run_cli(main, argv)
    except SystemExit as e:  # a usage error: argparse exits (its one line is ArgumentParser.error's)
        code = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    # the error is one line, the last; what precedes it is logging (progress, INFO lines), never a traceback
    assert lines and lines[-1].startswith("error: ") and "Traceback" not in err, err
    assert sum(line.startswith("error:") for line in lines) == 1, err
    for needle in needles:
        assert needle in lines[-1], lines[-1]
    return lines[-1]


def writes_refuses_and_overwrites(main, argv, root: Path, capsys) -> None:
    """The command writes its output, refuses to replace it without --overwrite, and replaces it in place with it."""
    assert run_cli(main, argv) == 0, capsys.readouterr().err
    before = listing(root)
    fails_with_one_line(main, argv, capsys, "already exists (use --overwrite")
    assert run_cli(main, [*argv, "--overwrite"]) == 0, capsys.readouterr().err
    assert listing(root) == before  # replaced in place: no temporaries, no lock file


def refuses_what_is_not_its_own(build, out: Path, is_dir: bool, other_type: bool, root: Path, capsys) -> None:
    """Even with --overwrite, the command refuses to replace ``out`` when it holds what mlirkit did not write
    (a photo in a directory, notes in a file) or what is of the other type (a file where a directory belongs,
    a directory where a file does), and leaves it as it was."""
    if is_dir != other_type:
        out.mkdir()
        (out / "holiday.jpg").write_bytes(b"\xff\xd8 precious")
    else:
        out.write_text("precious notes\n")
    before = listing(root)
    main, argv = build(out)
    needles = ("not", "refusing to replace it") if other_type else \
        ("written by mlirkit", "refusing to replace", "even with --overwrite")
    fails_with_one_line(main, [*argv, "--overwrite"], capsys, *needles)
    assert listing(root) == before
    assert (out / "holiday.jpg").exists() if is_dir != other_type else out.read_text() == "precious notes\n"


def _qdrant(ws, out):
    from mlirkit.index.cli import main
    return main, ["qdrant", str(ws["root"] / "index"), "--output", str(out), "--quiet"]


#: every CLI whose output is a directory: (command builder, output name); datasets export, benchmark and
#: train have theirs in tests/datasets/test_export.py, tests/benchmark/test_pipeline.py, tests/train
DIRECTORY_CLIS = {**{cli: (build, name) for cli, (build, name, is_dir) in CLIS.items() if is_dir},
                  "index-qdrant": (_qdrant, "shard")}


@pytest.mark.parametrize("cli", [pytest.param(c, marks=[pytest.mark.slow, pytest.mark.jvm]) if c in JVM_CLIS else c
                                 for c in sorted(DIRECTORY_CLIS)])
@pytest.mark.parametrize("planted", ["notes.txt", ".DS_Store", "my-run/run.trec"])
def test_overwrite_refuses_an_output_holding_a_user_file(cli, planted, ws, tmp_path, capsys):
    """An output mlirkit wrote, with a file of the user's added: --overwrite is refused, naming the file,
    before any work; the output and the file stay as they were."""
    build, name = DIRECTORY_CLIS[cli]
    out = tmp_path / name
    main, argv = build(ws, out)
    assert run_cli(main, argv) == 0, capsys.readouterr().err
    user = out / planted
    user.parent.mkdir(exist_ok=True)
    user.write_text("the user's own\n")
    before = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    top = out / planted.split("/")[0]
    fails_with_one_line(main, [*argv, "--overwrite"], capsys, f"{top} is not mlirkit's", "even with --overwrite")
    assert {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()} == before


#: CLIs that write a run and its provenance sidecar
RUN_CLIS = [pytest.param(c, marks=[pytest.mark.slow, pytest.mark.jvm]) if c in JVM_CLIS else c
            for c in ("fuse", "lexical-search", "search")]


@pytest.mark.parametrize("cli", RUN_CLIS)
@pytest.mark.parametrize("overwrite", [False, True])
def test_a_user_file_where_the_sidecar_goes_is_never_replaced(cli, overwrite, ws, tmp_path, capsys):
    from mlirkit.io.provenance import sidecar_path

    build, name, _ = CLIS[cli]
    out = tmp_path / name
    sidecar_path(out).write_text('{"my": "notes"}\n')
    main, argv = build(ws, out)
    fails_with_one_line(main, [*argv, "--overwrite"] if overwrite else argv, capsys, "refusing to replace")
    assert listing(tmp_path) == [sidecar_path(out).name]
    assert sidecar_path(out).read_text() == '{"my": "notes"}\n'


@pytest.mark.parametrize("output", sorted(CONTRACT))
def test_writes_and_overwrites_its_own_output(output, tmp_path, capsys):
    build, name, _ = CONTRACT[output]
    writes_refuses_and_overwrites(*build(None, tmp_path / "out" / name), tmp_path, capsys)


@pytest.mark.parametrize("output", sorted(CONTRACT))
@pytest.mark.parametrize("other_type", [False, True], ids=["foreign", "other-type"])
def test_overwrite_refuses_what_mlirkit_did_not_make(output, other_type, tmp_path, capsys):
    build, name, is_dir = CONTRACT[output]
    refuses_what_is_not_its_own(lambda out: build(None, out), tmp_path / name, is_dir, other_type, tmp_path, capsys)


@pytest.mark.parametrize("output", sorted(CONTRACT))
def test_parent_is_a_file(output, tmp_path, capsys):
    build, name, _ = CONTRACT[output]
    (tmp_path / "afile").write_text("x")
    main, argv = build(None, tmp_path / "afile" / "sub" / name)
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


@pytest.mark.parametrize("output", sorted(CONTRACT))
def test_disk_full_leaves_nothing(output, tmp_path, capsys, monkeypatch):
    import mlirkit.base.fs as fs
    import mlirkit.index.writer as writer
    import mlirkit.lexical.indexer as lexical_indexer

    # Python's writes fail (Lucene's, from Java, are tests/lexical/test_bm25.py's)
    for module in (fs, writer, lexical_indexer):
        monkeypatch.setattr(module, "open", _full_disk_open, raising=False)
    build, name, _ = CONTRACT[output]
    (tmp_path / "keep").write_text("x")
    main, argv = build(None, tmp_path / "new" / "deeper" / name)
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


@pytest.mark.parametrize("output", sorted(CONTRACT))
def test_a_second_writer_fails_at_once(output, tmp_path, capsys):
    build, name, _ = CONTRACT[output]
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
        main, argv = build(None, out)
        fails_with_one_line(main, [*argv, "--overwrite"], capsys, "is being written by another process")
        assert listing(out.parent) == [f".{name}.lock"]  # the holder's lock only: nothing of ours
    finally:
        release.write_text("1")
        assert holder.wait(60) == 0, holder.stderr.read()
    assert listing(out.parent) == []


@pytest.mark.parametrize("cli", CLI_PARAMS)
def test_every_cli_keeps_the_output_contract(cli, ws, tmp_path, capsys, monkeypatch):
    """One smoke case per CLI that writes: a full disk leaves nothing; it writes its output, refuses to replace it
    without --overwrite and replaces it in place with it; an output of its kind that mlirkit did not write, or of
    the other type (file / directory), is refused even with --overwrite."""
    import mlirkit.base.fs as fs
    import mlirkit.index.writer as writer
    import mlirkit.lexical.indexer as lexical_indexer

    build, name, is_dir = CLIS[cli]
    main, argv = build(ws, tmp_path / "new" / "deeper" / name)  # (before the disk fills: it may write the inputs)
    with monkeypatch.context() as full:  # Python's writes fail (Lucene's, from Java, are tests/lexical/test_bm25.py's)
        for module in (fs, writer, lexical_indexer):
            full.setattr(module, "open", _full_disk_open, raising=False)
        fails_with_one_line(main, argv, capsys, "cannot write", "No space left on device")
        assert listing(tmp_path) == []  # no half-written output, no temporary, no new parent directories
    writes_refuses_and_overwrites(*build(ws, tmp_path / "out" / name), tmp_path, capsys)
    for other_type in (False, True):
        root = tmp_path / ("other-type" if other_type else "foreign")
        root.mkdir()
        refuses_what_is_not_its_own(lambda out: build(ws, out), root / name, is_dir, other_type, root, capsys)


def test_faiss_failing_to_write_is_one_line(ws, tmp_path, capsys, monkeypatch):
    import faiss

    def full(index, name):
        raise RuntimeError("Error in faiss::FileIOWriter::operator()\nfwrite failed: No space left on device")

    monkeypatch.setattr(faiss, "write_index", full)
    main, argv = _encode(ws, tmp_path / "new" / "index")
    fails_with_one_line(main, argv, capsys, "cannot write", "FAISS could not write index")
    assert listing(tmp_path) == []


# ------------------------------------------------------------------ hostile inputs and environments: one line each
# Every case here ended in a traceback (or several lines) before; now: exit 2, one line naming what is wrong,
# and nothing written.

def _damaged_index(ws, tmp_path, what):
    import shutil

    import numpy as np

    ix = tmp_path / "ix"
    shutil.copytree(ws["root"] / "index", ix)
    if what == "faiss":
        data = (ix / "index").read_bytes()
        (ix / "index").write_bytes(data[: len(data) // 2])
    elif what == "npy-cut":
        data = (ix / "embeddings.npy").read_bytes()
        (ix / "embeddings.npy").write_bytes(data[:-10])
    elif what == "npy-object":
        np.save(ix / "embeddings.npy", np.array([None] * 4, dtype=object), allow_pickle=True)
    return ix


def _hostile_case(case, ws, tmp_path, monkeypatch):
    """(main, argv, needles) of one hostile case; files it needs are written under tmp_path."""
    from mlirkit.datasets.cli import main as datasets_main
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.eval.cli import main as eval_main
    from mlirkit.index.cli import main as index_main
    from mlirkit.search.cli import main as search_main
    from mlirkit.shift.cli import main as shift_main
    from mlirkit.train.cli import main as train_main

    root = ws["root"]
    if case == "20-digit cutoff":
        return eval_main, ["--qrels", str(root / "qrels.txt"), "--runs", str(root / "run.trec"), "--metrics",
                           "ndcg@12345678901234567890", "--significance", "none"], ["must be at most 2147483647"]
    if case == "plot alpha on a JSON list":
        (tmp_path / "sweep.json").write_text("[0.1, 0.2]", "utf-8")
        return eval_main, ["plot", "alpha", "--sweep", str(tmp_path / "sweep.json"), "--output", str(tmp_path / "p" / "a")], \
            ["sweep.json: expected a JSON object"]
    if case == "plot projection --max-points 1":
        return eval_main, ["plot", "projection", "--index", str(root / "index"), "--max-points", "1",
                           "--output", str(tmp_path / "p" / "proj")], ["needs at least 3 points"]
    if case == "export --fields unknown":
        return datasets_main, ["export", "mlirkit/ddtp/en", "docs", "--fields", "doc_id", "nope"], \
            ["no field 'nope'", "fields: doc_id, text, lang"]
    if case == "YAML tag in a train config":
        (tmp_path / "c.yaml").write_text(f"backbone: !!python/object/apply:os.system ['touch {tmp_path}/x']\n"
                                         f"output_dir: {tmp_path / 'run'}\n", "utf-8")
        return train_main, [str(tmp_path / "c.yaml")], ["c.yaml: cannot parse config (line 1, column 11",
                                                         "could not determine a constructor"]
    if case == "MLIRKIT_CACHE is a file":
        (tmp_path / "cache-file").write_text("x", "utf-8")
        monkeypatch.setenv("MLIRKIT_CACHE", str(tmp_path / "cache-file"))
        main, argv = _encode(ws, tmp_path / "out" / "index")
        return main, argv, ["MLIRKIT_CACHE=", "a file is in the way"]
    if case == "corrupt FAISS index (search)":
        ix = _damaged_index(ws, tmp_path, "faiss")
        return search_main, ["--index", str(ix), "--topics", str(root / "topics.tsv"), "--output",
                             str(tmp_path / "out" / "run.trec")], ["ix/index: not a readable FAISS index"]
    if case == "corrupt FAISS index (index info)":
        return index_main, ["info", str(_damaged_index(ws, tmp_path, "faiss"))], ["not a readable FAISS index"]
    if case in ("embeddings.npy cut short", "embeddings.npy object array"):
        ix = _damaged_index(ws, tmp_path, "npy-cut" if case.endswith("short") else "npy-object")
        return shift_main, ["apply", "--index", str(ix), "--transform", str(root / "t.safetensors"),
                            "--output", str(tmp_path / "out" / "index")], \
            ["embeddings.npy: " + ("truncated .npy file" if case.endswith("short") else "holds Python objects")]
    if case == "export of an unknown id":
        return datasets_main, ["export", "mlirkit/no-such-set/en", "docs"], \
            ["unknown dataset id 'mlirkit/no-such-set/en' (did you mean:", "python -m mlirkit.datasets list"]
    if case == "eval --seed -1":
        return eval_main, ["--qrels", str(root / "qrels.txt"), "--runs", str(root / "run.trec"), "--metrics",
                           "ndcg@3", "--seed", "-1"], ["argument --seed: expected an integer >= 0, got '-1'"]
    if case == "shift select-alpha --seed -1":
        return shift_main, ["select-alpha", "--index", str(root / "index"), "--transform", str(root / "t.safetensors"),
                            "--seed", "-1"], ["argument --seed: expected an integer >= 0, got '-1'"]
    if case == "fuse --param k=-1.5":
        from mlirkit.fuse.cli import main as fuse_main

        run = str(root / "run.trec")
        return fuse_main, ["--runs", run, run, "--method", "rrf", "--param", "k=-1.5", "--output",
                           str(tmp_path / "out" / "f.trec")], ["rrf: --param k=-1.5 is out of range: k >= 0"]
    if case == "eval with qrels of another collection":
        (tmp_path / "other.txt").write_text("x1 0 e1 1\nx2 0 e2 1\n", "utf-8")
        return eval_main, ["--qrels", str(tmp_path / "other.txt"), "--runs", str(root / "run.trec"), "--metrics",
                           "ndcg@3", "--significance", "none"], ["has results for 0 of the 2 evaluated queries",
                                                                 "--allow-partial-overlap"]
    if case in ("model weights cut short (safetensors)", "model weights cut short (bin)"):
        import shutil

        model = tmp_path / "model"
        shutil.copytree(ws["model"], model)
        if case.endswith("(bin)"):
            import torch
            from safetensors.torch import load_file

            torch.save(load_file(model / "model.safetensors"), model / "pytorch_model.bin")
            (model / "model.safetensors").unlink()
            weights = model / "pytorch_model.bin"
        else:
            weights = model / "model.safetensors"
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) * 2 // 3])
        return encode_main, ["--corpus", str(root / "corpus.jsonl"), "--output", str(tmp_path / "out" / "index"),
                             "--encoder", str(model), "--encoder-class", "hf", "--quiet"], \
            [weights.name + ": truncated or corrupt"]
    raise AssertionError(case)


HOSTILE = ["20-digit cutoff", "plot alpha on a JSON list", "plot projection --max-points 1", "export --fields unknown",
           "YAML tag in a train config", "MLIRKIT_CACHE is a file", "corrupt FAISS index (search)",
           "corrupt FAISS index (index info)", "embeddings.npy cut short", "embeddings.npy object array",
           "model weights cut short (safetensors)", "model weights cut short (bin)", "export of an unknown id",
           "eval --seed -1", "shift select-alpha --seed -1", "fuse --param k=-1.5",
           "eval with qrels of another collection"]


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_input_is_one_line_and_writes_nothing(case, ws, tmp_path, capsys, monkeypatch, tiny_model_dir):
    ws = {**ws, "model": tiny_model_dir}
    main, argv, needles = _hostile_case(case, ws, tmp_path, monkeypatch)
    before = listing(tmp_path)
    fails_with_one_line(main, argv, capsys, *needles)
    assert listing(tmp_path) == before  # nothing written, no parent made, no marker of a YAML payload


def _subprocess_line(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    from tests.helpers import REPO

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), **env}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)


def test_ir_datasets_home_that_is_a_file_is_one_line(ws, tmp_path):
    """ir_datasets makes directories under $IR_DATASETS_HOME while it is imported (a fresh process)."""
    (tmp_path / "home").write_text("x", "utf-8")
    code = ("import sys; from mlirkit.base.cli import run_cli; from mlirkit.search.cli import main; "
            f"sys.exit(run_cli(main, ['--index', {str(ws['root'] / 'index')!r}, '--topics', 'mlirkit/ddtp/en', "
            f"'--output', {str(tmp_path / 'run.trec')!r}, '--quiet']))")
    done = _subprocess_line(code, {"IR_DATASETS_HOME": str(tmp_path / "home")})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: IR_DATASETS_HOME=") and "a file is in the way" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_ir_datasets_home_that_is_a_file_is_one_line_for_the_datasets_cli(tmp_path):
    """``python -m mlirkit.datasets`` imports the package (and ir_datasets) before its CLI runs."""
    import subprocess

    from tests.helpers import REPO

    (tmp_path / "home").write_text("x", "utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "IR_DATASETS_HOME": str(tmp_path / "home")}
    for argv in (["export", "mlirkit/ddtp/en", "docs"], ["export", "mlirkit/ddtp/en", "--format", "trec", "--output",
                                                           str(tmp_path / "out")], ["list"]):
        done = subprocess.run([sys.executable, "-m", "mlirkit.datasets", *argv], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("error: IR_DATASETS_HOME=") and "a file is in the way" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def _with_full_disk(code: str, limit: int = 0) -> subprocess.CompletedProcess:
    """``code`` in a child whose every file may hold at most ``limit`` bytes (``ulimit -f``: writes fail with
    EFBIG, 'File too large'), as a full disk fails them."""
    import resource

    from tests.helpers import REPO

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY)))


def _cli_code(module: str, argv: list[str]) -> str:
    return (f"import sys; from mlirkit.base.cli import run_cli; from {module} import main; "
            f"sys.exit(run_cli(main, {argv!r}))")


FULL_DISK = {"fuse": ("mlirkit.fuse.cli", lambda ws, out: _fuse(ws, out)[1]),
             "encode": ("mlirkit.encode.cli", lambda ws, out: _encode(ws, out)[1]),
             "search": ("mlirkit.search.cli", lambda ws, out: _search(ws, out)[1]),
             "lexical-search": ("mlirkit.lexical.cli", lambda ws, out: _lexical_search(ws, out)[1])}


@pytest.mark.parametrize("cli", [pytest.param(c, marks=[pytest.mark.slow, pytest.mark.jvm]) if c in JVM_CLIS else c
                                 for c in FULL_DISK])
def test_a_full_disk_is_one_line_and_leaves_neither_a_run_nor_a_sidecar(cli, ws, tmp_path):
    """With no byte writable (``ulimit -f 0``), a new output: one line saying it cannot be written (encode used to
    say 'No usable temporary directory ... set TMPDIR'), nothing new (no orphan provenance sidecar)."""
    module, argv_of = FULL_DISK[cli]
    name = "ix" if cli == "encode" else "run.trec"
    argv = argv_of(ws, tmp_path / "new" / name)
    done = _with_full_disk(_cli_code(module, argv))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot write {tmp_path / 'new' / name}: File too large"), done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cli", [pytest.param(c, marks=[pytest.mark.slow, pytest.mark.jvm]) if c in JVM_CLIS else c
                                 for c in ("fuse", "search", "lexical-search")])
@pytest.mark.parametrize("limit", [0, 64])
def test_an_overwrite_on_a_full_disk_keeps_the_run_and_its_matching_sidecar(cli, ws, tmp_path, capsys, limit):
    """``--overwrite`` with the disk full (nothing writable, or files of at most 64 bytes: the run does not fit,
    its sidecar would not either): the old run and its own sidecar stay, byte for byte."""
    from mlirkit.io.provenance import describe_file, sidecar_path

    module, argv_of = FULL_DISK[cli]
    out = tmp_path / "run.trec"
    argv = argv_of(ws, out)
    main = {"fuse": _fuse, "search": _search, "lexical-search": _lexical_search}[cli](ws, out)[0]
    assert run_cli(main, argv) == 0, capsys.readouterr().err
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    done = _with_full_disk(_cli_code(module, [*argv, "--overwrite"]), limit)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot write {out}: File too large"), done.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert "provenance" in describe_file(out) and sidecar_path(out).name in before


def test_no_usable_temporary_directory_is_one_line(ws, tmp_path):
    """encode in a process where no temporary directory works (TMPDIR and every fallback unusable)."""
    code = ("import sys, tempfile; tempfile.tempdir = None; "
            f"tempfile._candidate_tempdir_list = lambda: [{str(tmp_path / 'none')!r}]; "
            "from mlirkit.base.cli import run_cli; from mlirkit.encode.cli import main; "
            f"sys.exit(run_cli(main, ['--corpus', {str(ws['root'] / 'corpus.jsonl')!r}, '--output', "
            f"{str(tmp_path / 'ix')!r}, *{ws['enc']!r}, '--quiet']))")
    done = _subprocess_line(code, {})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "No usable temporary directory" in done.stderr and "set TMPDIR" in done.stderr
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ nothing left behind

def test_train_with_missing_data_leaves_nothing(tmp_path, capsys, tiny_model_dir):
    from mlirkit.train.cli import main

    argv = ["--backbone", str(tiny_model_dir), "--output", str(tmp_path / "run"), "--set",
            f"triples={tmp_path / 'missing.jsonl'}", "--set", "n_parallel=0", "--set", "n_monolingual=0", "--max-steps",
            "1", "--set", "max_length=16", "--quiet"]
    fails_with_one_line(main, argv, capsys, "missing.jsonl")
    assert listing(tmp_path) == []  # no run/, no train_config.json, no empty log
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine", "utf-8")
    fails_with_one_line(main, argv, capsys, "missing.jsonl")
    assert listing(tmp_path) == ["run", "run/notes.txt"]  # an existing directory: only what the run added goes


def test_plots_that_fail_leave_no_folder(ws, tmp_path, capsys, monkeypatch):
    from mlirkit.eval.cli import main

    (tmp_path / "sweep.json").write_text(json.dumps({"0.5": {"ndcg@20": 0.4}}), "utf-8")
    import matplotlib.figure

    def broken(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    fails_with_one_line(main, ["plot", "alpha", "--sweep", str(tmp_path / "sweep.json"), "--metrics", "ndcg@20",
                               "--output", str(tmp_path / "new" / "deep" / "a")], capsys, "No space left")
    assert listing(tmp_path) == ["sweep.json"]
