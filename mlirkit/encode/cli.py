"""``python -m mlirkit.encode``: encode a corpus into a Pyserini-compatible FAISS index directory."""
from __future__ import annotations

import argparse
from dataclasses import replace
import json
import logging
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples
from mlirkit.base.threads import set_threads
from mlirkit.encode.options import add_engine_args, ray_options
from mlirkit.encoders.options import add_encoder_args, encoder_from_args, encoder_options
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.fs import refuse_existing
from mlirkit.index.options import add_index_type_args, index_spec_from_args
from mlirkit.transforms.options import add_transform_args, transform_from_args
from mlirkit.base.options import add_verbosity_args, lang_code, non_negative_int, positive_int

if TYPE_CHECKING:
    from mlirkit.encode.ray_engine import RayOptions
    from mlirkit.index.types import IndexSpec
    from mlirkit.io.corpus import CorpusStats
    from mlirkit.io.records import Doc
    from mlirkit.transforms.options import TransformOptions

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.encode", description=__doc__, epilog=examples(
        "python -m mlirkit.encode --corpus mlirkit/ddtp/en --encoder multilingual-e5-small-q4 \\\n"
        "      --output indexes/ddtp-e5 --save-embeddings",
        "python -m mlirkit.encode --corpus mlirkit/ddtp/en --output indexes/part-0 --shard-id 0 --num-shards 2",
        "python -m mlirkit.encode --corpus mlirkit/ddtp/en --output indexes/part-1 --shard-id 1 --num-shards 2"))
    p.add_argument("--corpus", required=True,
                   help="BEIR corpus.jsonl, Pyserini JSONL, TSV (id, text[, lang]), optionally .gz, a BEIR dataset folder, "
                        "a Pyserini JsonCollection folder, or an ir_datasets id")
    p.add_argument("--output", dest="index", required=True, help="output index directory")
    add_encoder_args(p)
    p.add_argument("--default-lang", type=lang_code, default=None, help="language of documents that have none")
    p.add_argument("--text-field", nargs="+", default=None, help="JSONL fields joined as the document text")
    p.add_argument("--skip-empty", action="store_true", help="skip documents with empty text (counted) instead of failing")
    p.add_argument("--shard-id", type=non_negative_int, default=0)
    p.add_argument("--num-shards", type=positive_int, default=1, help="encode only documents i with i %% num_shards == shard_id")
    p.add_argument("--max-docs", type=positive_int, default=None, metavar="N",
                   help="encode only the first N documents of the corpus (for trials; default: all)")
    p.add_argument("--save-embeddings", action="store_true", help="also keep untransformed vectors in embeddings.npy")
    add_transform_args(p)
    p.add_argument("--chunk-size", type=positive_int, default=2048, help="documents encoded and written per step")
    p.add_argument("--overwrite", action="store_true", help="replace an existing index directory")
    add_verbosity_args(p)
    add_index_type_args(p)
    add_engine_args(p)
    return p


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    if not 0 <= args.shard_id < args.num_shards:
        raise MlirkitError(f"--shard-id {args.shard_id} must be in [0, --num-shards {args.num_shards})")
    refuse_existing(Path(args.index), args.overwrite, "index")
    transform = transform_from_args(args)
    if args.langid is not None and args.default_lang is None:
        args.default_lang = UNKNOWN
    index_spec = index_spec_from_args(args)
    ray = ray_options(args)

    from mlirkit.encode.indexer import Indexer
    from mlirkit.io.corpus import CorpusStats, count_docs, read_corpus

    set_threads(args.threads)
    # read the first document before loading the model, so bad input fails fast
    stats = CorpusStats()
    docs = read_corpus(args.corpus, default_lang=args.default_lang, text_fields=args.text_field,
                       skip_empty=args.skip_empty, stats=stats)
    if args.max_docs is not None:
        docs = islice(docs, args.max_docs)
    if args.num_shards > 1:
        docs = islice(docs, args.shard_id, None, args.num_shards)
    first = list(islice(docs, 1))
    total = count_docs(args.corpus)
    if total is not None and args.max_docs is not None:
        total = min(total, args.max_docs)
    if total is not None and args.num_shards > 1:
        total = len(range(args.shard_id, total, args.num_shards))
    if args.num_shards > 1 and transform.transform is not None:  # a shard sees part of the corpus only
        from mlirkit.encode.indexer import refuse_partial_fill

        def whole_corpus():
            yield from (d.lang for d in islice(read_corpus(args.corpus, default_lang=args.default_lang,
                                                           text_fields=args.text_field, skip_empty=args.skip_empty),
                                               args.max_docs))
        refuse_partial_fill(transform.transform, whole_corpus(), transform.missing,
                            f"--num-shards {args.num_shards}")
        transform = replace(transform, missing="keep")  # nothing to fill (refused above), or keep asked for
    if ray is not None:
        return _encode_ray(args, _chain(first, docs), transform, index_spec, stats, ray)
    encoder = encoder_from_args(args)
    indexer = Indexer(args.index, encoder, transform=transform.transform, alpha=transform.alpha,
                      save_embeddings=args.save_embeddings, overwrite=args.overwrite,
                      batch_size=encoder_options(args).get("batch_size"),
                      chunk_size=args.chunk_size, strict=transform.strict, force=transform.force,
                      show_progress=not args.quiet, langid_threshold=transform.langid_threshold,
                      encoder_name=args.encoder, encoder_options={"encoder_class": args.encoder_class, **encoder_options(args)},
                      extra_meta={"corpus": str(args.corpus), "shard": {"id": args.shard_id, "count": args.num_shards},
                                  **({"max_docs": args.max_docs} if args.max_docs is not None else {})},
                      index_type=index_spec, missing=transform.missing)
    result = indexer.index(_chain(first, docs), total=total)
    if stats.skipped_empty:
        logger.warning("skipped %d documents with empty text", stats.skipped_empty)
    print(json.dumps({"index": str(args.index), "documents": result.documents,
                      "docs_per_second": round(result.docs_per_second, 1),
                      "languages": dict(sorted(result.lang_counts.items()))}))
    return 0


def _encode_ray(args: argparse.Namespace, docs: Iterable[Doc], transform: TransformOptions, index_spec: IndexSpec,
                stats: CorpusStats, ray: RayOptions) -> int:
    from mlirkit.encode.ray_engine import encode_with_ray, encoder_factory

    options = {"encoder_class": args.encoder_class, **encoder_options(args)}
    summary = encode_with_ray(
        docs, args.index, make_encoder=encoder_factory(args.encoder, args.encoder_class, **encoder_options(args)),
        encoder_name=args.encoder, encoder_options=options, transform=transform.transform, alpha=transform.alpha,
        strict=transform.strict, force=transform.force, save_embeddings=args.save_embeddings, overwrite=args.overwrite,
        index_type=index_spec, chunk_size=args.chunk_size, batch_size=options.get("batch_size"),
        options=ray,
        extra_meta={"corpus": str(args.corpus), "shard": {"id": args.shard_id, "count": args.num_shards},
                                  **({"max_docs": args.max_docs} if args.max_docs is not None else {})},
        show_progress=not args.quiet,
        indexer_options={"missing": transform.missing,
                         **({"langid_threshold": transform.langid_threshold}
                            if transform.langid_threshold is not None else {})})
    if stats.skipped_empty:
        logger.warning("skipped %d documents with empty text", stats.skipped_empty)
    print(json.dumps({"index": str(args.index), "documents": summary["documents"],
                      "docs_per_second": summary["docs_per_second"], "engine": "ray", "blocks": summary["blocks"],
                      "languages": summary["languages"]}))
    return 0


def _chain(first, rest):
    yield from first
    yield from rest


__all__ = ["build_parser", "main"]
