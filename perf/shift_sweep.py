"""SHIFT's alpha sweep in the main job: one search per alpha against one score matrix, on the job's own vectors.

Reads the embeddings the main job cached (``$MLIRKIT_CACHE/benchmark/embeddings/<encoder>/``: run
``python -m mlirkit.benchmark`` once first) and times, interleaved, ``--rounds`` times each:

- the DDTP part: ``retrieval.retrieve`` at each alpha of the sweep (a FAISS search of the shifted, normalised
  documents per alpha) against ``retrieval.shift_sweep`` (one score matrix for every alpha), 913 queries x 10,887
  documents, top 100;
- the XQuAD-R part: ``xquad.shift_run`` at each alpha (the query-time shift, one search per alpha) against
  ``xquad.shift_sweep_runs``, 9,520 queries x 1,920 documents, top 20.

SHIFT vectors: the corpus's own language means (``V_l = mu_l - mu_en``; the cost does not depend on the vectors).
Figures: process CPU seconds (every thread; set ``OMP_NUM_THREADS``) and wall seconds, and how many queries get
the same ranked list both ways (the rest are float-rounding swaps of near ties).

    OMP_NUM_THREADS=1 python -m perf.shift_sweep --encoder usem --output perf/results/shift_sweep_usem.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ALPHAS = tuple(round(0.1 * i, 1) for i in range(1, 11))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", default="usem", help="an encoder of the main job (its cache folder)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--output", type=Path, default=None)
    return p.parse_args(argv)


def cached(encoder: str, label: str) -> np.ndarray:
    """The main job's cached embeddings ``<label>-*.npy`` of ``encoder`` (one entry expected)."""
    from mlirkit.base.cache import cache_dir

    found = sorted((cache_dir("benchmark", "embeddings", create=False) / encoder).glob(f"{label}-*.npy"))
    if len(found) != 1:
        raise SystemExit(f"expected one cached entry {label}-*.npy of {encoder}, found {len(found)}: run the main job")
    return np.load(found[0])


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, round(time.process_time() - cpu, 2), round(time.perf_counter() - wall, 2)


def compare(name: str, per_alpha: Callable[[], list], sweep: Callable[[], list], rounds: int) -> dict[str, Any]:
    rows: dict[str, Any] = {"per_alpha_cpu_s": [], "per_alpha_wall_s": [], "sweep_cpu_s": [], "sweep_wall_s": []}
    for _ in range(rounds):
        old, cpu, wall = timed(per_alpha)
        rows["per_alpha_cpu_s"].append(cpu)
        rows["per_alpha_wall_s"].append(wall)
        new, cpu, wall = timed(sweep)
        rows["sweep_cpu_s"].append(cpu)
        rows["sweep_wall_s"].append(wall)
    rows["same_ranked_lists"] = sum(list(o[q]) == list(n[q]) for o, n in zip(old, new) for q in o)
    rows["ranked_lists"] = sum(len(o) for o in old)
    rows["cpu_ratio"] = round(min(rows["per_alpha_cpu_s"]) / min(rows["sweep_cpu_s"]), 2)
    print(f"{name}: one search per alpha {min(rows['per_alpha_cpu_s'])} CPU s, one score matrix "
          f"{min(rows['sweep_cpu_s'])} CPU s ({rows['cpu_ratio']}x); same ranked list for "
          f"{rows['same_ranked_lists']} of {rows['ranked_lists']}")
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from mlirkit.benchmark.data import load_benchmark
    from mlirkit.benchmark.retrieval import Condition, retrieve, shift_sweep
    from mlirkit.benchmark.xquad import corpus_shift, load_collection, shift_run, shift_sweep_runs
    from mlirkit.search.query_shift import QueryTimeShift
    from mlirkit.transforms import ShiftTransform

    load_start = os.getloadavg()[0]
    data = load_benchmark("mlirkit/ddtp", ("en",))
    docs, queries = cached(args.encoder, "mlirkit_ddtp-corpus-doc"), cached(args.encoder, "mlirkit_ddtp-queries-query")
    qs = [q for s in data.splits.values() for q in s.queries]
    q_ids, q_langs = [q.query_id for q in qs], [q.lang for q in qs]
    d_ids, d_langs = [d.doc_id for d in data.docs], [d.lang for d in data.docs]
    t = ShiftTransform("en", vectors="corpus").fit(docs, d_langs)
    result = {"ddtp": compare(
        "ddtp", lambda: [retrieve(Condition("shift", "s", a, t), docs, d_ids, d_langs, queries, q_ids, q_langs, 100)
                         for a in ALPHAS],
        lambda: shift_sweep(t, ALPHAS, docs, d_ids, d_langs, queries, q_ids, q_langs, 100), args.rounds)}
    coll = load_collection("mlirkit/xquad-r/multi")
    docs, queries = cached(args.encoder, "xquad-r-corpus-doc"), cached(args.encoder, "xquad-r-queries-query")
    q_ids, q_langs = [q.query_id for q in coll.topics.queries], [q.lang for q in coll.topics.queries]
    shift = QueryTimeShift(docs, coll.doc_langs, corpus_shift(docs, coll, "en", {}), metric="cosine",
                           docids=coll.doc_ids)
    result["xquad-r"] = compare(
        "xquad-r", lambda: [shift_run(shift, queries, q_ids, q_langs, 20, a) for a in ALPHAS],
        lambda: shift_sweep_runs(shift, queries, q_ids, q_langs, 20, list(ALPHAS)), args.rounds)
    result.update({"command": "python -m perf.shift_sweep " + " ".join(argv if argv is not None else sys.argv[1:]),
                   "encoder": args.encoder, "alphas": list(ALPHAS), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
                   "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)]})
    print(f"load average {result['load_average'][0]} -> {result['load_average'][1]}")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
