"""``python -m mlirkit.datasets``: list the registered ids, export one as BEIR or TREC files.

The ``ir_datasets`` CLI on mlirkit ids: ``python -m mlirkit.datasets export ID {docs,queries,qrels}
[--format F] [--fields ...]`` is ``ir_datasets export`` itself (same flags, output on stdout), and
``python -m mlirkit.datasets ir_datasets ARGS...`` runs any ``ir_datasets`` command (``lookup``,
``list``, ...) after the mlirkit ids are registered. Without mlirkit's entry point:
``python -c "import mlirkit, ir_datasets; mlirkit.register_datasets(); ir_datasets.main_cli()" export mlirkit/ddtp/en docs``.
"""
from __future__ import annotations

import argparse
import json
from typing import Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples, with_examples


#: the entity types of ``ir_datasets export ID ENTITY``
IR_DATASETS_ENTITIES = ("docs", "queries", "qrels", "scoreddocs", "docpairs")
#: the commands of the ir_datasets CLI (its ``commands.COMMANDS``, named here so that --help imports nothing)
IR_DATASETS_COMMANDS = ("export", "lookup", "list", "doc_fifos", "clean", "build_download_cache", "generate_metadata",
                        "build_clueweb_warc_indexes", "build_c4_checkpoints")


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.datasets.export import ExportFormat

    p = ArgumentParser(prog="python -m mlirkit.datasets", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr (no INFO lines, no progress bars)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="ids, languages, sizes, whether their files are here (offline)")
    ls.add_argument("--family", help="only this family (belebele, xquad-r, mlqa, multieup-v2, mmarco-pairs, ddtp, parallel)")
    ls.add_argument("--json", action="store_true", help="one JSON object per line")
    ir = sub.add_parser("ir_datasets", help="run an ir_datasets command with the mlirkit ids registered",
                        description="Run the ir_datasets command line (ir_datasets COMMAND ...) with the mlirkit ids "
                                    "registered; ir_datasets COMMAND --help shows that command's own options.")
    ir.add_argument("ir_datasets_args", nargs=argparse.REMAINDER, metavar="COMMAND ...",
                    help=f"an ir_datasets command ({', '.join(IR_DATASETS_COMMANDS)}) and its arguments")
    ex = sub.add_parser("export", help="write a collection as BEIR or TREC/Pyserini files, or one of its parts "
                                       "(docs, queries, ...) to stdout as ir_datasets' own export does",
                        usage="%(prog)s DATASET_ID --format {beir,trec} --output DIR [--overwrite]\n"
                              "       %(prog)s DATASET_ID {docs,queries,qrels,scoreddocs,docpairs} [--format F] "
                              "[--fields F ...]")
    ex.add_argument("dataset_id", metavar="DATASET_ID")
    ex.add_argument("--format", choices=[f.value for f in ExportFormat],
                    help="required: the files written to --output (beir, trec)")
    ex.add_argument("--output", help="required: output directory (written atomically)")
    ex.add_argument("--overwrite", action="store_true")
    parts = ex.add_subparsers(dest="entity", title="one part to stdout (ir_datasets export)",
                              metavar="{" + ",".join(IR_DATASETS_ENTITIES) + "}")
    for entity in IR_DATASETS_ENTITIES:
        part = parts.add_parser(entity, prog=f"python -m mlirkit.datasets export DATASET_ID {entity}",
                                help=f"the {entity}, one record a line, every field (ir_datasets export)")
        part.add_argument("--format", dest="entity_format", metavar="F",
                          help="ir_datasets' format: tsv (default), jsonl" + (", trec" if entity in ("qrels", "scoreddocs")
                                                                            else ""))
        part.add_argument("--fields", nargs="+", metavar="F", help="only these fields, in this order")
        if entity == "scoreddocs":
            part.add_argument("--run-tag", help="run tag of the TREC lines (ir_datasets' default: run)")
    return with_examples(p, EXAMPLES)


EXAMPLES = {
    "": examples("python -m mlirkit.datasets list --family parallel",
                 "python -m mlirkit.datasets export mlirkit/ddtp/en/test --format trec --output out/ddtp-en-test"),
    "list": examples("python -m mlirkit.datasets list --family parallel"),
    "ir_datasets": examples("python -m mlirkit.datasets ir_datasets lookup mlirkit/ddtp/en "
                            "00158d11d140744fbdcfdd08e81901ad/en"),
    "export": examples("python -m mlirkit.datasets export mlirkit/ddtp/en/test --format trec --output out/ddtp-en-test",
                       "python -m mlirkit.datasets export mlirkit/xquad-r-zs/train docpairs --format jsonl"),
}


def _list(family: str | None, as_json: bool) -> int:
    from mlirkit.datasets import DATASETS

    rows = []
    for name in DATASETS.names():
        info = DATASETS.get(name)
        if family and info.family != family:
            continue
        rows.append({"id": name, "family": info.family, "query_langs": list(info.query_langs),
                     "doc_langs": list(info.doc_langs), "size": info.size, "licence": info.licence,
                     "offline": bool(info.available_offline())})
    if as_json:
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    width = max((len(r["id"]) for r in rows), default=2)
    print(f"{'id':<{width}}  offline  queries       docs  size")
    for r in rows:
        q = ",".join(r["query_langs"]) if len(r["query_langs"]) <= 2 else f"{len(r['query_langs'])} langs"
        print(f"{r['id']:<{width}}  {'yes' if r['offline'] else 'no':<7}  {q:<12}  {len(r['doc_langs']):>4}  {r['size']}")
    return 0




def ir_datasets_cli(argv: Sequence[str]) -> int:
    """Run ``ir_datasets ARGV...`` (its own CLI) with the mlirkit ids registered."""
    import ir_datasets

    import mlirkit.datasets  # noqa: F401  (registers the ids)
    from mlirkit.base.errors import MlirkitError

    if list(argv[:1]) == ["export"]:
        _check_export_id(argv)
        _check_export_fields(argv)
        _load_mlirkit_id(argv)
    try:
        ir_datasets.main(list(argv))
    except MlirkitError:  # mlirkit's own reader (a missing file, a bad record): its one line, exit 2
        raise
    except SystemExit as e:  # argparse's usage errors and ir_datasets' own exits
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BrokenPipeError:
        import os
        import sys

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except Exception as e:  # ir_datasets' own failure: one line, exit 1 (as the Pyserini wrappers do)
        import logging
        import sys

        logging.getLogger(__name__).debug("ir_datasets %s failed", " ".join(argv), exc_info=True)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"error: ir_datasets {argv[0]}: {type(e).__name__}{': ' + first if first else ''}", file=sys.stderr)
        return 1
    return 0


def _load_mlirkit_id(argv: Sequence[str]) -> None:
    """``export ID ...`` of an mlirkit id: its files read (or downloaded) before ir_datasets prints anything, so
    that a missing file is mlirkit's one line (exit 2), not a log line of ir_datasets' followed by an error."""
    from mlirkit.datasets import DATASETS

    if len(argv) >= 2 and argv[1] in DATASETS:
        import ir_datasets

        next(iter(ir_datasets.load(argv[1]).docs_iter()), None)


def _check_export_id(argv: Sequence[str]) -> None:
    """``export ID ...``: an id ir_datasets does not know is one error with the closest mlirkit ids (ir_datasets
    itself ends in ``KeyError``)."""
    import ir_datasets

    if len(argv) < 2 or argv[1].startswith("-") or argv[1] in ir_datasets.registry:
        return
    from mlirkit.base.errors import MlirkitError
    from mlirkit.base.registry import did_you_mean
    from mlirkit.datasets import DATASETS

    raise MlirkitError(f"unknown dataset id {argv[1]!r}{did_you_mean(argv[1], DATASETS.names())}; "
                       "see `python -m mlirkit.datasets list`")


def _check_export_fields(argv: Sequence[str]) -> None:
    """``export ID ENTITY --fields F...``: every field must be one of the entity's (ir_datasets would fail with a
    KeyError traceback); one error with the fields it has."""
    from mlirkit.base.errors import MlirkitError
    from mlirkit.base.registry import did_you_mean

    if "--fields" not in argv or len(argv) < 3:
        return
    fields = []
    for arg in list(argv)[list(argv).index("--fields") + 1:]:
        if arg.startswith("-"):
            break
        fields.append(arg)
    import ir_datasets

    try:
        dataset = ir_datasets.load(argv[1])
        known = list(getattr(dataset, f"{argv[2]}_cls")()._fields)
    except Exception:  # an unknown id or entity: ir_datasets' own message says so
        return
    for field in fields:
        if field not in known:
            raise MlirkitError(f"export {argv[1]} {argv[2]} --fields: no field {field!r}{did_you_mean(field, known)} "
                               f"(fields: {', '.join(known)})")


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    from pathlib import Path

    from mlirkit.base.env import env_directory

    env_directory("IR_DATASETS_HOME", Path.home() / ".ir_datasets")  # before ir_datasets makes directories there
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    if args.command == "ir_datasets":
        if not args.ir_datasets_args:
            parser.error(f"ir_datasets: give a command ({', '.join(IR_DATASETS_COMMANDS)})")
        return ir_datasets_cli(args.ir_datasets_args)
    if args.command == "export" and args.entity is not None:
        if args.format is not None or args.output is not None:
            parser.error(f"export {args.dataset_id} {args.entity} writes to stdout in ir_datasets' formats: give "
                         f"--format after {args.entity} and no --output (or drop {args.entity} for BEIR/TREC files)")
        return ir_datasets_cli(["export", args.dataset_id, args.entity,
                                *(["--format", args.entity_format] if args.entity_format else []),
                                *(["--fields", *args.fields] if args.fields else []),
                                *(["--runtag", args.run_tag] if getattr(args, "run_tag", None) else [])])
    if args.command == "export" and (args.format is None or args.output is None):
        parser.error(f"export {args.dataset_id}: give --format {{beir,trec}} and --output DIR, or a part "
                     f"({', '.join(IR_DATASETS_ENTITIES)}) to write it to stdout")
    import mlirkit.datasets  # noqa: F401  (registers the ids)

    if args.command == "list":
        try:
            return _list(args.family, args.json)
        except BrokenPipeError:  # e.g. `... list | head`
            import os
            import sys

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    from mlirkit.datasets import DATASETS
    from mlirkit.datasets.export import export

    if args.dataset_id not in DATASETS:
        from mlirkit.base.errors import MlirkitError
        from mlirkit.base.registry import did_you_mean

        raise MlirkitError(f"unknown dataset id {args.dataset_id!r}{did_you_mean(args.dataset_id, DATASETS.names())}; "
                           "see `python -m mlirkit.datasets list`")
    counts = export(args.dataset_id, args.format, args.output, overwrite=args.overwrite)
    print(json.dumps({"dataset": args.dataset_id, "format": args.format, "output": args.output, **counts}))
    return 0


__all__ = ["IR_DATASETS_COMMANDS", "IR_DATASETS_ENTITIES", "build_parser", "main"]
