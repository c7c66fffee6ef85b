"""Figures that check themselves (:mod:`mlirkit.benchmark.check`): a run passes against the reference written from
it, fails (exit 1) naming each reference cell moved beyond its tolerance, a missing or extra cell; the shipped
references have a tolerance and a reason per cell; the quick slice checks against its own reference (slow)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlirkit.benchmark import check as check_mod
from tests.benchmark.test_xquad import config, run


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("check")
    run(config(tmp))
    return tmp / "out"


def _main(argv, monkeypatch, root: Path) -> int:
    from mlirkit.base.cli import run_cli
    from mlirkit.benchmark.cli import main

    monkeypatch.setattr(check_mod, "REFERENCE", root)
    return run_cli(main, argv)


def test_a_run_passes_against_its_own_reference(report_dir, tmp_path, monkeypatch, capsys):
    written = check_mod.write_reference(report_dir, root=tmp_path / "ref", run="pytest")
    assert sorted(p.name for p in written) == ["lareqa.json", "xquad-r.json"]
    ref = json.loads((tmp_path / "ref" / "xquad-r.json").read_text())
    cell = ref["cells"]["fake | base | ndcg@20"]
    assert cell["tolerance"] > 0 and cell["why"] in ref["reasons"]
    assert ref["cells"]["fake | shift-tatoeba | alpha"]["tolerance"] == 0.0
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 0
    out = capsys.readouterr().out
    assert "check FAILED" not in out and "every checked cell within its tolerance" in out


@pytest.mark.parametrize("part,cell", [("xquad-r", "fake | shift-tatoeba | ndcg@20"),
                                       ("xquad-r", "fake | shift-corpus | alpha"),
                                       ("lareqa", "fake | base | map")])
def test_a_cell_moved_beyond_its_tolerance_fails_and_is_named(report_dir, tmp_path, monkeypatch, capsys, part, cell):
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    path = tmp_path / "ref" / f"{part}.json"
    ref = json.loads(path.read_text())
    entry = ref["cells"][cell]
    entry["value"] += entry["tolerance"] + 0.01
    path.write_text(json.dumps(ref))
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("check FAILED:")]
    assert len(failed) == 1 and failed[0].startswith(f"check FAILED: {part}: {cell}: ")


def test_a_cell_within_its_tolerance_passes(report_dir, tmp_path, monkeypatch):
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    path = tmp_path / "ref" / "xquad-r.json"
    ref = json.loads(path.read_text())
    entry = ref["cells"]["fake | base | ndcg@20"]
    entry["value"] += 0.9 * entry["tolerance"]
    path.write_text(json.dumps(ref))
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 0


def test_missing_and_extra_cells_fail(report_dir, tmp_path, monkeypatch, capsys):
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    path = tmp_path / "ref" / "xquad-r.json"
    ref = json.loads(path.read_text())
    ref["cells"]["fake | lsar-corpus | recall@20"] = ref["cells"].pop("fake | base | recall@20")
    ref["cells"]["fake | gone | ndcg@20"] = {"value": 0.5, "tolerance": 0.01, "why": "bf16"}
    path.write_text(json.dumps(ref))
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 1
    out = capsys.readouterr().out
    assert "check FAILED: xquad-r: fake | gone | ndcg@20: missing" in out
    assert "check FAILED: xquad-r: fake | base | recall@20: " in out and "not in the reference" in out


def test_a_folder_without_a_report_is_one_line_and_exit_2(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.benchmark.cli import main

    assert run_cli(main, ["--check", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "report.json" in err[0]


@pytest.mark.parametrize("quick", [False, True])
def test_the_shipped_references_have_a_tolerance_and_a_reason_per_cell(quick):
    folder = check_mod.reference_dir(quick)
    files = sorted(folder.glob("*.json"))
    assert {p.stem for p in files} >= {"xquad-r", "ddtp"}
    for path in files:
        ref = json.loads(path.read_text())
        assert ref["part"] == path.stem and ref["quick"] is quick and ref["command"].startswith("python -m mlirkit.benchmark")
        for cell, entry in ref["cells"].items():
            assert len(cell.split(" | ")) == 3, cell
            assert entry["tolerance"] >= 0 and entry["why"] in ref["reasons"] and ref["reasons"][entry["why"]], cell
            assert (entry["tolerance"], entry["why"]) == check_mod.tolerance(cell, quick), cell
