"""Run the hostile pass: every case of ``experiments/hostile/cases_*.py``; a Markdown table of surface, input,
expected and observed on stdout, the same as JSON with ``--output``.

    OMP_NUM_THREADS=1 python -m experiments.hostile.run --work work/hostile --output experiments/results/hostile-pass-4.json

``--only WORD`` (repeatable) keeps the cases whose surface or name holds WORD, ``--skip WORD`` leaves out those
whose name holds it (against an older checkout, a case that would start the whole benchmark). Exit 0 when every case holds, else 1.
"""
from __future__ import annotations

import argparse
import importlib
import json
import logging
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from experiments.hostile.harness import workspace
from experiments.hostile.marks import ARGUED, FIXED

__all__ = ["MODULES", "main"]

def scrub(text: str, work: str) -> str:
    """``text`` with the scratch folder written ``WORK``, a path cut short at the end of ``text`` too."""
    text = text.replace(work, "WORK")
    for n in range(len(work) - 1, 1, -1):
        if text.endswith(work[:n]):
            return text[:-n] + "WORK"
    return text


MODULES = ["cases_inputs", "cases_runs", "cases_data", "cases_serve", "cases_qdrant", "cases_api"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "mlirkit-hostile",
                   help="scratch folder (reused)")
    p.add_argument("--only", action="append", default=None, help="keep cases whose surface or name holds this (repeatable)")
    p.add_argument("--skip", action="append", default=[], help="leave out cases whose name holds this (repeatable)")
    p.add_argument("--output", type=Path, default=None, help="the results as JSON")
    args = p.parse_args(argv)
    args.work = args.work.resolve()
    logging.disable(logging.WARNING)
    ws = workspace(args.work / "ws")
    rows = []
    for name in MODULES:
        try:
            module = importlib.import_module(f"experiments.hostile.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"experiments.hostile.{name}":
                continue
            raise
        for i, case in enumerate(module.CASES):
            if (args.only and not any(w in case.surface or w in case.name for w in args.only)) or \
                    any(w in case.name for w in args.skip):
                continue
            tmp = args.work / "cases" / f"{name}-{i}"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            start = time.perf_counter()
            case.fixed, case.argued = FIXED.get(case.name, ""), case.name in ARGUED
            try:
                outcome = case.attack({**ws, "tmp": tmp})
                held, observed = outcome.held, outcome.observed
            except Exception as e:  # noqa: BLE001 (the harness itself failed: recorded, never hidden)
                held, observed = False, f"harness: {type(e).__name__}: {e}"
                traceback.print_exc()
            rows.append({"surface": case.surface, "input": case.name, "expected": case.expected,
                         "observed": scrub(observed.replace("\n", " "), str(args.work)), "held": held,
                         "note": case.note,
                         "fixed": case.fixed, "argued": case.argued, "seconds": round(time.perf_counter() - start, 2)})
            print(f"{'HELD' if held else 'FAIL'}  {case.surface}: {case.name}  ->  {observed}", file=sys.stderr, flush=True)
    print("| surface | input | expected | observed | outcome | fixed by |\n|---|---|---|---|---|---|")
    for r in rows:
        outcome = ("argued" if r["argued"] else "fixed" if r["fixed"] else "held") if r["held"] else "**FAILS**"
        observed = r["observed"][:150]
        cells = [r["surface"], r["input"], r["expected"], observed, outcome, r["fixed"] or "-"]
        print("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    held = sum(r["held"] for r in rows)
    counts = {k: sum(r["held"] and (("argued" if r["argued"] else "fixed" if r["fixed"] else "held") == k)
                     for r in rows) for k in ("held", "fixed", "argued")}
    print(f"\n{held} of {len(rows)} cases hold ({counts['held']} held already, {counts['fixed']} fixed, "
          f"{counts['argued']} argued)", file=sys.stderr)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"cases": rows, "held": held, "total": len(rows), **counts}, indent=1,
                                          ensure_ascii=False) + "\n", encoding="utf-8")
    return 0 if held == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
