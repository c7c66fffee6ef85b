"""Speed of ``mlirkit.eval.evaluate`` on a large synthetic run (seeded): 10,000 queries x 1,000 hits.

    .venv/bin/python -m perf.eval_speed [--queries 10000] [--hits 1000] [--io]

Prints one JSON object of timings: ``*_s`` wall-clock seconds and ``*_cpu_s`` CPU seconds of the
process (all threads; on a shared machine the CPU figure is the one that does not depend on load). ranx is warmed up first (numba compile or cache load),
so the figures are those of a process that has already used ranx once; the warm-up time is reported
separately. ``--io`` also times writing and reading the run as a TREC file.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from mlirkit.base.numba_cache import numba_cache_dir

LANGS = ["en", "de", "fr", "es", "it", "ja", "ru", "zh"]


def synthetic(n_queries: int, hits: int, n_docs: int, seed: int):
    """qrels (8 judged documents per query, grades 1-2), a run of ``hits`` distinct documents per query
    (with 0-7 of the relevant ones placed at random ranks), documents in 8 languages round robin."""
    import numpy as np

    rng = np.random.default_rng(seed)
    doc_ids = [f"doc{i:07d}" for i in range(n_docs)]
    doc_langs = {d: LANGS[i % len(LANGS)] for i, d in enumerate(doc_ids)}
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q:05d}"
        rel = np.unique(rng.integers(0, n_docs, size=8))
        qrels[qid] = {doc_ids[i]: int(g) for i, g in zip(rel, rng.integers(1, 3, size=len(rel)))}
        n_rel = int(rng.integers(0, len(rel)))
        others = np.setdiff1d(np.unique(rng.integers(0, n_docs, size=hits + hits // 4)), rel)
        picked = np.concatenate([rel[:n_rel], rng.permutation(others)[: hits - n_rel]])
        scores = rng.random(len(picked))
        run[qid] = {doc_ids[i]: float(s) for i, s in zip(picked, scores)}
    return qrels, run, doc_langs


class Timer:
    """``with Timer(out, "name"):`` records ``name_s`` (wall) and ``name_cpu_s`` (process CPU)."""

    def __init__(self, out: dict, name: str) -> None:
        self.out, self.name = out, name

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.out[f"{self.name}_s"] = round(time.perf_counter() - self.wall, 2)
        self.out[f"{self.name}_cpu_s"] = round(time.process_time() - self.cpu, 2)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--hits", type=int, default=1_000)
    p.add_argument("--docs", type=int, default=500_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--io", action="store_true", help="also time write_run/read_run of the run")
    args = p.parse_args(argv)
    from mlirkit.eval import evaluate

    out: dict = {"queries": args.queries, "hits": args.hits, "docs": args.docs, "cpus": os.cpu_count(),
                 "python": platform.python_version(), "numba_cache_dir": numba_cache_dir(),
                 "load_average_1min_at_start": round(os.getloadavg()[0], 2)}
    with Timer(out, "make_data"):
        qrels, run, doc_langs = synthetic(args.queries, args.hits, args.docs, args.seed)
    out["run_entries"] = sum(len(v) for v in run.values())

    with Timer(out, "ranx_warmup"):  # import ranx + compile or load numba's cache
        evaluate({"q": {"a": 1}}, {"r": {"q": {"a": 1.0, "b": 0.5}}}, ["ndcg@20", "recall@100", "mrr@10"],
                 significance=None)

    metrics = ["ndcg@20", "recall@100", "mrr@10", "tlr@20"]
    with Timer(out, "evaluate_1_run"):
        res = evaluate(qrels, {"run": run}, metrics, doc_langs=doc_langs, query_langs="en", significance=None)
    out["values"] = {m: round(res.value("run", m), 6) for m in metrics}
    out["tlr_counted"] = res.counted["tlr@20"]

    # a second run (scores perturbed), two runs with the Fisher test (1000 permutations)
    import random

    rng = random.Random(args.seed + 1)
    run2 = {q: {d: s + rng.random() * 0.1 for d, s in hits.items()} for q, hits in run.items()}
    with Timer(out, "evaluate_2_runs_fisher"):
        evaluate(qrels, {"a": run, "b": run2}, metrics, doc_langs=doc_langs, query_langs="en",
                 significance="fisher")

    if args.io:
        from mlirkit.io.trec import read_run, write_run

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "run.trec"
            with Timer(out, "write_run"):
                write_run(run, path, "bench")
            with Timer(out, "read_run"):
                read_run(path)
            out["run_file_mb"] = round(path.stat().st_size / 1e6, 1)
    out["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
