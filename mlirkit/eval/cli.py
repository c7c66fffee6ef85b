"""``python -m mlirkit.eval``: evaluate TREC runs (ranx metrics + TLR@k + language breakdowns +
paired tests) and write reports; ``python -m mlirkit.eval plot {alpha,mix,projection}`` draws figures.
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import add_verbosity_args, lang_code, non_negative_int, positive_int, split_key_value
from mlirkit.eval.inputs import run_name
from mlirkit.eval.query_groups import unit_phrase
from mlirkit.io.qrels import read_qrels
from mlirkit.io.trec import run_files

logger = logging.getLogger(__name__)

PLOT_KINDS = ("alpha", "mix", "projection")


def run_names(paths: Sequence[str], names: Sequence[str] | None) -> list[str]:
    if names:
        if len(names) != len(paths):
            raise MlirkitError(f"--names gives {len(names)} names for {len(paths)} runs")
        out = list(names)
    else:
        out = [run_name(p) for p in paths]
    dup = sorted({n for n in out if out.count(n) > 1})
    if dup:
        raise MlirkitError(f"run name {dup[0]!r} used twice; give distinct names with --names")
    return out


def _add_lang_args(p: argparse.ArgumentParser, doc_langs_required: bool = False) -> None:
    p.add_argument("--doc-langs", required=doc_langs_required, metavar="SRC",
                   help="document languages: index directory, corpus with 'lang' (JSONL/TSV/ir_datasets id), "
                        "or TSV docid<TAB>lang")
    p.add_argument("--default-lang", dest="query_lang", type=lang_code, metavar="L",
                   help="language of every query (or of topics without one)")
    p.add_argument("--topics", metavar="F", help="topics with per-query languages (queries.jsonl with 'lang', "
                                                 "TSV qid<TAB>text<TAB>lang, or an ir_datasets id)")


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.eval.metrics import known_metric_examples
    from mlirkit.eval.report import REPORT_FORMATS
    from mlirkit.eval.query_groups import QUERY_GROUP_RULES
    from mlirkit.eval.significance import CORRECTIONS, TESTS

    p = ArgumentParser(prog="python -m mlirkit.eval", description=__doc__, usage=USAGE, epilog=examples(
        "python -m mlirkit.eval --qrels mlirkit/ddtp/en --runs runs/base.trec runs/shift.trec \\\n"
        "      --metrics ndcg@20 recall@20 mrr@10 tlr@20 --doc-langs mlirkit/ddtp/en --default-lang en \\\n"
        "      --output report.md --output report.json",
        "python -m mlirkit.eval --qrels mlirkit/ddtp/en --runs runs/base.trec runs/shift.trec \\\n"
        "      --metrics ndcg@20 --topics mlirkit/ddtp/en --baseline base --output report-tests.md",
        "python -m mlirkit.eval plot mix --runs runs/base.trec runs/shift.trec --doc-langs mlirkit/ddtp/en \\\n"
        "      --default-lang en --k 20 --qrels mlirkit/ddtp/en --output figs/mix"))
    p.add_argument("--qrels",
                   help="required: TREC 4-column qrels or BEIR TSV (with header), optionally .gz, a BEIR dataset folder "
                        "(qrels/test.tsv), or an ir_datasets id")
    p.add_argument("--runs", nargs="+", help="required: TREC run files (6 columns), optionally .gz")
    p.add_argument("--names", nargs="+", help="run names (default: file name without extension)")
    p.add_argument("--metrics", nargs="+",
                   help=f"required: metric@k names; families: {', '.join(known_metric_examples())}")
    _add_lang_args(p)
    p.add_argument(
        "--output", dest="report", action="append", default=[], metavar="PATH",
        help=f"write a report; type by extension ({', '.join(REPORT_FORMATS.names())}); repeatable")
    p.add_argument("--per-query", action="store_true", help="include per-query scores in JSON reports")
    p.add_argument("--mrc-from-index", action="store_true",
                   help="compute mrc@k from the index each run's provenance sidecar names (the --topics encoded "
                        "again, every document scored, the run's own scores checked), for runs too shallow to "
                        "hold the union of a question's top k in its languages")
    t = p.add_argument_group("paired significance test")
    t.add_argument("--significance", default="fisher", choices=TESTS.names() + ["none"],
                   help="paired test between runs (default fisher)")
    t.add_argument("--baseline", help="test every run against this run (default: every pair)")
    t.add_argument("--correction", default="holm", choices=CORRECTIONS.names(),
                   help="multiple-comparison correction per metric (default holm)")
    t.add_argument("--max-p", type=float, default=0.05, help="significance threshold for marks (default 0.05)")
    t.add_argument("--permutations", type=positive_int, default=1000,
                   help="Fisher test permutations R (default 1000, as ranx; p = (b+1)/(R+1), exact with <= 16 units)")
    t.add_argument("--seed", type=non_negative_int, default=42, help="Fisher test random seed, an integer >= 0 (default 42)")
    t.add_argument("--query-groups", default="auto", metavar="auto|none|RULE|FILE",
                   help="unit of the paired tests: queries of one group (the translations of one question) move "
                        "together. auto (default): the groups the --topics carry (group_id), else one unit per "
                        f"query; none: one unit per query; a rule ({', '.join(QUERY_GROUP_RULES.names())}: the query "
                        "id without its language); or a file qid<TAB>group")
    p.add_argument(
        "--k", dest="breakdown_k", type=positive_int, help="cut-off of the per-language tables (default: from the metrics)")
    p.add_argument("--digits", type=non_negative_int, default=4, help="digits in tables (default 4)")
    p.add_argument("--plot-mix", metavar="PREFIX", help="also draw the top-k language mix to PREFIX.png/.svg")
    p.add_argument("--group-by", action="append", default=[], metavar="KEY",
                   choices=["language", "family", "genus", "script", "resource", "resource_level"],
                   help="also a table per group of query languages, printed and in the reports: family (Glottolog), "
                        "genus (WALS), script, resource (Joshi et al. 2020 class), resource_level (high/mid/low); "
                        "repeatable")
    p.add_argument("--group-micro", action="store_true",
                   help="group score = mean over the group's queries (default: mean over its languages)")
    p.add_argument("--allow-partial-overlap", action="store_true",
                   help="score a run that has results for fewer than half of the evaluated queries (default: refuse "
                        "it, the run and the qrels do not belong together; queries without results score 0)")
    p.add_argument("--allow-provenance-mismatch", action="store_true",
                   help="score a run whose provenance sidecar names other topics or another collection than the "
                        "qrels (default: refuse it)")
    p.add_argument("--overwrite", action="store_true", help="replace existing report files and --plot-mix figures (those mlirkit wrote)")
    add_verbosity_args(p)
    commands = p.add_subparsers(dest="command", title="subcommands", metavar="plot")
    _add_plot_commands(commands.add_parser(
        "plot", prog="python -m mlirkit.eval plot", help="figures (PNG and SVG): alpha, mix, projection; python -m mlirkit.eval plot --help",
        description="Figures: PNG and SVG.", epilog=PLOT_EXAMPLES[""]))
    return p


#: the evaluation's own options are required unless a subcommand is given (argparse cannot say that itself)
EVALUATION_REQUIRED = ("--qrels", "--runs", "--metrics")
USAGE = ("%(prog)s --qrels QRELS --runs RUN [RUN ...] --metrics METRIC [METRIC ...] [options]\n"
         "       %(prog)s plot {alpha,mix,projection} [options]")


def _topics(args) -> tuple[dict[str, str] | str | None, dict[str, str] | None]:
    """Query languages (``--topics`` or ``--default-lang``) and the groups the topics carry, read once."""
    if not args.topics:
        return args.query_lang, None
    from mlirkit.eval.query_groups import topic_groups
    from mlirkit.io.topics import read_topics

    queries = read_topics(args.topics, default_lang=args.query_lang)
    return {q.query_id: q.lang for q in queries}, topic_groups(queries)


def query_groups_arg(spec: str, from_topics: dict[str, str] | None) -> dict[str, str] | str | None:
    """``--query-groups``: ``auto`` (the topics' groups, else None), ``none``, a rule name or a file."""
    from mlirkit.eval.query_groups import QUERY_GROUP_RULES

    if spec == "auto":
        return from_topics
    if spec == "none":
        return None
    if spec in QUERY_GROUP_RULES:
        return spec
    if Path(spec).is_file():
        from mlirkit.io.query_groups import read_query_groups

        return read_query_groups(spec)
    from mlirkit.base.registry import did_you_mean

    choices = ["auto", "none", *QUERY_GROUP_RULES.names()]
    raise MlirkitError(f"--query-groups {spec!r} is neither a file nor one of {', '.join(choices)}"
                       f"{did_you_mean(spec, choices)}")


def _read_runs(paths: Sequence[str], names: Sequence[str] | None) -> dict[str, dict[str, dict[str, float]]]:
    from mlirkit.io.trec import read_run

    return {name: read_run(path) for name, path in zip(run_names(paths, names), paths)}


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    if args.command == "plot":
        return _plot(args)
    missing = [flag for flag in EVALUATION_REQUIRED if not getattr(args, flag[2:])]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    from mlirkit.eval.api import evaluate
    from mlirkit.eval.report import report_format, write_report
    from mlirkit.base.fs import refuse_existing

    for path in args.report:
        report_format(path)
        refuse_existing(Path(path), args.overwrite, "report")
    for path in figure_paths(args.plot_mix):
        refuse_existing(path, args.overwrite, "figure")
    qrels = read_qrels(args.qrels)
    args.runs = run_files(args.runs)
    runs = _read_runs(args.runs, args.names)
    doc_langs = None
    if args.doc_langs:
        from mlirkit.io.doc_langs import read_doc_langs

        doc_langs = read_doc_langs(args.doc_langs)
    query_langs, topic_groups = _topics(args)
    query_groups = query_groups_arg(args.query_groups, topic_groups)
    if args.group_by and query_langs is None:
        raise MlirkitError("--group-by needs query languages (--default-lang or --topics)")
    from mlirkit.eval.belonging import check_provenance

    check_provenance(args.qrels, dict(zip(runs, args.runs)), runs, allow=args.allow_provenance_mismatch)
    precomputed = mrc_from_indexes(args, runs, query_groups) if args.mrc_from_index else None
    result = evaluate(qrels, runs, args.metrics, doc_langs=doc_langs, query_langs=query_langs, precomputed=precomputed,
                      significance=None if args.significance == "none" else args.significance,
                      baseline=args.baseline, correction=args.correction, max_p=args.max_p,
                      n_permutations=args.permutations, seed=args.seed, k=args.breakdown_k,
                      query_groups=query_groups, group_by=args.group_by, group_micro=args.group_micro,
                      allow_partial_overlap=args.allow_partial_overlap)
    if result.significance:
        logger.info("paired tests over %s", unit_phrase(result.info["test_unit"]))
    from mlirkit.io.provenance import describe_file, describe_source

    result.inputs = {"qrels": describe_source(args.qrels),
                     "runs": {name: describe_file(path) for name, path in zip(runs, args.runs)}}
    print(result.to_markdown(args.digits), end="")
    for path in args.report:
        write_report(result, path, overwrite=args.overwrite, digits=args.digits, per_query=args.per_query)
        logger.info("wrote %s", path)
    if args.plot_mix:
        if doc_langs is None or query_langs is None:
            raise MlirkitError("--plot-mix needs --doc-langs and --default-lang or --topics")
        from mlirkit.eval.plots import plot_language_mix

        k = result.settings.get("breakdown_k") or 20
        for path in plot_language_mix(runs, doc_langs, query_langs, k, args.plot_mix, qrels=qrels,
                                      overwrite=args.overwrite):
            logger.info("wrote %s", path)
    return 0


def mrc_from_indexes(args: argparse.Namespace, runs: dict[str, dict[str, dict[str, float]]],
                     query_groups: dict[str, str] | str | None) -> dict[str, dict[str, dict[str, float]]]:
    """``--mrc-from-index``: ``{mrc@k: {run: {qid: value}}}`` from the searcher each run's sidecar records."""
    from mlirkit.eval.metrics import parse_metrics
    from mlirkit.eval.mrc import mrc_from_searcher
    from mlirkit.io.topics import read_topics
    from mlirkit.search.replay import searcher_for_run

    specs = [s for s in parse_metrics(args.metrics) if s.kind == "mrc"]
    if not specs:
        raise MlirkitError("--mrc-from-index computes mrc@k: add one to --metrics (e.g. mrc@10)")
    if not args.topics:
        raise MlirkitError("--mrc-from-index encodes the queries again: give --topics")
    queries = read_topics(args.topics, default_lang=args.query_lang)
    out: dict[str, dict[str, dict[str, float]]] = {s.name: {} for s in specs}
    for name, path in zip(runs, args.runs):
        searcher = searcher_for_run(path)
        logger.info("%s: mrc from %s", name, searcher.index.path)
        for s in specs:
            out[s.name][name] = mrc_from_searcher(searcher, queries, s.k, query_groups=query_groups,
                                                  run=runs[name], run_name=name)
    return out


# ---------------------------------------------------------------------------------------------- plots

def _add_plot_commands(p: argparse.ArgumentParser) -> None:
    """``plot alpha``, ``plot mix``, ``plot projection``: the subcommands of ``python -m mlirkit.eval plot``."""
    from mlirkit.transforms.alpha import Alpha
    from mlirkit.transforms.options import add_alpha_arg

    sub = p.add_subparsers(dest="kind", required=True, title="figures", metavar="{alpha,mix,projection}")
    a = sub.add_parser("alpha", prog="python -m mlirkit.eval plot alpha", help="metrics against SHIFT's alpha")
    a.add_argument("--sweep", help="JSON {alpha: {metric: value}}")
    a.add_argument("--point", nargs="+", metavar="ALPHA=REPORT.json[:RUN]",
                   help="one point per alpha from mlirkit.eval JSON reports (RUN, else --run, else the first run)")
    a.add_argument("--run", help="run name to take from --point reports that name none (default: the first run)")
    a.add_argument("--baseline", nargs="+", default=[], metavar="LABEL=REPORT.json[:RUN]",
                   help="horizontal reference lines from JSON reports")
    a.add_argument("--metrics", nargs="+", default=["ndcg@20", "tlr@20"])
    a.add_argument("--title")
    a.add_argument("--output", dest="out", required=True, metavar="PREFIX",
                   help="output file prefix (PREFIX.png and PREFIX.svg)")
    m = sub.add_parser("mix", prog="python -m mlirkit.eval plot mix", help="language distribution of the top k per run")
    m.add_argument("--runs", required=True, nargs="+")
    m.add_argument("--names", nargs="+")
    _add_lang_args(m, doc_langs_required=True)
    m.add_argument("--qrels", help="add a bar for the relevant documents")
    m.add_argument("--k", type=positive_int, default=20)
    m.add_argument("--title")
    m.add_argument("--output", dest="out", required=True, metavar="PREFIX",
                   help="output file prefix (PREFIX.png and PREFIX.svg)")
    j = sub.add_parser("projection", prog="python -m mlirkit.eval plot projection", help="2-D projection of document embeddings by language, before/after")
    j.add_argument("--index", required=True, help="index directory (embeddings.npy if present, else its vectors)")
    j.add_argument("--after-index", help="index of the same documents after a transform (its indexed vectors)")
    j.add_argument("--transform", help="transform file to apply to --index's embeddings (mlirkit.shift)")
    add_alpha_arg(j, default=Alpha(), help="alpha for --transform (default 1.0; per language: 0.6,ja=1.0)")
    j.add_argument("--method", default="pca", choices=["pca", "tsne"])
    j.add_argument("--max-points", type=positive_int, default=3000)
    j.add_argument("--seed", type=int, default=0)
    j.add_argument("--output", dest="out", required=True, metavar="PREFIX",
                   help="output file prefix (PREFIX.png and PREFIX.svg)")
    for sp in (a, m, j):
        sp.add_argument("--overwrite", action="store_true", help="replace PREFIX.png/.svg that mlirkit drew")
        add_verbosity_args(sp)
        sp.epilog = PLOT_EXAMPLES[sp.prog.rsplit(" ", 1)[-1]]


PLOT_EXAMPLES = {
    "": examples("python -m mlirkit.eval plot mix --runs runs/base.trec runs/shift.trec --doc-langs mlirkit/ddtp/en \\\n"
                 "      --default-lang en --output figs/langs"),
    "alpha": examples("python -m mlirkit.eval plot alpha --point 0.0=report.json:base 0.6=report.json:shift \\\n"
                      "      --output figs/alpha"),
    "mix": examples("python -m mlirkit.eval plot mix --runs runs/base.trec runs/shift.trec --doc-langs mlirkit/ddtp/en \\\n"
                    "      --default-lang en --k 20 --qrels mlirkit/ddtp/en --output figs/mix"),
    "projection": examples("python -m mlirkit.eval plot projection --index indexes/ddtp-e5 \\\n"
                           "      --transform vectors/e5-gettext.shift --alpha 0.6 --output figs/projection"),
}


def _report_values(spec: str, default_run: str | None) -> tuple[dict[str, float], str]:
    path, _, run = spec.partition(":") if not Path(spec).is_file() else (spec, "", "")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MlirkitError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise MlirkitError(f"{path}: not a JSON report ({e.msg})") from None
    runs = [k for k in data if not k.startswith("_")]
    name = run or default_run or (runs[0] if runs else None)
    if name not in data:
        from mlirkit.base.registry import did_you_mean

        raise MlirkitError(f"{path}: no run {name!r}{did_you_mean(str(name), runs)}; runs: {', '.join(runs)}")
    return data[name], name


def _sweep(raw: object, path: str) -> dict[float, dict[str, float]]:
    """A ``--sweep`` file's ``{alpha: {metric: value}}``; any other shape is one error naming the file and key."""
    if not isinstance(raw, dict):
        raise MlirkitError(f"{path}: expected a JSON object {{alpha: {{metric: value}}}}, got a {type(raw).__name__}")
    sweep: dict[float, dict[str, float]] = {}
    for key, values in raw.items():
        try:
            alpha = float(key)
        except ValueError:
            raise MlirkitError(f"{path}: key {key!r} is not an alpha (a number)") from None
        if not isinstance(values, dict) or not all(isinstance(v, (int, float)) or v is None for v in values.values()):
            raise MlirkitError(f"{path}: the value of {key!r} must be an object {{metric: number}}")
        sweep[alpha] = values
    return sweep


def _plot_alpha(args) -> list[Path]:
    from mlirkit.eval.plots import plot_alpha_curves

    if bool(args.sweep) == bool(args.point):
        raise MlirkitError("give either --sweep or --point")
    if args.sweep:
        try:
            raw = json.loads(Path(args.sweep).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise MlirkitError(f"{args.sweep}: cannot read sweep JSON ({e})") from None
        sweep = _sweep(raw, args.sweep)
    else:
        sweep = {}
        for spec in args.point:
            alpha, path = split_key_value(spec, "--point", expected="ALPHA=REPORT.json[:RUN]")
            try:
                value = float(alpha)
            except ValueError:
                raise MlirkitError(f"--point {spec!r} is not ALPHA=REPORT.json[:RUN]") from None
            sweep[value] = _report_values(path, args.run)[0]
    baselines = {}
    for spec in args.baseline:
        label, rest = split_key_value(spec, "--baseline", expected="LABEL=REPORT.json[:RUN]")
        baselines[label] = _report_values(rest, None)[0]
    return plot_alpha_curves(sweep, args.out, metrics=args.metrics, baselines=baselines, title=args.title,
                             overwrite=args.overwrite)


def _plot_mix(args) -> list[Path]:
    from mlirkit.io.doc_langs import read_doc_langs
    from mlirkit.eval.plots import plot_language_mix

    query_langs = _topics(args)[0]
    if query_langs is None:
        raise MlirkitError("give --default-lang or --topics")
    runs = _read_runs(run_files(args.runs), args.names)
    qrels = read_qrels(args.qrels) if args.qrels else None
    return plot_language_mix(runs, read_doc_langs(args.doc_langs), query_langs, args.k, args.out, qrels=qrels,
                             title=args.title, overwrite=args.overwrite)


def _plot_projection(args) -> list[Path]:
    from mlirkit.eval.plots import plot_projection
    from mlirkit.eval.projection import projection_inputs

    p = projection_inputs(args.index, after_index=args.after_index, transform=args.transform, alpha=args.alpha)
    return plot_projection(p.before, p.after, p.langs, args.out, method=args.method, max_points=args.max_points,
                           seed=args.seed, titles=p.titles, overwrite=args.overwrite)


def figure_paths(prefix: str | None) -> list[Path]:
    """``PREFIX.png`` and ``PREFIX.svg`` (none without a prefix): what a figure option writes."""
    return [] if not prefix else [Path(f"{prefix}.{ext}") for ext in ("png", "svg")]


def _plot(args: argparse.Namespace) -> int:
    from mlirkit.base.fs import refuse_existing

    for path in figure_paths(args.out):  # before the inputs are read
        refuse_existing(path, args.overwrite, "figure")
    paths = {"alpha": _plot_alpha, "mix": _plot_mix, "projection": _plot_projection}[args.kind](args)
    for path in paths:
        print(path)
    return 0


__all__ = ["build_parser", "main", "run_names"]
