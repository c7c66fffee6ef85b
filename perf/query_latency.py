"""Per-query cost of dense search, one short query at a time (the service's case) and in batches of 1,000.

Both measured in one process, on the same encoder and index, the two modes alternating round by round (so a
drifting load on a shared machine hits them alike):

- ``single``: one query per call, ``Searcher.search_text(text, k, langs=lang)``: the query encoded alone
  (``encode_queries`` of one text), normalised and searched, as the search service answers a lone request;
  each call timed, and its encode and search parts beside it;
- ``batch``: ``--batch-size`` queries per call (default 1,000), the same ``search_text`` (it encodes and
  searches them 64 at a time, as ``mlirkit.search`` does); the call's time divided by its queries is the
  per-query cost of that batch.

Queries: XQuAD-R questions of every language (``mlirkit/xquad-r/{lang}``, bundled; short questions of 5-20
words), shuffled with a fixed seed, each with its language given (no language identification). Index: a flat
index of ``--docs`` random unit vectors of the encoder's dimension (exhaustive inner-product search costs the
same whatever the vectors are; 10,887 = the DDTP corpus of the main job), top ``--k``.

    OMP_NUM_THREADS=1 python -m perf.query_latency --threads 1 --output perf/results/query_latency.json

The JSON holds every timing; the table printed (and written beside the JSON as ``.md``) gives the percentiles.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

logger = logging.getLogger("query_latency")

PERCENTILES = (50, 90, 99)
DEFAULT_ENCODER = "multilingual-e5-small-q4"
DDTP_CORPUS_SIZE = 10887


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", default=DEFAULT_ENCODER, help="an encoder preset (default: the default encoder)")
    p.add_argument("--topics", default="mlirkit/xquad-r/{lang}", help="topics id; {lang} runs over --langs")
    p.add_argument("--langs", nargs="+", default=["ar", "de", "en", "es", "hi", "ru", "vi", "zh"])
    p.add_argument("--singles", type=int, default=200, help="single-query calls in all (default 200)")
    p.add_argument("--batches", type=int, default=3, help="batch calls in all (default 3)")
    p.add_argument("--batch-size", type=int, default=1000, help="queries per batch call (default 1000)")
    p.add_argument("--rounds", type=int, default=3, help="rounds; each runs its share of singles, then of batches")
    p.add_argument("--warmup", type=int, default=5, help="single queries sent first, not counted")
    p.add_argument("--docs", type=int, default=DDTP_CORPUS_SIZE, help="documents in the flat index")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--threads", type=int, default=1, help="FAISS and encoder threads (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path, default=None, help="JSON result (and a .md table beside it)")
    return p.parse_args(argv)


def percentiles(values_ms: Sequence[float]) -> dict[str, float]:
    """``{"p50_ms": ..., "p90_ms": ..., "p99_ms": ..., "mean_ms": ..., "n": ...}`` of the values."""
    values = np.asarray(values_ms, dtype=np.float64)
    return {**{f"p{p}_ms": round(float(np.percentile(values, p)), 3) for p in PERCENTILES},
            "mean_ms": round(float(values.mean()), 3), "n": int(len(values))}


def build_index(path: Path, encoder: Any, n_docs: int, seed: int) -> None:
    """A flat index of ``n_docs`` random unit vectors at ``path``, recorded as built by ``encoder``."""
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.index.writer import IndexWriter

    vectors = l2_normalize(np.random.default_rng(seed).standard_normal((n_docs, encoder.dim))).astype(np.float32)
    with IndexWriter(path, dim=encoder.dim, encoder=dict(encoder.fingerprint), normalized=True) as writer:
        writer.add([f"d{i}" for i in range(n_docs)], ["en"] * n_docs, vectors)


def _split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` near-equal shares."""
    return [total // parts + (1 if r < total % parts else 0) for r in range(parts)]


def measure(searcher: Any, queries: Sequence[tuple[str, str]], *, singles: int, batches: int, batch_size: int,
            rounds: int, warmup: int, k: int) -> dict[str, Any]:
    """Time ``singles`` one-query calls and ``batches`` calls of ``batch_size`` queries, alternating by round.

    ``queries``: ``(text, lang)`` pairs, cycled through. Returns ``{"single": {...}, "batch": {...},
    "ratio_single_to_batch": ...}``: per-call milliseconds of the singles (whole call, encode and search parts
    with their percentiles), per-query milliseconds of each batch (percentiles over the batches)."""
    from mlirkit.base.vectors import transform_and_normalize

    if not queries:
        raise ValueError("no queries")
    position = 0

    def take(n: int) -> list[tuple[str, str]]:
        nonlocal position
        out = [queries[(position + i) % len(queries)] for i in range(n)]
        position += n
        return out

    for text, lang in take(warmup):
        searcher.search_text(text, k, langs=lang)
    whole, encode, search, per_query, batch_calls = [], [], [], [], []
    for n_single, n_batch in zip(_split(singles, rounds), _split(batches, rounds)):
        for text, lang in take(n_single):
            start = time.perf_counter()
            searcher.search_text(text, k, langs=lang)
            whole.append(1000 * (time.perf_counter() - start))
        for text, lang in take(n_single):  # the same call in its two parts
            start = time.perf_counter()
            raw = searcher.encoder.encode_queries([text], [lang])
            vectors = transform_and_normalize(raw, [lang], "query", searcher.query_transform, searcher.alpha)
            middle = time.perf_counter()
            searcher.search_vectors(vectors, k)
            end = time.perf_counter()
            encode.append(1000 * (middle - start))
            search.append(1000 * (end - middle))
        for _ in range(n_batch):
            batch = take(batch_size)
            start = time.perf_counter()
            searcher.search_text([t for t, _ in batch], k, langs=[la for _, la in batch])
            seconds = time.perf_counter() - start
            batch_calls.append(round(1000 * seconds, 3))
            per_query.append(1000 * seconds / len(batch))
    single = {**percentiles(whole), "encode": percentiles(encode), "search": percentiles(search)}
    batch = {**percentiles(per_query), "batch_size": batch_size, "call_ms": batch_calls}
    return {"single": single, "batch": batch,
            "ratio_single_to_batch": round(single["p50_ms"] / batch["p50_ms"], 2) if batch["p50_ms"] else None}


def markdown(result: dict[str, Any]) -> str:
    """The table of a result: one row per mode (per-query milliseconds), the single call's parts below it."""
    rows = ["| mode | calls | p50 ms/query | p90 | p99 | mean |", "|---|---|---|---|---|---|"]
    single, batch = result["single"], result["batch"]

    def row(name: str, r: dict[str, Any]) -> str:
        return f"| {name} | {r['n']} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | {r['p99_ms']:.2f} | {r['mean_ms']:.2f} |"

    rows.append(row("single query (encode + search)", single))
    rows.append(row("- its encode part", single["encode"]))
    rows.append(row("- its search part", single["search"]))
    rows.append(row(f"batch of {batch['batch_size']:,} (per query)", batch))
    return "\n".join(rows) + "\n"


def load_queries(topics: str, langs: Sequence[str], seed: int) -> list[tuple[str, str]]:
    import mlirkit.datasets  # noqa: F401  (registers the ids)
    from mlirkit.io.topics import read_topics

    queries = [(q.text, lang) for lang in langs for q in read_topics(topics.format(lang=lang))]
    random.Random(seed).shuffle(queries)
    return queries


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    from mlirkit.base.threads import faiss_threads, torch_threads
    from mlirkit.encoders import load_encoder
    from mlirkit.search.searcher import Searcher

    queries = load_queries(args.topics, args.langs, args.seed)
    load_start = os.getloadavg()
    with faiss_threads(args.threads), torch_threads(args.threads), tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        encoder = load_encoder(args.encoder, threads=args.threads)
        logger.info("encoder %s loaded in %.1f s", args.encoder, time.perf_counter() - start)
        build_index(Path(tmp) / "index", encoder, args.docs, args.seed)
        searcher = Searcher(Path(tmp) / "index", encoder=encoder, threads=args.threads)
        result = measure(searcher, queries, singles=args.singles, batches=args.batches, batch_size=args.batch_size,
                         rounds=args.rounds, warmup=args.warmup, k=args.k)
    result.update({"command": "python -m perf.query_latency " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
                   "encoder": args.encoder, "fingerprint": encoder.fingerprint, "docs": args.docs, "k": args.k,
                   "threads": args.threads, "queries_available": len(queries), "cpus": os.cpu_count(),
                   "load_average": [round(x, 2) for x in load_start],
                   "load_average_end": [round(x, 2) for x in os.getloadavg()]})
    table = markdown(result)
    print(table)
    print(f"load average {result['load_average'][0]} -> {result['load_average_end'][0]}; single / batch per query "
          f"(p50): {result['ratio_single_to_batch']}x")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        args.output.with_suffix(".md").write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
