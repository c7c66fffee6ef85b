"""``python -m mlirkit.fuse`` on two ordinary runs, this checkout against a baseline commit, side by side.

Writes two 6-column TREC runs (``--queries`` x ``--hits``, document ids ``d0 .. d<docs - 1>`` drawn at random,
tags ``a`` and ``b``), extracts the baseline's ``mlirkit/`` (``git archive --baseline``) and times, interleaved,
``--rounds`` times each, in fresh processes (one warm-up round first, so both have their numba kernels cached):

- ``read_run`` of one run (CPU seconds of the call, in its own process);
- the whole CLI ``python -m mlirkit.fuse --runs a.trec b.trec --method rrf --output rrf.trec --quiet``
  (CPU seconds of the process, every thread; wall seconds),

and checks that both write the same bytes. Figures: the best of the rounds, the ratios baseline / this.

    OMP_NUM_THREADS=1 NUMBA_CACHE_DIR=$HOME/.cache/numba python -m perf.fuse_speed --output perf/results/fuse_speed.json
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
READ = ("import sys, time\nfrom mlirkit.io.trec import read_run\nt = time.process_time()\nread_run(sys.argv[1])\n"
        "print(time.process_time() - t)\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", default="main", help="the commit to compare with")
    p.add_argument("--queries", type=int, default=645)
    p.add_argument("--hits", type=int, default=1000)
    p.add_argument("--docs", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--output", type=Path, default=None)
    return p.parse_args(argv)


def write_runs(folder: Path, queries: int, hits: int, docs: int) -> list[Path]:
    """Two runs ``a.trec``, ``b.trec`` of random documents, scores decreasing with the rank."""
    paths = []
    for seed, tag in enumerate("ab"):
        rng = random.Random(seed)
        lines = [f"q{q} Q0 d{d} {r} {hits - r + rng.random():.6f} {tag}\n"
                 for q in range(queries) for r, d in enumerate(rng.sample(range(docs), hits), start=1)]
        paths.append(folder / f"{tag}.trec")
        paths[-1].write_text("".join(lines), encoding="utf-8")
    return paths


def child(tree: Path, args: list[str], cwd: Path) -> tuple[str, float, float]:
    """Run ``python args`` in ``cwd`` (which ``python -m`` and ``-c`` put first on the path: not a checkout) with
    ``tree`` next: (stdout, CPU seconds of the process, wall seconds)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = subprocess.run([sys.executable, *args], env=env, cwd=cwd, check=True, capture_output=True,
                         text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return out, round(cpu, 2), round(time.perf_counter() - wall, 2)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = write_runs(tmp, args.queries, args.hits, args.docs)
        base = tmp / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "mlirkit"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        trees = {"baseline": base, "this": ROOT}
        for name, tree in trees.items():  # each tree imports its own mlirkit
            where = child(tree, ["-c", "import mlirkit; print(mlirkit.__file__)"], tmp)[0]
            assert where.startswith(str(tree)), (name, where)
        rows: dict[str, dict[str, list[float]]] = {n: {"read_run_cpu_s": [], "fuse_cpu_s": [], "fuse_wall_s": []}
                                                   for n in trees}
        for round_ in range(args.rounds + 1):  # round 0 warms the numba caches
            for name, tree in trees.items():
                out_dir = tmp / name
                out_dir.mkdir(exist_ok=True)
                read_cpu = float(child(tree, ["-c", READ, str(runs[0])], tmp)[0])
                _, cpu, wall = child(tree, ["-m", "mlirkit.fuse", "--runs", *map(str, runs), "--method", "rrf",
                                            "--output", str(out_dir / "rrf.trec"), "--quiet", "--overwrite"], tmp)
                if round_:
                    for key, value in zip(rows[name], (round(read_cpu, 3), cpu, wall)):
                        rows[name][key].append(value)
        same = (tmp / "baseline" / "rrf.trec").read_bytes() == (tmp / "this" / "rrf.trec").read_bytes()
    best = {n: {k: min(v) for k, v in r.items()} for n, r in rows.items()}
    ratios = {k: round(best["baseline"][k] / best["this"][k], 2) if best["this"][k] else None for k in best["this"]}
    result: dict[str, Any] = {
        "command": "python -m perf.fuse_speed " + " ".join(argv if argv is not None else sys.argv[1:]),
        "baseline": args.baseline, "baseline_commit": subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], check=True, capture_output=True,
            text=True).stdout.strip(), "queries": args.queries, "hits": args.hits, "rounds": rows, "best": best,
        "ratios_baseline_over_this": ratios, "same_output_bytes": same,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "numba_cache_dir_set": "NUMBA_CACHE_DIR" in os.environ,
        "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)]}
    for key in ratios:
        print(f"{key}: baseline {best['baseline'][key]}, this {best['this'][key]} ({ratios[key]}x)")
    print(f"same output bytes: {same}; load average {result['load_average'][0]} -> {result['load_average'][1]}")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
