"""Speed of applying a language transform and of searching a shifted vs an unshifted index.

Apply: ``--rows`` x ``--dim`` float32 vectors (default 1M x 768, 3 GB) with a random language each,
transformed chunk by chunk into one reusable output buffer (no full extra copy), for SHIFT, centering
and LIR (r = 1); a plain ``np.copyto`` of the same chunks gives the memory-bandwidth reference.
Search: the same ``--search-rows`` documents indexed unshifted and shifted (both L2-normalised, FAISS
IndexFlatIP), ``--queries`` queries, top-100; the ratio of the two timings.

    .venv/bin/python -m perf.transform_speed [--rows 1000000 --dim 768]
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--langs", type=int, default=10, help="number of document languages (one is the source)")
    p.add_argument("--chunk", type=int, default=65536)
    p.add_argument("--search-rows", type=int, default=200_000)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeat", type=int, default=3, help="apply timings: best of N")
    args = p.parse_args()

    import faiss

    from mlirkit.base.vectors import l2_normalize
    from mlirkit.transforms import CenteringTransform, LIRTransform
    from mlirkit.transforms.shift_transform import ShiftTransform

    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    langs_all = ["en"] + [f"{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(1, args.langs)]  # aa, ab, ...: codes
    enc = {"model": "benchmark"}
    small = {l: rng.standard_normal((256, args.dim), dtype=np.float32) + i for i, l in enumerate(langs_all)}
    transforms = {
        "shift": ShiftTransform.from_tensors({l: rng.standard_normal(args.dim) for l in langs_all[1:]}, encoder=enc, source_lang="en"),
        "centering": CenteringTransform("en").fit(np.concatenate(list(small.values())),
                                                  [l for l, v in small.items() for _ in v]),
        "lir": LIRTransform("en", rank=1).fit(np.concatenate(list(small.values())), [l for l, v in small.items() for _ in v]),
    }
    x = np.empty((args.rows, args.dim), dtype=np.float32)
    for a in range(0, args.rows, args.chunk):
        x[a:a + args.chunk] = rng.standard_normal((min(args.chunk, args.rows - a), args.dim), dtype=np.float32)
    langs = [langs_all[i] for i in rng.integers(0, args.langs, size=args.rows)]
    buf = np.empty((args.chunk, args.dim), dtype=np.float32)
    gb = x.nbytes / 1e9
    results: dict = {"rows": args.rows, "dim": args.dim, "languages": args.langs, "chunk": args.chunk,
                     "input_gb": round(gb, 2), "apply": {}}

    def run(fn) -> float:
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for a in range(0, args.rows, args.chunk):
                b = min(a + args.chunk, args.rows)
                fn(a, b)
            best = min(best, time.perf_counter() - t0)
        return best

    copy_s = run(lambda a, b: np.copyto(buf[:b - a], x[a:b]))
    results["copy_reference"] = {"seconds": round(copy_s, 3), "vectors_per_s": round(args.rows / copy_s)}
    for name, t in transforms.items():
        secs = run(lambda a, b, t=t: t.transform(x[a:b], langs[a:b], "doc", 0.6, out=buf[:b - a]))
        results["apply"][name] = {"seconds": round(secs, 3), "vectors_per_s": round(args.rows / secs),
                                  "gb_per_s": round(gb / secs, 2), "vs_copy": round(secs / copy_s, 2)}
        print(name, results["apply"][name], flush=True)

    # search: shifted vs unshifted index of the same documents
    n = min(args.search_rows, args.rows)
    t = transforms["shift"]
    plain = faiss.IndexFlatIP(args.dim)
    shifted = faiss.IndexFlatIP(args.dim)
    for a in range(0, n, args.chunk):
        b = min(a + args.chunk, n)
        plain.add(l2_normalize(x[a:b]))
        shifted.add(l2_normalize(t.transform(x[a:b], langs[a:b], "doc", 1.0)))
    q = l2_normalize(rng.standard_normal((args.queries, args.dim), dtype=np.float32))
    timings = {"unshifted": [], "shifted": []}
    for _ in range(3):  # interleaved, best of 3
        for name, index in (("unshifted", plain), ("shifted", shifted)):
            t0 = time.perf_counter()
            index.search(q, 100)
            timings[name].append(time.perf_counter() - t0)
    best = {k: min(v) for k, v in timings.items()}
    results["search"] = {"docs": n, "queries": args.queries, "k": 100,
                         "unshifted_s": round(best["unshifted"], 3), "shifted_s": round(best["shifted"], 3),
                         "ratio_shifted_over_unshifted": round(best["shifted"] / best["unshifted"], 3),
                         "threads": faiss.omp_get_max_threads()}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
