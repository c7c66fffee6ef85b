"""A real, small zero-shot ablation of DCL on CPU (a benchmark script, not a test).

``python benchmarks/dcl_ablation.py --work DIR --shared-ddtp FILE [--steps N] [--variants ...]``

Starting from the offline multilingual-e5-small, each variant is trained for ``--steps`` steps on:

- English retrieval supervision: DDTP short description -> long description for the descriptions of
  the bundled *parallel* DDTP set (``mlirkit/parallel/ddtp``, disjoint from the benchmark by
  construction; checked here), short descriptions from the shared data (``--shared-ddtp``); one hard
  negative per query = the most TF-IDF-similar other long description;
- parallel data P: LibreOffice help, English paired with ``--parallel-langs``;
- monolingual data Q: gettext messages of ``--mono-langs`` (used as unpaired text only);

and evaluated zero-shot on the bundled DDTP benchmark (``mlirkit/ddtp``, English queries, test split,
pooled documents of ``--languages``; ``--eval-groups`` groups) with nDCG@20, MRR@10 and TLR@20.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.cli import configure_logging, run_cli
from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

VARIANTS = ("untrained", "base", "no_disentangler", "no_hsa", "no_ldcl", "full")
METRICS = ("ndcg@20", "mrr@10", "tlr@20", "samelang@20")


def build_triples(out: Path, shared_ddtp: Path, benchmark_ids: set[str]) -> int:
    """English (short -> long, hard negative) triples from the parallel DDTP ids."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mlirkit.datasets import parallel_rows
    from mlirkit.io.files import open_text

    longs = {gid: text for gid, lang, text in parallel_rows("mlirkit/parallel/ddtp") if lang == "en"}
    leak = sorted(set(longs) & benchmark_ids)
    if leak:
        raise MlirkitError(f"parallel DDTP ids overlap the benchmark: {leak[:3]}")
    shorts: dict[str, str] = {}
    with open_text(shared_ddtp) as f:
        for line in f:
            rec = json.loads(line)
            if rec["lang"] == "en" and rec["id"] in longs:
                shorts[rec["id"]] = rec["short"]
    ids = sorted(i for i in longs if i in shorts and shorts[i].strip() and longs[i].strip())
    texts = [longs[i] for i in ids]
    tfidf = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(texts)
    sim = (tfidf @ tfidf.T).toarray()
    np.fill_diagonal(sim, -1.0)
    with open(out, "w", encoding="utf-8") as f:
        for k, i in enumerate(ids):
            neg = texts[int(sim[k].argmax())]
            f.write(json.dumps({"query": shorts[i], "positive": texts[k], "negatives": [neg]}, ensure_ascii=False) + "\n")
    return len(ids)


def build_monolingual(out: Path, langs: Sequence[str]) -> int:
    from mlirkit.datasets import parallel_rows

    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for _, lang, text in parallel_rows("mlirkit/parallel/gettext"):
            if lang in langs and len(text) >= 20:
                f.write(json.dumps({"text": text, "lang": lang}, ensure_ascii=False) + "\n")
                n += 1
    return n


def train_config(args: argparse.Namespace, variant: str, data: dict[str, str]) -> "Any":
    from mlirkit.train.config import ABLATIONS, TrainConfig

    cfg = TrainConfig(
        backbone="multilingual-e5-small-q4", output_dir=str(Path(args.work) / variant),
        query_prefix="query: ", doc_prefix="passage: ", max_length=args.max_length,
        doc_max_length=args.doc_max_length, triples=data["triples"], parallel=["mlirkit/parallel/libreoffice-help"],
        parallel_langs=list(args.parallel_langs), monolingual=[data["mono"]], n_retrieval=args.batch,
        n_parallel=args.batch, n_monolingual=args.batch, n_hard_negatives=1, lr=args.lr, head_lr=args.head_lr,
        warmup_steps=max(1, args.steps // 10), max_steps=args.steps, freeze_word_embeddings=True, freeze_layers=args.freeze_layers, seed=args.seed,
        lambda_d=args.lambda_d, save_every=0, log_every=1, device="cpu")
    return cfg.with_updates(**ABLATIONS.get(variant)).validate()


def evaluate_encoder(encoder: Any, bench: Any, batch_size: int) -> dict[str, Any]:
    import numpy as np

    from mlirkit.eval.api import evaluate

    split = bench.splits["test"]
    docs = bench.docs
    d = encoder.encode_docs([x.text for x in docs], [x.lang for x in docs], batch_size=batch_size)
    q = encoder.encode_queries([x.text for x in split.queries], [x.lang for x in split.queries], batch_size=batch_size)
    scores = q @ d.T
    k = 100
    run = {}
    for i, query in enumerate(split.queries):
        top = np.argsort(-scores[i], kind="stable")[:k]
        run[query.query_id] = {docs[j].doc_id: float(scores[i, j]) for j in top}
    res = evaluate(split.qrels, {"run": run}, list(METRICS), doc_langs=bench.doc_langs,
                   query_langs=split.query_langs, significance=None)
    return {m: res.value("run", m) for m in METRICS} | {"queries": len(split.queries), "docs": len(docs)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/dcl_ablation.py", description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="working directory (data, models, results)")
    p.add_argument("--variants", nargs="+", default=["untrained", "no_disentangler", "no_hsa", "no_ldcl", "full"],
                   choices=VARIANTS)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--batch", type=int, default=8, help="retrieval examples, parallel pairs, monolingual sentences per step")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--head-lr", type=float, default=1e-4)
    p.add_argument("--freeze-layers", type=int, default=0, help="freeze the bottom N of the 12 layers")
    p.add_argument("--lambda-d", type=float, default=0.1)
    p.add_argument("--max-length", type=int, default=64)
    p.add_argument("--doc-max-length", type=int, default=128)
    p.add_argument("--eval-max-length", type=int, default=256)
    p.add_argument("--eval-groups", type=int, default=300, help="benchmark groups (dev + test) kept in the pool")
    p.add_argument("--languages", nargs="+", default=["en", "de", "fr", "it", "ja", "ru", "uk", "pl"])
    p.add_argument("--parallel-langs", nargs="+", default=["de", "fr", "it", "ja"])
    p.add_argument("--mono-langs", nargs="+", default=["ru", "uk", "pl"])
    p.add_argument("--shared-ddtp", required=True, type=Path,
                   help="ddtp/descriptions.jsonl.gz of the shared data set (for the English short descriptions)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    configure_logging()
    import torch

    from mlirkit.benchmark.data import load_benchmark
    from mlirkit.encoders import load_encoder
    from mlirkit.train.trainer import FINAL_DIR, Trainer

    torch.manual_seed(args.seed)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    full_bench = load_benchmark("mlirkit/ddtp", ["en"])
    bench_ids = {d.doc_id.split("/")[0] for d in full_bench.docs}
    bench = load_benchmark("mlirkit/ddtp", ["en"], languages=args.languages, quick_groups=args.eval_groups)
    data = {"triples": str(work / "triples.jsonl"), "mono": str(work / "mono.jsonl")}
    if not Path(data["triples"]).is_file():
        logger.info("triples: %d", build_triples(Path(data["triples"]), args.shared_ddtp, bench_ids))
    if not Path(data["mono"]).is_file():
        logger.info("monolingual sentences: %d", build_monolingual(Path(data["mono"]), args.mono_langs))
    results_path = work / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    for variant in args.variants:
        t0 = time.time()
        if variant == "untrained":
            encoder = load_encoder("multilingual-e5-small-q4", max_length=args.eval_max_length, device="cpu")
            train_s = 0.0
        else:
            cfg = train_config(args, variant, data)
            final = Path(cfg.output_dir) / FINAL_DIR
            if not final.is_dir():
                Trainer(cfg).train(overwrite=True)
            train_s = time.time() - t0
            encoder = load_encoder(str(final), max_length=args.eval_max_length, device="cpu")
        metrics = evaluate_encoder(encoder, bench, batch_size=32)
        results[variant] = {**metrics, "train_seconds": round(train_s), "eval_seconds": round(time.time() - t0 - train_s),
                            "steps": 0 if variant == "untrained" else args.steps}
        logger.info("%s: %s", variant, results[variant])
        results_path.write_text(json.dumps(results, indent=2) + "\n")
    print("| variant | nDCG@20 | MRR@10 | TLR@20 | same-language share@20 |")
    print("|---|---|---|---|---|")
    for v in VARIANTS:
        if v in results:
            r = results[v]
            print(f"| {v} | {r['ndcg@20']:.4f} | {r['mrr@10']:.4f} | {r['tlr@20']:.4f} | {r['samelang@20']:.4f} |")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(run_cli(main))
