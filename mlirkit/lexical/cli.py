"""``python -m mlirkit.lexical``: multilingual BM25 through Anserini (Pyserini's Lucene side).

  index   corpus -> Lucene index, each document analysed by its language's Anserini analyzer
  search  topics -> TREC run, each query analysed by its language's analyzer, BM25 with each document
          language's own statistics

Pyserini opens the index: LuceneSearcher('indexes/ddtp-bm25'), set_language('de') for German queries, and
search(q, fields={'contents_de': 1.0, 'contents_en': 1.0, ...}) for the same scores (docs/lexical.md).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Sequence

from mlirkit.base.cli import ArgumentParser, cli_command, configure_logging, examples, with_examples
from mlirkit.base.option_names import cli_main
from mlirkit.base.options import add_verbosity_args, lang_code, positive_int
from mlirkit.lexical.analyzers import FALLBACKS
from mlirkit.lexical.searcher import B, K1


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.lexical", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("index", help="build a multilingual BM25 (Lucene) index from a corpus",
                       description="Build a BM25 index that Pyserini's LuceneSearcher opens; every document is analysed "
                                   "with its own language's Anserini analyzer.")
    i.add_argument("--corpus", required=True,
                   help="BEIR corpus.jsonl, Pyserini JSONL, TSV (id, text[, lang]), optionally .gz, a BEIR dataset folder, "
                        "a Pyserini JsonCollection folder, or an ir_datasets id")
    i.add_argument("--output", dest="index", required=True, help="output index directory")
    i.add_argument("--default-lang", default=None, help="language of documents that have none")
    i.add_argument("--text-field", nargs="+", default=None, help="JSONL fields joined as the document text")
    i.add_argument("--skip-empty", action="store_true", help="skip documents with empty text (counted) instead of failing")
    i.add_argument("--max-docs", type=positive_int, default=None, metavar="N",
                   help="index only the first N documents (for trials; default: all)")
    _add_common(i)
    i.add_argument("--overwrite", action="store_true", help="replace an existing index directory")
    s = sub.add_parser("search", help="BM25 search of a BM25 index, written as a TREC run",
                       description="Search with each query analysed by its own language's analyzer; write a TREC run.")
    s.add_argument("--index", required=True, help="index directory (python -m mlirkit.lexical index, or any Anserini index)")
    s.add_argument("--topics", required=True,
                   help="BEIR queries.jsonl, TSV (qid, text[, lang]), a BEIR dataset folder or an ir_datasets id")
    s.add_argument("--output", required=True, help="TREC run file to write")
    s.add_argument("--hits", type=positive_int, default=1000, help="hits per query")
    s.add_argument("--default-lang", type=lang_code, default=None,
                   help="language of queries that have none")
    s.add_argument("--k1", type=float, default=K1, help="BM25 k1 (Anserini's default)")
    s.add_argument("--b", type=float, default=B, help="BM25 b (Anserini's default)")
    s.add_argument("--run-tag", default=None,
                   help="run tag, the 6th TREC column (default: the output file name without extension)")
    _add_common(s)
    s.add_argument("--overwrite", action="store_true", help="replace an existing run file")
    return with_examples(p, EXAMPLES)


_INDEX = "python -m mlirkit.lexical index --corpus mlirkit/ddtp/multi --output indexes/ddtp-bm25 --fallback-analyzer standard"
_SEARCH = ("python -m mlirkit.lexical search --index indexes/ddtp-bm25 --topics mlirkit/ddtp/en --output runs/bm25.trec",
           "python -m mlirkit.lexical search --index indexes/ddtp-bm25 --topics mlirkit/ddtp/en/dev "
           "--output runs/bm25-dev.trec")
EXAMPLES = {"": examples(_INDEX, *_SEARCH), "index": examples(_INDEX), "search": examples(*_SEARCH)}


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fallback-analyzer", choices=sorted(FALLBACKS), default=None,
                   help="analyzer for languages Anserini has none for: standard = Unicode words, lower-cased, no "
                        "stemming or stopwords; english = Anserini's English analyzer (default: refuse such languages)")
    p.add_argument("--threads", type=positive_int, default=1, help="Java threads")
    add_verbosity_args(p)


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    if args.command == "index":
        return _index(args)
    return _search(args, cli_command(__name__, argv))


def _index(args: argparse.Namespace) -> int:
    from mlirkit.base.fs import refuse_existing
    from mlirkit.lexical.indexer import build_bm25_index

    refuse_existing(Path(args.index), args.overwrite, "index")
    summary = build_bm25_index(args.corpus, args.index, default_lang=args.default_lang, text_fields=args.text_field,
                               skip_empty=args.skip_empty, max_docs=args.max_docs,
                               fallback_analyzer=args.fallback_analyzer, threads=args.threads,
                               overwrite=args.overwrite, show_progress=not args.quiet)
    print(json.dumps(summary.as_dict(), ensure_ascii=False))
    return 0


def _search(args: argparse.Namespace, command: list[str]) -> int:
    from mlirkit.base.fs import refuse_existing
    from mlirkit.io.topics import read_topics
    from mlirkit.io.trec import run_tag_for, write_run
    from mlirkit.lexical.searcher import Bm25Searcher, check_bm25

    check_bm25(args.k1, args.b)
    refuse_existing(Path(args.output), args.overwrite, "run")
    tag = run_tag_for(args.run_tag, args.output)
    queries = read_topics(args.topics, default_lang=args.default_lang)
    with Bm25Searcher(args.index, k1=args.k1, b=args.b, fallback_analyzer=args.fallback_analyzer) as searcher:
        for q in queries:  # every query's analyzer before any search: a language without one fails fast
            searcher.analyzer(q.lang, where=f"{args.topics}: query {q.query_id!r}, field lang")
        run = searcher.search(queries, k=args.hits, threads=args.threads, show_progress=not args.quiet)
        statistics = searcher.statistics
        no_terms = searcher.queries_without_terms
    empty = [qid for qid, docs in run.items() if not docs]
    if len(empty) == len(run):
        from mlirkit.base.errors import MlirkitError

        raise MlirkitError(f"{args.topics}: no query has a result in {args.index} ({len(no_terms)} of {len(run)} have no "
                           "term left after analysis: only stopwords or punctuation); nothing to write")
    from mlirkit.index.reader import index_provenance
    from mlirkit.io.provenance import describe_source

    write_run(run, args.output, tag=tag, overwrite=args.overwrite,
              provenance={"command": command, "index": index_provenance(args.index),
                          "bm25": {"k1": args.k1, "b": args.b, "statistics": statistics},
                          "topics": describe_source(args.topics), "hits": args.hits})
    print(json.dumps({"run": str(args.output), "queries": len(run), "hits": args.hits, "k1": args.k1, "b": args.b,
                      "statistics": statistics, "queries_without_hits": len(empty),
                      "queries_without_terms": len(no_terms)}))
    return 0


__all__ = ["build_parser", "main"]
