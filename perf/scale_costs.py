"""Cost growth with corpus size: time and peak memory per phase, each phase in a fresh subprocess.

    .venv/bin/python -m perf.scale_costs run --sizes 100000 300000 1000000 \
        --real outputs/eval-real/idx-usem --work work/scale-costs --out perf/results/scale_costs.json
    .venv/bin/python -m perf.scale_costs plot perf/results/scale_costs.json \
        --out docs/figures/scaling/scale_costs.png

Phases (one subprocess each, so ``ru_maxrss`` is the peak of that phase alone; the baseline after
imports is reported too):

- ``gen``: synthetic data set (768-d float32 unit vectors, seeded): ``--centers`` topic centres, a shared
  anisotropy direction (real embeddings have a common mean), and one offset per language (14 languages
  with skewed frequencies), plus per-document noise; 1,000 English queries from the same model. A
  corpus-fitted SHIFT transform (``ShiftTransform("en", vectors="corpus")``) is fitted
  on the first 50,000 vectors. For ``--real``, the ``embeddings.npy`` and ``langs`` of an existing index
  (and 1,000 of its English document vectors, plus seeded noise, as queries).
- ``write``: ``mlirkit.index.IndexWriter`` of type flat / hnsw / ivf-pq (``mlirkit.index.types``), vectors
  fed from a memory-mapped ``.npy`` in 65,536-row blocks (as ``mlirkit.encode`` does).
- ``shift``: ``LanguageTransform.apply`` (side ``doc``, alpha 1) + L2 normalisation over all vectors in
  65,536-row blocks, written to a memory-mapped output.
- ``load``: ``DenseIndex(path, mmap=False|True)`` with its FAISS index, doc ids and languages; RSS after.
- ``search``: 1,000 queries in one batch, k = 100, FAISS with 1 and 2 OpenMP threads (index loaded
  normally; the load is not timed).

Builds run FAISS with one OpenMP thread: on the shared, oversubscribed 2-core box two threads made
IVF-PQ training 10x slower (PQ codebook training on 20,000 x 768: 4.7 s with 1 thread, 46.6 s with 2,
load average ~5), the spinning-threads effect noted in docs/scale.md. The machine is shared: every
phase records the load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

LANGS = ["en", "de", "fr", "es", "it", "nl", "pt", "ru", "ja", "zh", "cs", "pl", "fi", "sv"]
LANG_WEIGHTS = np.array([14, 10, 9, 8, 7, 6, 6, 5, 5, 5, 4, 4, 3, 3], dtype=np.float64)
BLOCK = 65536
#: index parameters of the growth series: fixed so that only n changes (HNSW lighter than the
#: defaults, IVF-PQ with a fixed quantiser so the 2-core box finishes; see docs/performance.md)
SCALE_SPECS = {"flat": [], "hnsw": ["M=16", "ef_construction=64", "ef_search=64"],
               "ivf-pq": ["nlist=1024", "m=96", "nprobe=16", "train_size=40000"]}
REAL_SPECS = {"flat": [], "hnsw": ["M=16", "ef_construction=64", "ef_search=64"], "ivf-pq": ["nprobe=16"]}


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------ phases (run in a child process)
def phase_gen(data: Path, n: int, dim: int, centers: int, seed: int, real: str | None) -> dict[str, Any]:
    from numpy.lib.format import open_memmap

    from mlirkit.base.vectors import l2_normalize
    from mlirkit.transforms import ShiftTransform
    from mlirkit.transforms.io import save_transform

    data.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    if real:
        from mlirkit.index import DenseIndex

        index = DenseIndex(real)
        embs = l2_normalize(np.asarray(index.embeddings(), dtype=np.float32))
        langs = list(index.langs)
        n, dim = embs.shape
        out = open_memmap(data / "vectors.npy", mode="w+", dtype=np.float32, shape=(n, dim))
        out[:] = embs
        en = np.flatnonzero(np.array(langs) == "en")
        pick = rng.choice(en, size=1000, replace=len(en) < 1000)
        queries = l2_normalize(embs[pick] + 0.02 * rng.standard_normal((1000, dim)).astype(np.float32))
        sample, sample_langs = embs, langs
        encoder = index.encoder or {"bench": True}
    else:
        c = rng.standard_normal((centers, dim)).astype(np.float32)
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        common = rng.standard_normal(dim).astype(np.float32)
        common *= 0.5 / np.linalg.norm(common)
        offsets = rng.standard_normal((len(LANGS), dim)).astype(np.float32)
        offsets *= 0.35 / np.linalg.norm(offsets, axis=1, keepdims=True)
        noise = 0.9 / np.sqrt(dim)
        p = LANG_WEIGHTS / LANG_WEIGHTS.sum()

        def draw(m: int, lang_idx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
            li = rng.choice(len(LANGS), size=m, p=p) if lang_idx is None else lang_idx
            x = c[rng.integers(0, centers, m)] + common + offsets[li]
            x += noise * rng.standard_normal((m, dim)).astype(np.float32)
            return l2_normalize(x), li

        out = open_memmap(data / "vectors.npy", mode="w+", dtype=np.float32, shape=(n, dim))
        lang_idx = np.empty(n, dtype=np.int64)
        for s in range(0, n, BLOCK):
            m = min(BLOCK, n - s)
            out[s:s + m], lang_idx[s:s + m] = draw(m)
        langs = [LANGS[i] for i in lang_idx]
        queries, _ = draw(1000, np.zeros(1000, dtype=np.int64))
        sample, sample_langs = np.asarray(out[:50_000]), langs[:50_000]
        encoder = {"bench": "synthetic", "dim": dim, "seed": seed}
    out.flush()
    del out
    np.save(data / "queries.npy", queries)
    (data / "langs.txt").write_text("\n".join(langs) + "\n", encoding="utf-8")
    shift = ShiftTransform("en", vectors="corpus").fit(sample, sample_langs)
    shift.encoder = dict(encoder)
    save_transform(shift, data / "shift.safetensors", overwrite=True)
    (data / "info.json").write_text(json.dumps({"n": n, "dim": dim, "encoder": encoder}))
    return {"n": n, "dim": dim}


def _load_data(data: Path) -> tuple[np.ndarray, list[str], dict[str, Any]]:
    vectors = np.load(data / "vectors.npy", mmap_mode="r")
    langs = (data / "langs.txt").read_text(encoding="utf-8").split("\n")[:-1]
    return vectors, langs, json.loads((data / "info.json").read_text())


def phase_write(data: Path, index_dir: Path, itype: str, params: list[str]) -> dict[str, Any]:
    from mlirkit.index import IndexWriter
    from mlirkit.index.types import IndexSpec

    vectors, langs, info = _load_data(data)
    spec = IndexSpec.parse(itype, params)
    n = len(vectors)
    with IndexWriter(index_dir, dim=vectors.shape[1], encoder=info["encoder"], normalized=True, index_type=spec,
                     overwrite=True) as w:
        for s in range(0, n, BLOCK):
            w.add([str(i) for i in range(s, min(n, s + BLOCK))], langs[s:s + BLOCK], np.asarray(vectors[s:s + BLOCK]))
    size = (index_dir / "index").stat().st_size
    meta = json.loads((index_dir / "meta.json").read_text())
    return {"index_file_bytes": size, "index_bytes_per_doc": size / n, "params": meta["index_type"]["params"]}


def phase_shift(data: Path) -> dict[str, Any]:
    from numpy.lib.format import open_memmap

    from mlirkit.base.vectors import l2_normalize
    from mlirkit.transforms.io import load_transform

    vectors, langs, _ = _load_data(data)
    t = load_transform(data / "shift.safetensors")
    out = open_memmap(data / "shifted.npy", mode="w+", dtype=np.float32, shape=vectors.shape)
    for s in range(0, len(vectors), BLOCK):
        out[s:s + BLOCK] = l2_normalize(t.transform(np.asarray(vectors[s:s + BLOCK]), langs[s:s + BLOCK], "doc", 1.0))
    out.flush()
    del out
    os.unlink(data / "shifted.npy")
    return {}


def phase_load(index_dir: Path, mmap: bool) -> dict[str, Any]:
    from mlirkit.index import DenseIndex

    index = DenseIndex(index_dir, mmap=mmap)
    ntotal = index.faiss_index.ntotal
    return {"ntotal": int(ntotal), "docids": len(index.docids), "langs": len(index.langs), "rss_after_mb": _rss_mb()}


def phase_search(data: Path, index_dir: Path, threads: int, k: int) -> dict[str, Any]:
    import faiss

    from mlirkit.index import DenseIndex

    queries = np.load(data / "queries.npy")
    index = DenseIndex(index_dir).faiss_index
    faiss.omp_set_num_threads(threads)
    start = time.perf_counter()
    _, found = index.search(queries, k)
    secs = time.perf_counter() - start
    return {"queries": len(queries), "k": k, "search_s": secs, "ms_per_query": 1000 * secs / len(queries),
            "qps": len(queries) / secs, "found_min": int((found >= 0).sum(axis=1).min())}


def child(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("phase")
    p.add_argument("--data", type=Path)
    p.add_argument("--index", type=Path)
    p.add_argument("--type")
    p.add_argument("--param", nargs="*", default=[])
    p.add_argument("--n", type=int)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--centers", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--real")
    p.add_argument("--mmap", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--k", type=int, default=100)
    a = p.parse_args(argv)
    import faiss  # (imports in the baseline)

    faiss.omp_set_num_threads(1)  # builds single-threaded (search sets its own); see the module docstring

    import mlirkit.index  # noqa: F401

    base = _rss_mb()
    load0 = os.getloadavg()[0]
    c0 = time.process_time()
    t0 = time.perf_counter()
    if a.phase == "gen":
        extra = phase_gen(a.data, a.n, a.dim, a.centers, a.seed, a.real)
    elif a.phase == "write":
        extra = phase_write(a.data, a.index, a.type, a.param)
    elif a.phase == "shift":
        extra = phase_shift(a.data)
    elif a.phase == "load":
        extra = phase_load(a.index, a.mmap)
    elif a.phase == "search":
        extra = phase_search(a.data, a.index, a.threads, a.k)
    else:
        raise SystemExit(f"unknown phase {a.phase}")
    result = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "baseline_rss_mb": base,
              "peak_rss_mb": _peak_mb(), "loadavg_before": load0, "loadavg_after": os.getloadavg()[0], **extra}
    print("RESULT " + json.dumps(result))
    return 0


# ------------------------------------------------------------------ driver
def run_phase(args: list[str], log) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "child", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"phase failed: {' '.join(args)}\n{proc.stderr[-3000:]}")
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    res = json.loads(line[len("RESULT "):])
    print(f"{' '.join(args)} -> wall {res['wall_s']:.2f}s peak {res['peak_rss_mb']:.0f} MB "
          f"(load {res['loadavg_before']:.1f})", file=log, flush=True)
    return res


def run_dataset(label: str, data: Path, gen_args: list[str], specs: dict[str, list[str]], types: list[str],
                rows: list[dict[str, Any]], log, out: Path) -> None:
    import shutil

    def record(phase: str, res: dict[str, Any], **kw: Any) -> None:
        rows.append({"dataset": label, "phase": phase, **kw, **res})
        out.write_text(json.dumps(rows, indent=1) + "\n")

    res = run_phase(["gen", "--data", str(data), *gen_args], log)
    info = json.loads((data / "info.json").read_text())
    n, dim = info["n"], info["dim"]
    record("gen", res, n=n, dim=dim)
    record("shift", run_phase(["shift", "--data", str(data)], log), n=n, dim=dim)
    for t in types:
        idx = data / f"idx-{t}"
        param = ["--param", *specs[t]] if specs[t] else []
        record("write", run_phase(["write", "--data", str(data), "--index", str(idx), "--type", t, *param], log),
               n=n, dim=dim, index_type=t)
        for mmap in (False, True):
            record("load", run_phase(["load", "--index", str(idx), *(["--mmap"] if mmap else [])], log),
                   n=n, dim=dim, index_type=t, mmap=mmap)
        for threads in (1, 2):
            record("search", run_phase(["search", "--data", str(data), "--index", str(idx),
                                        "--threads", str(threads)], log), n=n, dim=dim, index_type=t, threads=threads)
        shutil.rmtree(idx)
    shutil.rmtree(data)


def driver(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="*", default=[100_000, 300_000, 1_000_000])
    p.add_argument("--real", help="index directory with embeddings.npy (the real collection)")
    p.add_argument("--work", type=Path, default=Path("work/scale-costs"),
                   help="scratch directory for the generated data and indexes (default: %(default)s)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--hnsw-max", type=int, default=300_000, help="largest synthetic size that gets an HNSW index")
    p.add_argument("--types", nargs="+", default=["flat", "hnsw", "ivf-pq"])
    p.add_argument("--append", action="store_true", help="keep the rows already in --out")
    a = p.parse_args(argv)
    rows: list[dict[str, Any]] = json.loads(a.out.read_text()) if a.append and a.out.exists() else []
    a.out.parent.mkdir(parents=True, exist_ok=True)
    if a.real:
        run_dataset("real", a.work / "real", ["--real", a.real], REAL_SPECS, a.types, rows, sys.stderr, a.out)
    for n in a.sizes:
        types = [t for t in a.types if t != "hnsw" or n <= a.hnsw_max]
        run_dataset("synthetic", a.work / f"syn-{n}", ["--n", str(n)], SCALE_SPECS, types, rows, sys.stderr, a.out)
    return 0


def plot(argv: list[str]) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = argparse.ArgumentParser()
    p.add_argument("results", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    rows = [r for f in a.results for r in json.loads(f.read_text()) if r["dataset"] == "synthetic"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    colors = {"flat": "C0", "hnsw": "C1", "ivf-pq": "C2"}

    def series(phase: str, value: str, t: str, **match: Any) -> list[tuple[int, float]]:
        return sorted((r["n"], r[value]) for r in rows if r["phase"] == phase and r.get("index_type") == t
                      and all(r.get(k) == v for k, v in match.items()))

    for t, c in colors.items():
        for ax, pts, style in ((axes[0], series("write", "wall_s", t), "-"),
                               (axes[1], series("search", "ms_per_query", t, threads=1), "-"),
                               (axes[2], series("load", "rss_after_mb", t, mmap=False), "-"),
                               (axes[2], series("load", "rss_after_mb", t, mmap=True), ":")):
            if pts:
                label = t + (" (mmap)" if style == ":" else "")
                ax.plot(*zip(*pts), marker="o", ls=style, color=c, label=label)
    pts = sorted((r["n"], r["wall_s"]) for r in rows if r["phase"] == "shift")
    axes[0].plot(*zip(*pts), marker="s", ls="--", color="C3", label="SHIFT apply")
    titles = ("write index (wall)", "search, 1 thread, 1,000 queries", "resident memory after loading")
    for ax, title, ylabel in zip(axes, titles, ("seconds", "ms per query", "MiB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("documents (768-d)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("mlirkit cost growth, synthetic 768-d (2-core shared box)")
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=110)
    return 0


def table(argv: list[str]) -> int:
    """Markdown tables (per data set: one row per phase) from result files."""
    p = argparse.ArgumentParser()
    p.add_argument("results", type=Path, nargs="+")
    a = p.parse_args(argv)
    rows = [r for f in a.results for r in json.loads(f.read_text())]
    print("| data | n | phase | index | variant | wall (s) | CPU (s) | peak RSS (MiB) | baseline RSS (MiB) | "
          "RSS after (MiB) | bytes/doc (file) | ms/query | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        variant = ("mmap" if r.get("mmap") else "normal") if r["phase"] == "load" else \
            (f"{r['threads']} thread{'s' if r['threads'] > 1 else ''}" if r["phase"] == "search" else "")
        if r["phase"] == "write":
            variant = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        print(f"| {r['dataset']} | {r['n']:,} | {r['phase']} | {r.get('index_type', '')} | {variant} | "
              f"{r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['baseline_rss_mb']:.0f} | "
              f"{r['rss_after_mb']:.0f} | " if "rss_after_mb" in r else
              f"| {r['dataset']} | {r['n']:,} | {r['phase']} | {r.get('index_type', '')} | {variant} | "
              f"{r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['baseline_rss_mb']:.0f} | | ",
              end="")
        bpd = f"{r['index_bytes_per_doc']:.1f}" if "index_bytes_per_doc" in r else ""
        ms = f"{r['ms_per_query']:.3f}" if "ms_per_query" in r else ""
        print(f"{bpd} | {ms} | {r['loadavg_before']:.1f} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "table":
        sys.exit(table(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        sys.exit(child(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "plot":
        sys.exit(plot(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        sys.exit(driver(sys.argv[2:]))
    sys.exit(driver(sys.argv[1:]))
