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


def test_a_missing_cell_fails_and_an_extra_one_is_named(report_dir, tmp_path, monkeypatch, capsys):
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    path = tmp_path / "ref" / "xquad-r.json"
    ref = json.loads(path.read_text())
    del ref["cells"]["fake | base | recall@20"]
    ref["cells"]["fake | gone | ndcg@20"] = {"value": 0.5, "tolerance": 0.01, "why": "bf16"}
    path.write_text(json.dumps(ref))
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 1
    out = capsys.readouterr().out
    assert "check FAILED: xquad-r: fake | gone | ndcg@20: missing" in out
    assert "cells the reference has no figure for (not checked: fake | base | recall@20)" in out


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


# ---------------------------------------------------------------------------- the docs quote the reference
ROOT = Path(__file__).resolve().parents[2]
#: how the docs name the encoders of the reference
ENCODER_NAMES = {"e5-small": "multilingual-e5-small-q4", "USEM": "usem", "USE": "usem"}


def _section(text: str, heading: str) -> str:
    """The lines under ``heading`` up to the next heading of its level or above."""
    level = heading.split(" ", 1)[0]
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#") and
                lines[i].split(" ", 1)[0] in {"#" * n for n in range(1, len(level) + 1)}), len(lines))
    return "\n".join(lines[start:end])


def _first_table(text: str) -> tuple[list[str], list[list[str]]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert rows, "no table"
    return rows[0], [r for r in rows[2:]]


def _number(cell: str) -> str:
    return cell.replace("†", "").replace("*", "").strip()


def _metric_of(header: str) -> str | None:
    from mlirkit.benchmark.tables import METRIC_LABELS

    return next((m for m, lab in METRIC_LABELS.items() if header == lab or header.startswith(lab + " (")), None)


def _expected(part: str, cell: str) -> str:
    from mlirkit.benchmark.tables import fmt, metric_digits

    entry = check_mod.load_reference(part, False)["cells"][cell]
    metric = cell.rsplit(" | ", 1)[1]
    return f"{entry['value']:g}" if metric == "alpha" else fmt(entry["value"], metric_digits(metric))


@pytest.mark.parametrize("part,heading,sub", [("ddtp", "## The main job: DDTP, English queries", "### Main table"),
                                              ("xquad-r", "## XQuAD-R: the SHIFT paper's benchmark", None)])
def test_the_results_doc_tables_quote_the_reference(part, heading, sub):
    """docs/results.md's main tables: every figure of every row is the reference cell's, as the report prints it."""
    text = _section((ROOT / "docs" / "results.md").read_text(encoding="utf-8"), heading)
    header, rows = _first_table(_section(text, sub) if sub else text)
    assert header[:3] == ["encoder", "system", "alpha"]
    seen = set()
    for row in rows:
        encoder, system = ENCODER_NAMES.get(row[0], row[0]), row[1]
        if "@" not in row[1] and row[2] and system != "base" and system.startswith("shift-"):
            assert _number(row[2]) == _expected(part, f"{encoder} | {system} | alpha"), row
        for head, value in zip(header[3:], row[3:]):
            metric = _metric_of(head)
            if metric is not None:
                assert _number(value) == _expected(part, f"{encoder} | {system} | {metric}"), (row[:2], head)
                seen.add((encoder, system))
    assert {s for _, s in seen} >= {"base", "shift-tatoeba" if part == "xquad-r" else "shift-ood"}
    assert {e for e, _ in seen} == {"multilingual-e5-small-q4", "usem"}


#: the LSAR/LEACE table's system names -> the report's
LSAR_TABLE_SYSTEMS = {"base": "base", "SHIFT, Tatoeba pairs": "shift-tatoeba", "SHIFT, corpus-fitted": "shift-corpus",
                      "centering (Tatoeba)": "centering-tatoeba", "LIR (Tatoeba)": "lir-tatoeba",
                      "SHIFT, other-domain pairs": "shift-ood", "SHIFT, in-domain DDTP pairs": "shift-ddtp",
                      "centering (DDTP pairs)": "centering-ddtp", "LIR (DDTP pairs)": "lir-ddtp",
                      "**LSAR**": "lsar-corpus", "**LEACE**": "leace-corpus"}


def test_the_lsar_leace_table_quotes_the_reference():
    """docs/results.md's "LSAR and LEACE beside SHIFT" table: every cell of every row (both parts, both
    encoders, PEER@20 and MRC@10 included) is the reference cell's."""
    import re

    text = _section((ROOT / "docs" / "results.md").read_text(encoding="utf-8"),
                    "## LSAR and LEACE beside SHIFT, centering and LIR")
    header, rows = _first_table(text)
    assert header[:3] == ["part", "encoder", "system"]
    metrics = [_metric_of(h) for h in header[3:]]
    assert None not in metrics and {"peer@20", "mrc@10"} <= set(metrics)
    seen = set()
    for row in rows:
        part = {"XQuAD-R": "xquad-r", "DDTP": "ddtp"}[row[0]]
        system = LSAR_TABLE_SYSTEMS[re.sub(r" \(((dev )?alpha )?[0-9.]+\)$", "", row[2])]
        for metric, value in zip(metrics, row[3:]):
            assert _number(value) == _expected(part, f"{ENCODER_NAMES[row[1]]} | {system} | {metric}"), (row[:3], metric)
        seen.add((part, row[1], system))
    assert len(seen) == 28


def test_the_readme_results_quote_the_reference():
    """README's Results: each row is a part and a metric of e5-small, base then SHIFT (``a / b`` for DDTP's two
    pair sets), the reference's figures."""
    text = _section((ROOT / "README.md").read_text(encoding="utf-8"), "## Results")
    header, rows = _first_table(text)
    assert header[:4] == ["e5-small", "metric", "base", "SHIFT"]
    shifts = {"xquad-r": ["shift-tatoeba"], "ddtp": ["shift-ood", "shift-ddtp"]}
    parts = set()
    for row in rows:
        part = "xquad-r" if row[0].startswith("XQuAD-R") else "ddtp" if row[0].startswith("DDTP") else None
        assert part is not None, row
        metric = _metric_of(row[1])
        assert metric is not None, row
        encoder = "multilingual-e5-small-q4"
        assert _number(row[2]) == _expected(part, f"{encoder} | base | {metric}"), row
        values = [_number(v) for v in row[3].split("/")]
        assert values == [_expected(part, f"{encoder} | {s} | {metric}") for s in shifts[part]], row
        parts.add(part)
    assert parts == {"xquad-r", "ddtp"}


@pytest.mark.slow
@pytest.mark.timeout(3600)  # cold: ~200 s of CPU; on the shared 2-core machine over 900 s of wall clock
def test_the_quick_slice_checks_against_its_own_reference(tmp_path, capsys, users_backend):
    """CI's check: the real --quick slice (both encoders, XQuAD-R and DDTP) against reference/quick/, on the
    backend a user gets (not the suite's torch reference)."""
    from mlirkit.benchmark.cli import main

    rc = main(["--quick", "--check", "--no-plots", "--quiet", "--output", str(tmp_path / "quick")])
    out = capsys.readouterr().out
    assert rc == 0, [line for line in out.splitlines() if line.startswith("check FAILED")]
    for part in ("xquad-r", "ddtp"):
        assert f"check: {part}: " in out and "no quick reference" not in out


# ---------------------------------------------------------------- a check that checks nothing fails
def _rewrite_report(report_dir, tmp_path, change) -> Path:
    out = tmp_path / "report"
    out.mkdir()
    report = json.loads((report_dir / "report.json").read_text())
    change(report)
    (out / "report.json").write_text(json.dumps(report))
    return out


def _rename_encoder(report):
    section = report["xquad"]["encoders"]
    section["renamed"] = section.pop("fake")


@pytest.mark.parametrize("change, failure", [
    (lambda r: (r.pop("xquad"), r["config"].update(xquad=None, lareqa=None)), "nothing was compared"),
    (lambda r: r.pop("xquad"), "xquad-r: the run asked for this part but the report holds no figures of it"),
    (_rename_encoder, "xquad-r: encoder 'renamed': the reference has no figures of it"),
])
def test_a_check_that_compares_nothing_fails(report_dir, tmp_path, monkeypatch, capsys, change, failure):
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    report = _rewrite_report(report_dir, tmp_path, change)
    assert _main(["--check", str(report)], monkeypatch, tmp_path / "ref") == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("check FAILED: ")]
    assert any(failure in line for line in failed) and "every checked cell within its tolerance" not in out


@pytest.mark.parametrize("change, message", [
    (lambda ref: ref["cells"]["fake | base | ndcg@20"].update(tolerance=float("nan")), "field 'tolerance'"),
    (lambda ref: ref["cells"]["fake | base | ndcg@20"].update(tolerance=-0.01), "field 'tolerance'"),
    (lambda ref: ref["cells"]["fake | base | ndcg@20"].update(tolerance="0.1"), "field 'tolerance'"),
    (lambda ref: ref["cells"]["fake | base | ndcg@20"].update(value=float("inf")), "field 'value'"),
    (lambda ref: ref["cells"]["fake | base | ndcg@20"].pop("why"), "field 'why'"),
    (lambda ref: ref["cells"].update({"fake base ndcg@20": ref["cells"]["fake | base | ndcg@20"]}), "a cell is named"),
    (lambda ref: ref["cells"].update({"fake | base | x": [1]}), "expected an object"),
    (lambda ref: ref.update(cells=[]), "field 'cells'"),
    (lambda ref: ref.update(cells={}), "field 'cells'"),
])
def test_a_malformed_reference_is_one_line_naming_file_and_field(report_dir, tmp_path, monkeypatch, capsys,
                                                                 change, message):
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    path = tmp_path / "ref" / "xquad-r.json"
    ref = json.loads(path.read_text())
    change(ref)
    path.write_text(json.dumps(ref))
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "xquad-r.json" in err[0] and message in err[0], err


@pytest.mark.parametrize("text", ["{broken", "[]", '{"config": 3}', '{"config": {"metrics": ["map"]}, "xquad": {}, '
                                  '"encoders": {"x": {}}}', "[" * 100_000])
def test_a_malformed_report_or_reference_file_is_one_line(report_dir, tmp_path, monkeypatch, capsys, text):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "report.json").write_text(text)
    assert _main(["--check", str(tmp_path / "r")], monkeypatch, tmp_path / "ref") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "report.json" in err[0] and "Traceback" not in err[0], err
    check_mod.write_reference(report_dir, root=tmp_path / "ref")
    (tmp_path / "ref" / "xquad-r.json").write_text(text)
    assert _main(["--check", str(report_dir)], monkeypatch, tmp_path / "ref") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "xquad-r.json" in err[0], err
