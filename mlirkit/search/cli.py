"""``python -m mlirkit.search``: batch search of an index directory, written as a TREC run."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.errors import MlirkitError
from mlirkit.base.cli import ArgumentParser, cli_command, configure_logging, examples
from mlirkit.base.threads import set_threads
from mlirkit.encoders.options import add_encoder_args, encoder_from_args, encoder_options
from mlirkit.base.fs import refuse_existing
from mlirkit.base.options import add_verbosity_args, lang_code, non_negative_int, positive_int
from mlirkit.transforms.options import add_alpha_arg

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.search", description=__doc__, epilog=examples(
        "python -m mlirkit.search --index indexes/ddtp-e5 --topics mlirkit/ddtp/en --output runs/base.trec",
        "python -m mlirkit.search --index indexes/ddtp-e5-shift --topics mlirkit/ddtp/en --output runs/shift.trec",
        "python -m mlirkit.search --index indexes/ddtp-e5 --topics mlirkit/ddtp/en/dev --output runs/base-dev.trec"))
    p.add_argument("--index", required=True, nargs="+", metavar="DIR",
                   help="index directory (mlirkit.encode or Pyserini); several, or a directory of shard-* "
                        "subdirectories, are searched as one (faiss.IndexShards)")
    p.add_argument("--topics", required=True, help="BEIR queries.jsonl, TSV (qid, text[, lang]), a BEIR dataset folder or an ir_datasets id")
    p.add_argument("--output", required=True, help="TREC run file to write")
    add_encoder_args(p, default=None)
    p.add_argument("--hits", type=positive_int, default=1000, help="hits per query (default 1000)")
    p.add_argument("--default-lang", type=lang_code, default=None,
                   help="language of queries that have none")
    p.add_argument("--run-tag", default=None,
                   help="run tag, the 6th TREC column (default: the output file name without extension, "
                        "e.g. shift for runs/shift.trec, so ranx.Run.from_file names runs apart)")
    p.add_argument("--force", action="store_true", help="search with an encoder that differs from the index's (warned)")
    p.add_argument("--mmap", action="store_true", help="memory-map the FAISS index files instead of reading them")
    p.add_argument("--skip-incomplete-shards", action="store_true",
                   help="search the complete shards when one lacks its index or docid file, or is missing "
                        "(warned, with the documents left out); without it such a sharded index is refused")
    p.add_argument("--ef-search", type=positive_int, default=None, help="HNSW candidate list size (default: stored in the index)")
    p.add_argument("--nprobe", type=positive_int, default=None, help="IVF cells visited (default: stored in the index)")
    add_query_shift_args(p.add_argument_group("query-time SHIFT: each query with its own language's shift, "
                                              "from one index (needs embeddings.npy; see docs/shift.md)"))
    p.add_argument("--overwrite", action="store_true", help="replace an existing run file")
    add_verbosity_args(p)
    return p


def add_query_shift_args(group: argparse._ArgumentGroup, *, words: bool = True) -> None:
    """``--query-shift``, ``--alpha``, ``--transform``, ``--candidates``: the query-time shift's options, the
    same for ``mlirkit.search`` and the Pyserini search wrapper (``words=False``: ``--alpha`` takes one word)."""
    group.add_argument("--query-shift", choices=["cosine", "ip"], default=None,
                       help="score with V_{l|s} = V_l - V_s for the query's language s (topics' lang or --default-lang), "
                            "from one index (needs embeddings.npy): cosine = shift then normalise (as SHIFT indexes "
                            "are built), ip = no renormalisation")
    add_alpha_arg(group, words=words, help="SHIFT alpha at query time, 0.6 or 0.6,ja=1.0 (implies --query-shift "
                                           "cosine; default: the index's)")
    group.add_argument("--transform", default=None,
                       help="shift transform file for the query-time shift (default: the index's own)")
    group.add_argument("--candidates", type=non_negative_int, default=None,
                       help="with the query-time shift: rows re-scored per query from a non-flat index "
                            "(default 1000; 0 = exhaustive, exact)")
    from mlirkit.transforms.options import add_missing_arg

    add_missing_arg(group)


def query_shift_requested(args: argparse.Namespace) -> bool:
    """Whether the options of :func:`add_query_shift_args` ask for the query-time shift (``--alpha`` or
    ``--transform`` imply it); ``--candidates`` without it is refused."""
    shift = bool(args.query_shift or args.alpha is not None or args.transform is not None)
    for flag, value in (("--candidates", args.candidates), ("--missing", args.missing)):
        if value is not None and not shift:
            raise MlirkitError(f"{flag} is for the query-time shift: add --query-shift (or --alpha / --transform)")
    return shift


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    refuse_existing(Path(args.output), args.overwrite, "run")
    from mlirkit.io.topics import read_topics
    from mlirkit.io.trec import run_tag_for, write_run
    from mlirkit.search.searcher import Searcher

    tag = run_tag_for(args.run_tag, args.output)
    shift = query_shift_requested(args)
    queries = read_topics(args.topics, default_lang=args.default_lang)
    if shift:
        from mlirkit.search.query_shift import require_query_langs

        require_query_langs(queries, args.topics)
    if args.encoder:
        encoder = encoder_from_args(args)
    else:  # the index's own encoder, built by the searcher
        from mlirkit.encoders.hf import pin_malloc_threshold

        pin_malloc_threshold()
        encoder = None
    from mlirkit.search.qdrant_searcher import QdrantSearcher, is_qdrant_shard
    from mlirkit.search.sharded import open_index

    set_threads(args.threads)
    options = dict(force=args.force, encoder_overrides=encoder_options(args), query_shift=args.query_shift,
                   alpha=args.alpha, transform=args.transform, candidates=args.candidates, missing=args.missing)
    if len(args.index) == 1 and is_qdrant_shard(args.index[0]):  # --ef-search: the shard's HNSW, else exact
        searcher = QdrantSearcher(args.index[0], encoder, hnsw_ef=args.ef_search, **options)
    else:
        index = open_index(args.index, mmap=args.mmap, ef_search=args.ef_search, nprobe=args.nprobe,
                           skip_incomplete=args.skip_incomplete_shards)
        searcher = Searcher(index, encoder, **options)
    results = searcher.search(queries, k=args.hits, batch_size=encoder_options(args).get("batch_size", 64), show_progress=not args.quiet)
    from mlirkit.io.provenance import describe_source

    write_run(results.to_run(), args.output, tag=tag, overwrite=args.overwrite,
              provenance={"command": cli_command(__name__, argv), **searcher.provenance(),
                          "topics": describe_source(args.topics), "hits": args.hits})
    report = {"run": str(args.output), "queries": len(results), "hits": args.hits}
    if isinstance(searcher, QdrantSearcher):
        report["query_shift"] = searcher.shift_settings
    elif searcher.shift is not None:
        report["query_shift"] = {**searcher.shift.describe(searcher.shift_alpha), "candidates": searcher.shift_candidates}
    print(json.dumps(report))
    return 0


__all__ = ["add_query_shift_args", "build_parser", "main", "query_shift_requested"]
