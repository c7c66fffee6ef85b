"""Provenance sidecars (mlirkit.io.provenance): every run written by the one TREC writer gets
``RUN.provenance.json`` beside it, tied to the run's bytes by sha256; ranx and mlirkit's readers read the run
unchanged; mlirkit.eval lists the runs and qrels it scored, with hashes and where each run came from."""
from __future__ import annotations

import hashlib
import json

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
    assert run_cli(encode_main, ["--corpus", str(root / "c.jsonl"), "--index", str(root / "index"), "--encoder",
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
                          "--significance", "none", "--report", str(out), "--report", str(searched / "r.md")]) == 0
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
