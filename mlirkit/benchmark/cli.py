"""``python -m mlirkit.benchmark``: the language bias of real retrievers and SHIFT removing it, centering, LIR,
LSAR and LEACE beside it, on the SHIFT paper's benchmark (XQuAD-R; LAReQA's sentence pool with ``--parts``) and
on the bundled DDTP benchmark, both by default; report, runs and plots in ``--output``, the figures checked
against the reference with ``--check``."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.benchmark.config import (DEFAULT_BENCHMARK, DEFAULT_ENCODER_OPTIONS, DEFAULT_ENCODERS,
                                      DEFAULT_LAREQA, DEFAULT_MLQA, DEFAULT_XQUAD, METRICS, BenchmarkConfig)
from mlirkit.base.cli import ArgumentParser, configure_logging, examples
from mlirkit.base.options import (LANG_LIST_HELP, LangListAction, add_verbosity_args,
                                  non_negative_int, positive_int, split_key_value)
from mlirkit.encoders.options import OPTION, class_options, parse_encoder_options

logger = logging.getLogger(__name__)


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    return value


PARTS = ("xquad-r", "lareqa", "mlqa-r", "ddtp")
#: the main job: the SHIFT paper's benchmark and the DDTP bed
DEFAULT_PARTS = ("xquad-r", "ddtp")
#: where the main job writes, and its quick slice (so that one never refuses the other's folder)
DEFAULT_OUTPUT, QUICK_OUTPUT = Path("runs/benchmark"), Path("runs/benchmark-quick")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.benchmark", description=__doc__, epilog=examples(
        "python -m mlirkit.benchmark --quick --check"))
    p.add_argument("--encoders", nargs="+", default=list(DEFAULT_ENCODERS),
                   help="encoder presets, Hugging Face ids or local model paths")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(DEFAULT_PARTS),
                   help=f"what to run (default: {' '.join(DEFAULT_PARTS)}): xquad-r ({DEFAULT_XQUAD}, the SHIFT "
                        f"paper's benchmark), ddtp (--benchmark), lareqa ({DEFAULT_LAREQA}, LAReQA's sentence pool; "
                        f"with xquad-r), mlqa-r ({DEFAULT_MLQA}, partly parallel; LAReQA's files, not bundled: "
                        f"docs/datasets.md); e.g. --parts xquad-r ddtp lareqa")
    p.add_argument("--lareqa-encoders", nargs="+", default=None, metavar="ENCODER",
                   help="the encoders run on LAReQA's sentence pool (default: all of --encoders)")
    p.add_argument("--xquad-pairs", type=positive_int, default=BenchmarkConfig.xquad_pairs,
                   help="translation pairs per language for the XQuAD-R part's pair-fitted vectors (default: %(default)s, "
                        "all of Tatoeba's)")
    p.add_argument("--query-langs", action=LangListAction, default=["en"], metavar="LANG",
                   help=f"DDTP query languages (one benchmark id each; {LANG_LIST_HELP})")
    p.add_argument(
        "--langs", dest="languages", action=LangListAction, default=None, metavar="LANG",
        help=f"DDTP document languages kept in the pooled corpus ({LANG_LIST_HELP}; default: all of the benchmark's)")
    p.add_argument("--alphas", nargs="+", type=_alpha, default=None,
                   help="SHIFT strengths to sweep (default 0.1 ... 1.0; --quick: 0.2 ... 1.0 by 0.2); DDTP chooses "
                        "among them on its dev split, XQuAD-R only reports them (its alpha is chosen without labels)")
    p.add_argument("--output", type=Path, default=None,
                   help=f"output directory (default: {DEFAULT_OUTPUT}, {QUICK_OUTPUT} with --quick)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    p.add_argument("--quick", action="store_true",
                   help="a small slice (100 query groups, 50 pairs per language, 5 alphas) for a first look")
    p.add_argument("--benchmark", default=DEFAULT_BENCHMARK,
                   help="the DDTP part's benchmark id prefix: {prefix}/{query-lang}/{dev,test} must be registered ids")
    p.add_argument("--max-pairs", type=positive_int, default=BenchmarkConfig.max_pairs,
                   help="translation pairs per language for fitting each condition's transforms")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="embedding cache (default: $MLIRKIT_CACHE/benchmark/embeddings or the user cache)")
    p.add_argument("--hits", dest="depth", type=positive_int, default=BenchmarkConfig.depth,
                   help="hits per query in the runs")
    p.add_argument("--permutations", type=positive_int, default=BenchmarkConfig.n_permutations,
                   help="permutations of the Fisher randomization test")
    p.add_argument("--seed", type=int, default=BenchmarkConfig.seed)
    p.add_argument("--check", nargs="?", const=True, default=None, type=Path, metavar="REPORT_DIR",
                   help="compare the figures with the main job's reference (mlirkit/benchmark/reference/, the "
                        "--quick slice's for --quick): one line per cell outside its tolerance, exit 1; with "
                        "REPORT_DIR, check that finished run's report.json instead of running")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    add_verbosity_args(p)
    g = p.add_argument_group("encoder options (defaults keep the run within its time budget)")
    g.add_argument(OPTION, action="append", default=None, metavar="KEY=VALUE",
                   help=f"an option of the encoders that take it, repeatable: max_length=N (default: "
                        f"{_defaults('max_length')} in the DDTP part, {BenchmarkConfig.xquad_max_length} in the XQuAD-R "
                        f"part), batch_size=N (default: {_defaults('batch_size')}), backend=torch|openvino|onnx|auto "
                        f"(default: {_defaults('backend')}), precision=fp32|bf16|auto, quantize=int8 (torch dynamic "
                        "int8: costs 0.04-0.08 nDCG@20 on the DDTP slice); docs/encoders.md")
    g.add_argument("--threads", type=non_negative_int, default=None, help="CPU threads for encoding (default: torch's)")
    return p


def _defaults(key: str) -> str:
    return ", ".join(f"{k} {v[key]}" for k, v in DEFAULT_ENCODER_OPTIONS.items() if key in v) or "the encoder's"


def encoder_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Per-encoder options: the defaults, overridden by the command line for the encoders that take them."""
    from mlirkit.encoders import resolve_encoder_class

    items = args.encoder_option or []
    classes = {name: resolve_encoder_class(name) for name in args.encoders}
    for item in items:  # a key no encoder of the run takes: the one error, with "did you mean"
        key = split_key_value(item, OPTION)[0].replace("-", "_")
        if not any(key in class_options(c) for c in classes.values()):
            parse_encoder_options([item], next(iter(classes.values())))
    out: dict[str, dict[str, Any]] = {}
    for name in args.encoders:
        opts = dict(DEFAULT_ENCODER_OPTIONS.get(name, {}))
        known = class_options(classes[name])
        own = [i for i in items if split_key_value(i, OPTION)[0].replace("-", "_") in known]
        opts.update(parse_encoder_options(own, classes[name]))
        if opts.get("quantize") == "none":
            del opts["quantize"]
        if len(own) < len(items):
            logger.info("%s: %s apply to other encoders only", name, ", ".join(i for i in items if i not in own))
        if args.threads is not None:
            opts["threads"] = args.threads
        out[name] = opts
    return out


def _given_max_length(args: argparse.Namespace) -> int | None:
    """``--encoder-option max_length=N`` (the XQuAD-R part's length too), else None."""
    given = [i for i in args.encoder_option or [] if split_key_value(i, OPTION)[0].replace("-", "_") == "max_length"]
    return parse_encoder_options(given, "hf").get("max_length")


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    if isinstance(args.check, Path):
        from mlirkit.benchmark.check import read_report

        return _check(read_report(args.check))
    options = encoder_options(args)
    config = BenchmarkConfig(
        encoders=tuple(args.encoders), query_langs=tuple(args.query_langs),
        languages=None if args.languages is None else tuple(args.languages),
        alphas=None if args.alphas is None else tuple(args.alphas),
        output=args.output or (QUICK_OUTPUT if args.quick else DEFAULT_OUTPUT), quick=args.quick,
        overwrite=args.overwrite, benchmark=args.benchmark if "ddtp" in args.parts else None,
        xquad=DEFAULT_XQUAD if "xquad-r" in args.parts else None,
        lareqa=DEFAULT_LAREQA if "lareqa" in args.parts else None,
        mlqa=DEFAULT_MLQA if "mlqa-r" in args.parts else None,
        lareqa_encoders=None if args.lareqa_encoders is None else tuple(args.lareqa_encoders),
        xquad_pairs=args.xquad_pairs, max_pairs=args.max_pairs, depth=args.depth,
        xquad_max_length=_given_max_length(args) or BenchmarkConfig.xquad_max_length,
        n_permutations=args.permutations, seed=args.seed, cache_dir=args.cache_dir,
        encoder_options=options, plots=not args.no_plots, show_progress=not args.quiet,
        metrics=METRICS,
    )
    from mlirkit.base.fs import refuse_existing

    refuse_existing(config.output, config.overwrite, "benchmark")
    from mlirkit.encoders.hf import pin_malloc_threshold

    pin_malloc_threshold()  # the encoders the benchmark builds encode the whole corpus
    from mlirkit.benchmark.pipeline import default_command, run_benchmark
    from mlirkit.benchmark import xquad_report
    from mlirkit.benchmark.report import main_table
    from mlirkit.benchmark.tables import label

    result = run_benchmark(config, command=default_command(list(sys.argv[1:] if argv is None else argv)))
    if result.xquad:
        print(f"XQuAD-R ({result.config.xquad}: each query language against the pooled paragraphs; macro mean over query "
              f"languages, micro beside it; SHIFT's alpha chosen without XQuAD-R's labels, by the label-free rule of "
              f"`shift select-alpha` on the pooled documents; \u2020 = differs from "
              f"base, p < 0.05, Fisher randomization by question, Holm):")
        print(xquad_report.main_table(result))
        for x in result.xquad:
            print(f"\n{x.name}: {label(config.select_metric)} by query language (\u2020: that language's test against base, "
                  f"Holm), then recall@{config.k} by document language:")
            print(xquad_report.by_query_language(x, config.select_metric) + "\n")
            print(xquad_report.by_document_language(x, config.k))
        if any(x.lareqa is not None for x in result.xquad):
            print(f"\nLAReQA ({result.config.lareqa}: the sentence pool; mean average precision over the whole ranking):")
            print(xquad_report.lareqa_table(result))
    if result.mlqa:
        print(f"\nMLQA-R ({result.config.mlqa}: partly parallel, 2-4 relevant paragraphs per question; as XQuAD-R: "
              f"macro mean over query languages, alpha without MLQA-R's labels, \u2020 = differs from base):")
        print(xquad_report.main_table(result, part=xquad_report.PARTS["mlqa-r"]))
    if result.encoders:
        print(f"\nDDTP ({result.data['benchmark']}, test split; alpha chosen on dev; "
              f"\u2020 = differs from base, p < 0.05, Fisher randomization, Holm):")
        print(main_table(result))
    print(f"\nWhere the time went (wall seconds, CPU seconds of the process in brackets):")
    print(result.stages.table(result.timings["total"]))
    print(f"\nReport: {result.output / 'report.md'} (and report.json, runs/, plots/, transforms/); "
          f"total {result.timings['total']:.0f} s")
    if args.check:
        from mlirkit.benchmark.check import read_report

        return _check(read_report(result.output))
    return 0


def _check(report: dict[str, Any]) -> int:
    """Print the check of ``report`` against the reference (:mod:`mlirkit.benchmark.check`): 1 when a cell fails."""
    from mlirkit.benchmark.check import check

    failures, notes = check(report)
    for line in notes:
        print(f"check: {line}")
    for line in failures:
        print(f"check FAILED: {line}")
    print(f"check: {'FAILED, ' + str(len(failures)) + ' cells' if failures else 'every checked cell within its tolerance'}")
    return 1 if failures else 0


__all__ = ["build_parser", "encoder_options", "main"]
