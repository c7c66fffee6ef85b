"""``python -m mlirkit.fuse``: fuse TREC runs with ranx (RRF, weighted sum, ...), optionally keeping the
document languages of the first run, rank by rank (language-preserving fusion); write a TREC run.
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.cli import ArgumentParser, cli_command, configure_logging, examples
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import cli_main
from mlirkit.base.options import add_verbosity_args, parse_key_values, positive_int

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.fuse", description=__doc__, epilog=examples(
        "python -m mlirkit.fuse --runs runs/base.trec runs/bm25.trec --method rrf --output runs/rrf.trec",
        "python -m mlirkit.fuse --runs runs/base.trec runs/bm25.trec --method wsum --norm min-max \\\n"
        "      --tune-runs runs/base-dev.trec runs/bm25-dev.trec --qrels mlirkit/ddtp/en/dev --output runs/wsum.trec",
        "python -m mlirkit.fuse --runs runs/shift.trec runs/bm25.trec --method rrf --keep-languages \\\n"
        "      --doc-langs mlirkit/ddtp/multi --output runs/rrf-slots.trec"))
    p.add_argument("--runs", nargs="+", required=True, metavar="RUN", help="TREC runs to fuse (two or more)")
    p.add_argument("--output", required=True, help="TREC run file to write")
    p.add_argument("--method", default="rrf",
                   help="ranx fusion method: rrf, wsum, sum, mnz, isr, bordafuse, ... (docs/lexical.md lists them)")
    p.add_argument("--norm", default="min-max",
                   help="ranx score normalisation before fusing: min-max, max, sum, zmuv, rank, borda, none")
    p.add_argument("--weights", nargs="+", type=float, default=None, metavar="W",
                   help="one weight per run (wsum, wmnz, mixed, w_bordafuse, w_condorcet)")
    p.add_argument("--param", action="append", default=None, metavar="KEY=VALUE",
                   help="a method parameter, e.g. k=60 for rrf, gamma=1 for gmnz, phi=0.8 for rbc")
    t = p.add_argument_group("tuning on a dev split (ranx.optimize_fusion)")
    t.add_argument("--tune-runs", nargs="+", default=None, metavar="RUN",
                   help="dev runs of the same systems, in the order of --runs; the method's parameters are chosen on them")
    t.add_argument("--qrels", default=None, help="judgements of the dev queries (file, BEIR folder or ir_datasets id)")
    t.add_argument("--metric", default="ndcg@20", help="metric the tuning maximises (ndcg@k, recall@k, mrr@k, map@k, ...)")
    t.add_argument("--step", type=float, default=None,
                   help="step of the tuning grid: one that divides 1 (0.5, 0.1, 0.05, 0.01, ...) for weights and "
                        "gamma/phi/sigma (defaults 0.1, 0.01), an integer >= 1 for rrf's k (default 10)")
    t.add_argument("--allow-partial-overlap", action="store_true",
                   help="tune on qrels that judge fewer than half of the dev runs' queries (default: refuse them)")
    t.add_argument("--allow-provenance-mismatch", action="store_true",
                   help="tune on dev runs whose provenance sidecars name other topics or another collection than "
                        "--qrels (default: refuse them)")
    b = p.add_argument_group("language-preserving fusion")
    b.add_argument("--keep-languages", action="store_true",
                   help="each rank keeps the document language the first run has there (lexical evidence reorders "
                        "documents within a language only); needs --doc-langs")
    b.add_argument("--doc-langs", default=None,
                   help="document languages: an index directory, a corpus or doc-langs file, or an ir_datasets id")
    p.add_argument("--allow-missing", action="store_true",
                   help="fuse a query missing from some runs from the runs that list it (default: refuse runs of "
                        "different queries)")
    p.add_argument("--hits", type=positive_int, default=1000, help="documents kept per query")
    p.add_argument("--run-tag", default=None,
                   help="run tag, the 6th TREC column (default: the output file name without extension)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing run file")
    add_verbosity_args(p)
    return p


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``["k=60", "phi=0.8"]`` -> ``{"k": 60, "phi": 0.8}`` (integers stay integers)."""
    out: dict[str, Any] = {}
    for key, text in parse_key_values(items, "--param", unique=True).items():
        try:
            out[key] = int(text) if text.strip().lstrip("-").isdigit() else float(text)
        except ValueError:
            raise MlirkitError(f"--param {key}={text!r}: not a number") from None
    return out


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    from mlirkit.base.fs import refuse_existing
    from mlirkit.fuse.methods import method, norm
    from mlirkit.io.trec import read_run, run_files, run_tag_for, write_run

    refuse_existing(Path(args.output), args.overwrite, "run")
    args.runs = run_files(args.runs)  # a glob runs/* lists the provenance sidecars too
    if args.tune_runs is not None:
        args.tune_runs = run_files(args.tune_runs)
    tag = run_tag_for(args.run_tag, args.output)
    m, _ = method(args.method), norm(args.norm)  # unknown names fail before any run is read
    if args.keep_languages != (args.doc_langs is not None):
        raise MlirkitError("--keep-languages and --doc-langs (the language of every document) go together")
    tuning = args.tune_runs is not None or args.qrels is not None
    if tuning and (args.tune_runs is None or args.qrels is None):
        raise MlirkitError("tuning needs both --tune-runs and --qrels")
    if tuning and len(args.tune_runs) != len(args.runs):
        raise MlirkitError(f"--tune-runs: {len(args.tune_runs)} dev runs for {len(args.runs)} runs (one per run, same order)")
    params = parse_params(args.param)
    if args.weights is not None:
        params["weights"] = args.weights
    if tuning and params:
        raise MlirkitError("give the parameters (--weights/--param) or tune them (--tune-runs/--qrels), not both")
    if not tuning:
        from mlirkit.fuse.fusion import check_params

        params = check_params(m.name, params, len(args.runs))  # out-of-range values fail before any run is read
    runs = [read_run(r) for r in args.runs]
    doc_langs = None
    if args.doc_langs is not None:
        from mlirkit.io.doc_langs import read_doc_langs

        doc_langs = read_doc_langs(args.doc_langs)
    from mlirkit.fuse.fusion import fuse, tune

    report: dict[str, Any] = {"run": str(args.output), "method": m.name, "norm": args.norm}
    if tuning:
        from mlirkit.fuse.fusion import check_tuning

        check_tuning(m.name, args.metric, args.step)  # before any run is read
        params = tune(args.qrels, args.tune_runs, method=m.name, norm=args.norm, metric=args.metric,
                      names=args.tune_runs, allow_missing=args.allow_missing, show_progress=not args.quiet,
                      step=args.step, allow_partial_overlap=args.allow_partial_overlap,
                      allow_provenance_mismatch=args.allow_provenance_mismatch)
        report["tuned"] = {"on": args.tune_runs, "qrels": str(args.qrels), "metric": args.metric}
    fused = fuse(runs, method=m.name, norm=args.norm, params=params, names=args.runs, allow_missing=args.allow_missing)
    if args.keep_languages:
        from mlirkit.fuse.language_slots import keep_languages

        fused = keep_languages(fused, runs[0], doc_langs, anchor_name=args.runs[0])
    from mlirkit.eval.inputs import ranx_to_dict

    out = {q: d for q, d in ranx_to_dict(fused).items() if d}
    from mlirkit.io.provenance import describe_file, describe_source

    write_run(out, args.output, tag=tag, overwrite=args.overwrite, k=args.hits,
              provenance={"command": cli_command(__name__, argv),
                          "fusion": {"method": m.name, "norm": args.norm, "params": params,
                                     "keep_languages": args.keep_languages},
                          "runs": [describe_file(r) for r in args.runs],  # the input runs, with their provenance
                          **({"tuned": {"on": [describe_file(r) for r in args.tune_runs],
                                        "qrels": describe_source(args.qrels), "metric": args.metric}} if tuning else {})})
    report.update({"params": params, "queries": len(out), "keep_languages": args.keep_languages})
    print(json.dumps(report))
    return 0


__all__ = ["build_parser", "main"]
