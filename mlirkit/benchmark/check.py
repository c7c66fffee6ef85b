"""Figures that check themselves: the main job's reference figures, one versioned file per part
(``reference/<part>.json``; the ``--quick`` slice's in ``reference/quick/``), each cell with the tolerance it
needs and why, and the comparison of a report's figures with them (``python -m mlirkit.benchmark --check``).

A cell is ``"<encoder> | <system> | <metric>"``: a part's main-table figure (the macro mean over query languages
where the part has several), the system named without its alpha (``shift-tatoeba``), and the alpha each SHIFT
chose as a cell of its own (``... | shift-tatoeba | alpha``). A report passes when every reference cell of its
parts and encoders is there and within ``|value - reference| <= tolerance``; cells the reference has no figure for
are named, not checked. The check fails when it compares nothing: a part the run asked for without figures in the
report, an encoder the reference has no figures of, or no reference cell checked at all. Reports and reference files
are validated when read (one line naming the file, cell and field). Tolerances (:data:`REASONS`): e5-small runs OpenVINO bf16 where the CPU computes bf16 natively and fp32
elsewhere; USE is numpy fp32, where only the thread count (summation order) moves a score.

The reference files are written from a run's ``report.json`` by :func:`write_reference` (the run and its command
recorded in each file); docs/results.md and the README quote the same figures (tests/benchmark/test_check.py).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError

#: where the reference files are (a folder per slice: the whole job, ``quick/``)
REFERENCE = Path(__file__).with_name("reference")
#: the parts a report can hold, in report order
PARTS = ("xquad-r", "lareqa", "mlqa-r", "ddtp")
#: why a cell has its tolerance (the ``why`` of each reference cell)
REASONS = {
    "bf16": "e5-small runs OpenVINO bf16 where the CPU has avx512_bf16/amx_bf16, fp32 elsewhere: the whole DDTP main "
            "table in fp32 differs from the bf16 one by at most 0.002 per cell, with the same alphas "
            "(experiments/notes/main-job.md, 'The full benchmark with the fp32 model'); 2.5x that",
    "threads": "USE is numpy fp32: the thread count changes only the summation order (threads 1 and 2 gave the same "
               "cells at 3 digits, docs/results.md); room for a few near-tied documents to swap",
    "alpha": "the alpha a SHIFT chose: fp32 and bf16 choose the same (experiments/notes/main-job.md); another alpha is "
             "another result",
    "quick": "the --quick slice (100 questions or description groups): one query whose relevant document crosses the "
             "cut-off moves a mean by up to 1/71 (DDTP's 71 test queries), and a bf16/fp32 difference that leaves the "
             "whole job's cells within 0.002 can do that on the slice",
    "quick-alpha": "the --quick slice's alpha: a bf16/fp32 or thread difference on 100 questions can move the choice "
                   "by one step of the grid",
}
#: encoders whose arithmetic is fp32 on every CPU (the others run the Hugging Face stack: bf16 where native)
FP32_ENCODERS = ("usem",)
#: MRC@k is on a -100 ... 100 scale: its tolerances are this times the others'
MRC_SCALE = 100.0


def figures(report: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """``{part: {cell: value}}`` of a ``report.json`` (module docstring), for the parts the report holds."""
    metrics = list(report["config"]["metrics"])
    out: dict[str, dict[str, float | None]] = {}
    xquad = report.get("xquad") or {}
    for part, section in (("xquad-r", xquad), ("mlqa-r", report.get("mlqa") or {})):
        if section:
            out[part] = {}
            for enc, e in section["encoders"].items():
                out[part].update(_table(enc, e["result"], e["main_runs"], metrics, e["chosen_alpha"]))
    lareqa = {enc: e["lareqa"] for enc, e in xquad.get("encoders", {}).items() if e.get("lareqa")}
    if lareqa:
        out["lareqa"] = {}
        for enc, lq in lareqa.items():
            fair = lq.get("fairness") or {}
            for run, values in lq["map"].items():
                out["lareqa"].update(_cells(enc, run, {"map": values["macro"],
                                                       **{m: fair.get(run, {}).get(m) for m in metrics
                                                          if m in fair.get(run, {})}}, lq["chosen_alpha"]))
    if report.get("encoders"):
        out["ddtp"] = {}
        for enc, e in report["encoders"].items():
            out["ddtp"].update(_table(enc, e["test"], e["main_runs"], metrics, e["chosen_alpha"]))
    return out


def _table(encoder: str, result: Mapping[str, Any], runs: list[str], metrics: list[str],
           chosen: Mapping[str, float]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for run in runs:
        out.update(_cells(encoder, run, {m: result[run].get(m) for m in metrics if m in result[run]}, chosen))
    return out


def _cells(encoder: str, run: str, values: Mapping[str, Any], chosen: Mapping[str, float]) -> dict[str, float | None]:
    system, _, alpha = run.partition("@")
    out = {f"{encoder} | {system} | {m}": None if v is None else float(v) for m, v in values.items()}
    if alpha:
        vectors = system.split("-", 1)[1]
        out[f"{encoder} | {system} | alpha"] = float(chosen.get(vectors, alpha))
    return out


def tolerance(cell: str, quick: bool) -> tuple[float, str]:
    """``(tolerance, why)`` of a cell (:data:`REASONS`): by its encoder, its metric and the slice."""
    from mlirkit.eval.metrics import parse_metric

    encoder, _, metric = cell.split(" | ")
    if metric == "alpha":
        return (0.2, "quick-alpha") if quick else (0.0, "alpha")
    base, why = (0.002, "threads") if encoder in FP32_ENCODERS else (0.005, "bf16")
    if quick:
        base, why = max(base, 0.03 if why == "bf16" else 0.015), "quick"
    scale = MRC_SCALE if metric != "map" and parse_metric(metric).kind == "mrc" else 1.0
    return base * scale, why


def reference_dir(quick: bool, root: Path | None = None) -> Path:
    return (root or REFERENCE) / ("quick" if quick else "")


def write_reference(report_dir: str | Path, *, root: Path | None = None, run: str = "") -> list[Path]:
    """Write ``<part>.json`` for every part of ``report_dir/report.json`` (into :func:`reference_dir` of its slice):
    each cell's value, tolerance and why, the command and ``run`` (what run it was: date, commit, machine)."""
    report = read_report(report_dir)
    quick = bool(report["config"].get("quick"))
    folder = reference_dir(quick, root)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for part, cells in figures(report).items():
        entries = {}
        for cell, value in cells.items():
            tol, why = tolerance(cell, quick)
            entries[cell] = {"value": None if value is None else round(value, 6), "tolerance": tol, "why": why}
        path = folder / f"{part}.json"
        path.write_text(json.dumps({"part": part, "quick": quick, "command": _portable(report.get("command") or ""),
                                    "run": run,
                                    "reasons": {w: REASONS[w] for w in sorted({e["why"] for e in entries.values()})},
                                    "cells": entries}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _portable(command: str) -> str:
    """The command without the options that name this machine's folders (``--output``, ``--cache-dir``)."""
    import shlex

    words, out = shlex.split(command), []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--output", "--cache-dir"):
            skip = True
        elif not word.startswith(("--output=", "--cache-dir=")):
            out.append(word)
    return shlex.join(out)


#: the report's config field that asks for each part (None there = the part was not run)
PART_FIELDS = {"xquad-r": "xquad", "lareqa": "lareqa", "mlqa-r": "mlqa", "ddtp": "benchmark"}
#: the largest report or reference file read (the shipped ones are a few hundred kB)
MAX_BYTES = 64 * 2**20


def _read_json(path: Path, what: str) -> Any:
    if path.stat().st_size > MAX_BYTES:
        raise MlirkitError(f"{path}: larger than {MAX_BYTES // 2**20} MiB: not {what}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as e:
        raise MlirkitError(f"{path}: not JSON ({' '.join(str(e).split()) or type(e).__name__})") from None


def read_report(report_dir: str | Path) -> dict[str, Any]:
    """``report_dir/report.json``, checked to hold what :func:`figures` reads (one line naming it if not)."""
    path = Path(report_dir) / "report.json"
    if not path.is_file():
        raise MlirkitError(f"{path}: no report.json (the output directory of python -m mlirkit.benchmark)")
    report = _read_json(path, "a benchmark report")
    try:
        if not isinstance(report, dict) or not isinstance(report["config"], dict):
            raise TypeError("expected an object with a 'config' object")
        figures(report)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise MlirkitError(f"{path}: not a report of python -m mlirkit.benchmark "
                           f"({type(e).__name__}: {' '.join(str(e).split())})") from None
    return report


def load_reference(part: str, quick: bool, root: Path | None = None) -> dict[str, Any] | None:
    """The reference of ``part`` (None when there is none), validated: an object whose ``cells`` map cells named
    ``"<encoder> | <system> | <metric>"`` to a finite ``value`` (or null), a finite ``tolerance >= 0`` and a
    ``why``; anything else is one line naming the file, the cell and the field."""
    path = reference_dir(quick, root) / f"{part}.json"
    if not path.is_file():
        return None
    ref = _read_json(path, "a reference file")
    if not isinstance(ref, dict) or not isinstance(ref.get("cells"), dict) or not ref["cells"]:
        raise MlirkitError(f"{path}: field 'cells': expected a non-empty object of reference cells")
    for cell, entry in ref["cells"].items():
        where = f"{path}: cell {cell!r}"
        if len(cell.split(" | ")) != 3 or not all(w.strip() for w in cell.split(" | ")):
            raise MlirkitError(f"{where}: a cell is named '<encoder> | <system> | <metric>'")
        if not isinstance(entry, dict):
            raise MlirkitError(f"{where}: expected an object with value, tolerance and why")
        value, tol = entry.get("value"), entry.get("tolerance")
        if value is not None and not _finite(value):
            raise MlirkitError(f"{where}: field 'value' must be a finite number or null (got {value!r})")
        if not _finite(tol) or tol < 0:
            raise MlirkitError(f"{where}: field 'tolerance' must be a finite number >= 0 (got {tol!r})")
        if not isinstance(entry.get("why"), str):
            raise MlirkitError(f"{where}: field 'why' must be a string (got {entry.get('why')!r})")
    return ref


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check(report: Mapping[str, Any], root: Path | None = None) -> tuple[list[str], list[str]]:
    """``(failures, notes)``: one line per reference cell (of the report's parts and encoders) outside its tolerance
    or missing; notes say what was checked, the parts without a reference and the cells it has no figure for."""
    quick = bool(report["config"].get("quick"))
    failures, notes = [], []
    found = figures(report)
    for part, field in PART_FIELDS.items():
        if report["config"].get(field) and part not in found:
            failures.append(f"{part}: the run asked for this part but the report holds no figures of it")
    checked = 0
    for part, cells in found.items():
        ref = load_reference(part, quick, root)
        slice_ = "quick " if quick else ""
        if ref is None:
            notes.append(f"{part}: no {slice_}reference ({reference_dir(quick, root) / (part + '.json')}): not checked")
            continue
        encoders = {c.split(" | ")[0] for c in cells}
        known = {c.split(" | ")[0] for c in ref["cells"]}
        for encoder in sorted(encoders - known):
            failures.append(f"{part}: encoder {encoder!r}: the reference has no figures of it "
                            f"(it knows {', '.join(sorted(known))})")
        expected = {c: e for c, e in ref["cells"].items() if c.split(" | ")[0] in encoders}
        checked += len(expected)
        for cell, e in expected.items():
            if cell not in cells:
                failures.append(f"{part}: {cell}: missing (reference {_fmt(e['value'])})")
                continue
            value, want = cells[cell], e["value"]
            if value is None or want is None:
                if value is not want:
                    failures.append(f"{part}: {cell}: {_fmt(value)}, reference {_fmt(want)}")
            elif not math.isfinite(value) or abs(value - want) > e["tolerance"] + 1e-9:
                failures.append(f"{part}: {cell}: {_fmt(value)}, reference {_fmt(want)} +- {e['tolerance']:g} "
                                f"({e['why']}): off by {value - want:+.4f}")
        extra = [cell for cell in cells if cell not in expected]
        notes.append(f"{part}: {len(expected)} {slice_}reference cells of {', '.join(sorted(encoders))} checked"
                     + (f"; {len(extra)} cells the reference has no figure for (not checked: {_some(extra)})"
                        if extra else ""))
    if not checked and not failures:
        failures.append("no reference cell was checked (the report has no parts, or none with a reference): "
                        "nothing was compared")
    return failures, notes


def _some(cells: list[str], n: int = 3) -> str:
    return ", ".join(cells[:n]) + (f", ... ({len(cells) - n} more)" if len(cells) > n else "")


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}"


__all__ = ["check", "figures", "load_reference", "read_report", "reference_dir", "tolerance", "write_reference"]
