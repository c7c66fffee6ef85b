"""Provenance sidecars (mlirkit.io.provenance): every run written by the one TREC writer gets
``RUN.provenance.json`` beside it, tied to the run's bytes by sha256; ranx and mlirkit's readers read the run
unchanged; mlirkit.eval lists the runs and qrels it scored, with hashes and where each run came from."""
from __future__ import annotations

import errno
import hashlib
import json
import os

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.io.provenance import describe_file, read_sidecar, sidecar_path
from mlirkit.io.trec import read_run, write_run

RUN = {"q1": {"d1": 2.0, "d2": 1.5}, "q2": {"d3": 0.25}}


@pytest.mark.parametrize("name", ["r.trec", "r.trec.gz"])
def test_writer_puts_a_sidecar_beside_the_run(tmp_path, name):
    import ranx

    path = tmp_path / name
    write_run(RUN, path, "r", provenance={"topics": {"source": "t.tsv"}})
    side = read_sidecar(path)
    assert side is not None and sidecar_path(path).name == name + ".provenance.json"
    assert side["run_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert side["run"] == name and side["topics"] == {"source": "t.tsv"} and side["mlirkit_version"]
    assert isinstance(side["command"], list) and side["created"]
    assert read_run(path) == RUN  # mlirkit's reader: the run, unchanged
    if name.endswith(".trec"):
        assert ranx.Run.from_file(str(path), kind="trec").to_dict() == RUN


def test_the_command_is_the_one_the_producer_passes_else_the_scripts_own(tmp_path, monkeypatch):
    """A CLI passes its command line (``cli_command``); without one the sidecar records ``sys.argv``, also inside a
    running CLI: provenance reads no CLI state."""
    import ast
    import sys

    import mlirkit.io.provenance
    from mlirkit.base.cli import cli_command

    assert cli_command("mlirkit.search.cli", ["--hits", 5]) == ["python", "-m", "mlirkit.search", "--hits", "5"]
    monkeypatch.setattr(sys, "argv", ["my_script.py", "--flag"])
    assert cli_command("mlirkit.fuse.__main__") == ["python", "-m", "mlirkit.fuse", "--flag"]
    write_run(RUN, tmp_path / "cli.trec", "r", provenance={"command": cli_command("mlirkit.search.cli", ["-x"])})
    assert read_sidecar(tmp_path / "cli.trec")["command"] == ["python", "-m", "mlirkit.search", "-x"]

    def a_cli(argv):  # a CLI that writes a run without passing its command
        write_run(RUN, tmp_path / "script.trec", "r")
        return 0

    assert run_cli(a_cli, ["--ignored"]) == 0
    assert read_sidecar(tmp_path / "script.trec")["command"] == ["my_script.py", "--flag"]
    source = ast.parse(open(mlirkit.io.provenance.__file__, encoding="utf-8").read())
    assert not [n for n in ast.walk(source) if isinstance(n, ast.ImportFrom) and n.module == "mlirkit.base.cli"]


def test_overwrite_replaces_the_sidecar_and_a_foreign_file_is_kept(tmp_path):
    path = tmp_path / "r.trec"
    write_run(RUN, path, "r")
    first = read_sidecar(path)["run_sha256"]
    write_run({"q1": {"d9": 1.0}}, path, "r", overwrite=True)
    assert read_sidecar(path)["run_sha256"] != first == hashlib.sha256(b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.5 r\n"
                                                                         b"q2 Q0 d3 1 0.25 r\n").hexdigest()
    other = tmp_path / "s.trec"
    sidecar_path(other).write_text("my notes\n", "utf-8")
    with pytest.raises(MlirkitError, match=r"s\.trec\.provenance\.json exists but is not a run's provenance sidecar"):
        write_run(RUN, other, "s")
    assert not other.exists() and sidecar_path(other).read_text("utf-8") == "my notes\n"


def test_a_stale_sidecar_is_reported_not_used(tmp_path):
    path = tmp_path / "r.trec"
    write_run(RUN, path, "r")
    assert "provenance" in describe_file(path)
    path.write_text("q1 Q0 d1 1 1.0 other\n", "utf-8")  # replaced by another program
    d = describe_file(path)
    assert "provenance" not in d and d["provenance_stale"].endswith("r.trec.provenance.json")


@pytest.fixture(scope="module")
def searched(tmp_path_factory, tiny_model_dir):
    """An index, topics, qrels and two runs written by mlirkit.search (one with --hits 1)."""
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.search.cli import main as search_main

    root = tmp_path_factory.mktemp("prov")
    docs = [("d1", "The ferry leaves the harbour.", "en"), ("d2", "Die Fähre verlässt den Hafen.", "de"),
            ("d3", "Copy the files.", "en")]
    (root / "c.jsonl").write_text("".join(json.dumps({"_id": i, "text": t, "lang": la}, ensure_ascii=False) + "\n"
                                          for i, t, la in docs), "utf-8")
    assert run_cli(encode_main, ["--corpus", str(root / "c.jsonl"), "--output", str(root / "index"), "--encoder",
                                 str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64", "--quiet"]) == 0
    (root / "t.tsv").write_text("q1\tferry\ten\nq2\tfiles\ten\n", "utf-8")
    (root / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n", "utf-8")
    for name, hits in (("a", "3"), ("b", "1")):
        assert run_cli(search_main, ["--index", str(root / "index"), "--topics", str(root / "t.tsv"), "--output",
                                     str(root / "runs" / f"{name}.trec"), "--hits", hits, "--quiet"]) == 0
    return root


def test_search_records_index_encoder_topics_and_command(searched):
    side = read_sidecar(searched / "runs" / "a.trec")
    meta = searched / "index" / "meta.json"
    assert side["index"] == {"path": str(searched / "index"), "meta_sha256": hashlib.sha256(meta.read_bytes()).hexdigest()}
    index_meta = json.loads(meta.read_text("utf-8"))
    from mlirkit.encoders.base import fingerprint_digest

    assert side["encoder"]["digest"] == fingerprint_digest(index_meta["encoder"])
    assert side["transform"] is None and side["hits"] == 3
    assert side["topics"] == {"path": str(searched / "t.tsv"),
                              "sha256": hashlib.sha256((searched / "t.tsv").read_bytes()).hexdigest()}
    assert side["command"][:3] == ["python", "-m", "mlirkit.search"] and "--hits" in side["command"]


def test_eval_reports_where_each_run_came_from(searched, capsys):
    from mlirkit.eval.cli import main

    runs = searched / "runs"
    out = searched / "report.json"
    # a shell glob runs/* lists the sidecars too: they are skipped, not read as runs
    paths = sorted(str(p) for p in runs.iterdir())
    assert len(paths) == 4
    assert run_cli(main, ["--qrels", str(searched / "qrels.txt"), "--runs", *paths, "--metrics", "ndcg@3",
                          "--significance", "none", "--output", str(out), "--output", str(searched / "r.md")]) == 0
    printed = capsys.readouterr().out
    inputs = json.loads(out.read_text("utf-8"))["_meta"]["inputs"]
    assert inputs["qrels"]["sha256"] == hashlib.sha256((searched / "qrels.txt").read_bytes()).hexdigest()
    assert sorted(inputs["runs"]) == ["a", "b"]
    for name in ("a", "b"):
        run = inputs["runs"][name]
        assert run["sha256"] == hashlib.sha256((runs / f"{name}.trec").read_bytes()).hexdigest()
        assert run["provenance"]["index"]["path"] == str(searched / "index")
        assert run["provenance"]["hits"] == {"a": 3, "b": 1}[name]
    md = (searched / "r.md").read_text("utf-8")
    assert md.startswith("| run |") and "**inputs**" in md and md.count("python -m mlirkit.search") == 2
    assert "**inputs**" in printed and f"index {searched / 'index'}" in printed


# ------------------------------------------------------------------ hostile sidecars: one line, never a forged row
def _forge(run, **fields):
    """Rewrite the sidecar of ``run`` with ``fields`` changed (its run_sha256 still matches the run)."""
    path = sidecar_path(run)
    side = json.loads(path.read_text("utf-8"))
    side.update(fields)
    path.write_text(json.dumps(side), "utf-8")


@pytest.mark.parametrize("fields, message", [
    ({"index": "indexes/x"}, "field 'index' must be an object, got 'indexes/x'"),
    ({"command": 5}, "field 'command' must be a list, got 5"),
    ({"command": ["python", 7]}, "field 'command[1]' must be a string, got 7"),
    ({"encoder": {"name": ["e5"]}}, "field 'encoder.name' must be a string or null"),
    ({"run_sha256": None}, "field 'run_sha256' must be a sha256"),
    ({"format": "something-else"}, "field 'format' must be 'mlirkit-run-provenance'"),
])
def test_a_sidecar_with_a_field_of_another_type_is_one_line(tmp_path, capsys, fields, message):
    from mlirkit.eval.cli import main
    from tests.helpers import assert_refused

    write_run(RUN, tmp_path / "r.trec", "r", provenance={"index": {"path": "ix", "meta_sha256": None}})
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n", "utf-8")
    _forge(tmp_path / "r.trec", **fields)
    argv = ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "r.trec"), "--metrics", "ndcg@10",
            "--significance", "none"]
    assert_refused(main, argv, capsys, tmp_path, f"r.trec.provenance.json: {message}")


def test_a_sidecar_that_is_not_json_is_one_line(tmp_path):
    write_run(RUN, tmp_path / "r.trec", "r")
    sidecar_path(tmp_path / "r.trec").write_text("{not json", "utf-8")
    with pytest.raises(MlirkitError, match=r"r\.trec\.provenance\.json: not valid JSON"):
        describe_file(tmp_path / "r.trec")


def test_a_command_with_newlines_never_injects_rows_into_the_report(tmp_path, capsys):
    from mlirkit.eval.cli import main

    write_run(RUN, tmp_path / "r.trec", "r")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n", "utf-8")
    _forge(tmp_path / "r.trec", command=["python", "x\n| run injected | fake.trec | 0 | x |\n\n**ndcg@10 = 0.99**\n"])
    assert run_cli(main, ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "r.trec"), "--metrics",
                          "ndcg@10", "--significance", "none", "--output", str(tmp_path / "r.md"),
                          "--output", str(tmp_path / "r.tex")]) == 0
    printed = capsys.readouterr().out
    for text in (printed, (tmp_path / "r.md").read_text("utf-8")):
        lines = text.splitlines()
        assert not any(line.startswith("| run injected") or line == "**ndcg@10 = 0.99**" for line in lines), text
        inputs = lines[lines.index("**inputs**") + 2:]
        assert len(inputs) == 4 and [line[:7] for line in inputs] == ["| input", "|------", "| qrels", "| run r"]
        assert "x\\n\\| run injected \\| fake.trec" in inputs[-1]  # shown, escaped, in its own cell
    tex = (tmp_path / "r.tex").read_text("utf-8")
    assert "\n| run injected" not in tex and "\n\n**ndcg" not in tex


# ------------------------------------------------------------------ provenance last
class _FailsAtClose:
    """A file whose buffered bytes cannot reach the disk: ``flush`` and ``close`` fail (a full disk)."""

    def __init__(self, f) -> None:
        self._f = f

    def flush(self):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def close(self):
        self._f.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.fixture
def run_cannot_reach_the_disk(monkeypatch):
    """The run's temporary fails when its bytes go to the disk; the sidecar's would not."""
    import builtins

    import mlirkit.base.fs as fs

    def fake_open(file, mode="r", *args, **kwargs):
        f = builtins.open(file, mode, *args, **kwargs)
        return _FailsAtClose(f) if ".trec.tmp-" in os.path.basename(str(file)) and "w" in mode else f

    monkeypatch.setattr(fs, "open", fake_open, raising=False)


def test_a_run_that_fails_to_reach_the_disk_leaves_no_sidecar(tmp_path, run_cannot_reach_the_disk):
    with pytest.raises(MlirkitError, match=r"cannot write .*r\.trec: No space left on device"):
        write_run(RUN, tmp_path / "r.trec", "r")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no orphan sidecar, no temporary


def test_an_overwrite_that_fails_keeps_the_old_run_and_its_matching_sidecar(tmp_path, monkeypatch):
    path = tmp_path / "r.trec"
    write_run(RUN, path, "r")
    before = path.read_bytes(), sidecar_path(path).read_bytes()
    import builtins

    import mlirkit.base.fs as fs

    monkeypatch.setattr(fs, "open", lambda file, mode="r", *a, **k: _FailsAtClose(builtins.open(file, mode, *a, **k))
                        if ".r.trec.tmp-" in os.path.basename(str(file)) else builtins.open(file, mode, *a, **k),
                        raising=False)
    with pytest.raises(MlirkitError, match="No space left on device"):
        write_run({"q1": {"d9": 1.0}}, path, "r", overwrite=True)
    assert (path.read_bytes(), sidecar_path(path).read_bytes()) == before
    assert "provenance" in describe_file(path)  # the sidecar still describes the run's bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.trec", "r.trec.provenance.json"]


def test_a_sidecar_that_cannot_be_published_puts_the_old_run_back(tmp_path, monkeypatch):
    import mlirkit.base.fs as fs

    path = tmp_path / "r.trec"
    write_run(RUN, path, "r")
    before = path.read_bytes(), sidecar_path(path).read_bytes()
    real = fs.replace_path

    def replace(src, dst):
        if dst.name.endswith(".provenance.json"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(src, dst)

    monkeypatch.setattr(fs, "replace_path", replace)
    with pytest.raises(MlirkitError, match=r"cannot write .*r\.trec\.provenance\.json: Input/output error"):
        write_run({"q1": {"d9": 1.0}}, path, "r", overwrite=True)
    assert (path.read_bytes(), sidecar_path(path).read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.trec", "r.trec.provenance.json"]
    with pytest.raises(MlirkitError):
        write_run(RUN, tmp_path / "new.trec", "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.trec", "r.trec.provenance.json"]  # no run without its sidecar
