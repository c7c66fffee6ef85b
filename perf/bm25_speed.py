"""BM25 beside dense on the bundled DDTP bed, one thread: indexing and query speed, index size, fusion cost.

    OMP_NUM_THREADS=1 .venv/bin/python -m perf.bm25_speed --docs 2000 --queries 2000 \
        --output perf/results/bm25_speed.json

In one process, side by side, on the same ``--docs`` documents of ``mlirkit/ddtp/multi`` (14 languages)
and ``--queries`` of its test queries (every language):

- BM25: :func:`mlirkit.lexical.build_bm25_index` (the JVM start timed apart), and
  :class:`mlirkit.lexical.Bm25Searcher` top 100, one Java thread, with per-language statistics (the
  default: every language field searched) and pooled statistics (one field);
- dense: :class:`mlirkit.encode.Indexer` with multilingual-e5-small (the project's default backend) into a
  flat index, and :class:`mlirkit.search.Searcher` top 100 (query encoding included), one thread;
- fusion: :func:`mlirkit.fuse.fuse` (RRF) of the two runs and :func:`mlirkit.fuse.keep_languages` on it
  (both warmed up first: ranx's numba kernels).

Every step reports wall-clock and process CPU seconds (the JVM runs inside the process, so its threads
count); on a shared machine CPU seconds are the figures that do not depend on the load. Prints one JSON
object (and writes it to ``--output``). The indexes are built in a temporary directory under ``--scratch``,
removed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
from itertools import islice
from pathlib import Path

from perf.eval_speed import Timer


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scratch", type=Path, default=Path("work"), help="where the temporary indexes are built")
    p.add_argument("--output", type=Path, default=None, help="JSON file for the figures (refused if it exists)")
    p.add_argument("--corpus", default="mlirkit/ddtp/multi")
    p.add_argument("--topics", default="mlirkit/ddtp/multi/test")
    p.add_argument("--docs", type=int, default=2000, help="documents indexed by both")
    p.add_argument("--queries", type=int, default=2000, help="queries searched by both")
    p.add_argument("--encoder", default="multilingual-e5-small-q4", help="the dense side (the project's default)")
    return p.parse_args(argv)


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    import tempfile

    args = parse_args(argv)
    if args.output is not None and args.output.exists():
        raise SystemExit(f"{args.output} exists: remove it or choose another --output")
    args.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="bm25-speed-") as work:
        out = measure(args, Path(work))
    text = json.dumps(out, indent=1)
    print(text)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
    return 0


def measure(args: argparse.Namespace, work: Path) -> dict:
    """Every figure of the module docstring, with the indexes built under ``work``."""
    from mlirkit.base.threads import set_threads

    set_threads(1)
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.topics import read_topics

    docs = list(islice(read_corpus(args.corpus), args.docs))
    queries = read_topics(args.topics)[: args.queries]
    corpus = work / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.doc_id, "contents": d.text, "lang": d.lang}, ensure_ascii=False) + "\n"
                              for d in docs), encoding="utf-8")
    out: dict = {"documents": len(docs), "queries": len(queries), "threads": 1, "cpu": platform.processor() or
                 platform.machine(), "load_average_start": os.getloadavg()[0]}

    from mlirkit.lexical import Bm25Searcher, build_bm25_index
    from mlirkit.lexical.java import classes

    with Timer(out, "jvm_start"):
        classes()
    with Timer(out, "bm25_index"):
        build_bm25_index(corpus, work / "bm25", fallback_analyzer="standard", threads=1)
    with Bm25Searcher(work / "bm25") as searcher:
        searcher.search(queries[:50], k=100)  # warm-up: analyzers built, JIT
        with Timer(out, "bm25_search"):
            bm25 = searcher.search(queries, k=100, threads=1)
    with Bm25Searcher(work / "bm25", statistics="pooled") as searcher:
        searcher.search(queries[:50], k=100)
        with Timer(out, "bm25_pooled_search"):
            searcher.search(queries, k=100, threads=1)

    from mlirkit.encode import Indexer
    from mlirkit.encoders import load_encoder
    from mlirkit.search import Searcher

    with Timer(out, "dense_load_encoder"):
        encoder = load_encoder(args.encoder)
        encoder.encode_queries(["warm up"], ["en"])
    with Timer(out, "dense_index"):
        Indexer(work / "dense", encoder, encoder_name=args.encoder).index(iter(docs), total=len(docs))
    searcher = Searcher(work / "dense", encoder)
    with Timer(out, "dense_search"):
        hits = searcher.search(queries, k=100)
    dense = {q: {h.doc_id: h.score for h in hs} for q, hs in hits.items()}

    from mlirkit.fuse import fuse, keep_languages

    doc_langs = {d.doc_id: d.lang for d in docs}
    keep_languages(fuse([dense, bm25], method="rrf", allow_missing=True), dense, doc_langs)  # warm-up: numba
    with Timer(out, "fuse_rrf"):
        fused = fuse([dense, bm25], method="rrf", allow_missing=True)
    with Timer(out, "keep_languages"):
        keep_languages(fused, dense, doc_langs)

    out["bm25_index_bytes"] = dir_bytes(work / "bm25")
    out["dense_index_bytes"] = dir_bytes(work / "dense")
    for side in ("bm25", "dense"):
        out[f"{side}_docs_per_cpu_s"] = round(len(docs) / out[f"{side}_index_cpu_s"], 1)
        out[f"{side}_queries_per_cpu_s"] = round(len(queries) / out[f"{side}_search_cpu_s"], 1)
    out["index_cpu_ratio_dense_over_bm25"] = round(out["dense_index_cpu_s"] / out["bm25_index_cpu_s"], 1)
    out["search_cpu_ratio_dense_over_bm25"] = round(out["dense_search_cpu_s"] / out["bm25_search_cpu_s"], 1)
    out["load_average_end"] = os.getloadavg()[0]
    return out


if __name__ == "__main__":
    raise SystemExit(main())
