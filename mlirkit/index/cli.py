"""``python -m mlirkit.index``: ``merge`` shard directories into one index, ``qdrant``: a Qdrant Edge shard of an index, ``info`` about an index."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples, with_examples
from mlirkit.base.threads import set_threads
from mlirkit.index.options import add_index_type_args, index_spec_from_args
from mlirkit.base.options import add_verbosity_args, non_negative_int


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.index", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("merge", help="merge shard index directories (same encoder and transform) into one")
    m.add_argument("shards", nargs="+", metavar="SHARD_DIR", help="index directories to merge")
    m.add_argument("--output", required=True, help="merged index directory")
    m.add_argument("--order", choices=["auto", "concat"], default="auto",
                   help="auto: restore corpus order for a complete --num-shards split, else concatenate")
    add_index_type_args(m, default=None)
    m.add_argument("--threads", type=non_negative_int, default=None, help="FAISS threads (training, HNSW build)")
    m.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    add_verbosity_args(m)
    q = sub.add_parser("qdrant", help="write a Qdrant Edge shard (vectors, docids, languages, encoder) of an index")
    q.add_argument("index", metavar="DIR")
    q.add_argument("--output", required=True, help="shard directory")
    q.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    add_verbosity_args(q)
    i = sub.add_parser("info", help="print an index directory's type, size and memory model as JSON")
    i.add_argument("index", metavar="DIR")
    add_verbosity_args(i)
    return with_examples(p, EXAMPLES)


EXAMPLES = {
    "": examples("python -m mlirkit.index info indexes/ddtp-e5"),
    "merge": examples("python -m mlirkit.index merge indexes/part-0 indexes/part-1 --output indexes/all"),
    "info": examples("python -m mlirkit.index info indexes/ddtp-e5"),
    "qdrant": examples("python -m mlirkit.index qdrant indexes/ddtp-e5 --output shards/ddtp-e5"),
}


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    if args.command == "merge":
        from mlirkit.index.merge import merge_indexes

        spec = index_spec_from_args(args)
        set_threads(args.threads)
        summary = merge_indexes(args.shards, args.output, overwrite=args.overwrite, index_type=spec,
                                order=args.order, show_progress=not args.quiet)
        print(json.dumps(summary, ensure_ascii=False))
    elif args.command == "qdrant":
        from mlirkit.index.qdrant_export import export_qdrant

        print(json.dumps(export_qdrant(args.index, args.output, overwrite=args.overwrite), ensure_ascii=False))
    else:
        print(json.dumps(index_info(args.index), ensure_ascii=False, indent=2))
    return 0


def index_info(path: str) -> dict[str, Any]:
    from mlirkit.index.reader import DenseIndex

    index = DenseIndex(path, mmap=True)
    spec = index.index_spec
    n = index.faiss_index.ntotal
    files = {f.name: f.stat().st_size for f in sorted(Path(path).iterdir()) if f.is_file()}
    info: dict[str, Any] = {
        "index": str(path), "documents": n, "dim": index.dim, "index_type": spec.name, "params": spec.params,
        "encoder": index.meta.get("encoder_name"), "transform": (index.transform or {}).get("method"),
        "languages": index.meta.get("lang_counts"), "has_embeddings": index.has_embeddings, "file_bytes": files,
    }
    if spec.name in ("flat", "hnsw", "ivf-pq"):
        info["model_bytes_per_doc"] = round(spec.bytes_per_doc(index.dim), 1)
        info["model_fixed_bytes"] = int(spec.fixed_bytes(index.dim))
    info["measured_index_bytes_per_doc"] = round(files.get("index", 0) / max(n, 1), 1)
    return info


__all__ = ["build_parser", "main"]
