"""``python -m mlirkit.datasets``: list the registered ids, export one as BEIR or TREC files.

The ``ir_datasets`` CLI on mlirkit ids: ``python -m mlirkit.datasets export ID {docs,queries,qrels}
[--format F] [--fields ...]`` is ``ir_datasets export`` itself (same flags, output on stdout), and
``python -m mlirkit.datasets ir_datasets ARGS...`` runs any ``ir_datasets`` command (``lookup``,
``list``, ...) after the mlirkit ids are registered. Without mlirkit's entry point:
``python -c "import mlirkit, ir_datasets; ir_datasets.main_cli()" export mlirkit/ddtp/en docs``.
"""
from __future__ import annotations

import argparse
import json
from typing import Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples, with_examples


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.datasets.export import ExportFormat

    p = ArgumentParser(prog="python -m mlirkit.datasets", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr (no INFO lines, no progress bars)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="ids, languages, sizes, whether their files are here (offline)")
    ls.add_argument("--family", help="only this family (belebele, xquad-r, mlqa, multieup-v2, mmarco-pairs, ddtp, parallel)")
    ls.add_argument("--json", action="store_true", help="one JSON object per line")
    sub.add_parser("ir_datasets", add_help=False,
                   help="run the ir_datasets CLI with the mlirkit ids registered (e.g. ir_datasets lookup ID ...)")
    ex = sub.add_parser("export", help="write a collection as BEIR or TREC/Pyserini files; "
                                       "export ID {docs,queries,qrels} [--format F] is ir_datasets' own export")
    ex.add_argument("dataset_id")
    ex.add_argument("--format", required=True, choices=[f.value for f in ExportFormat])
    ex.add_argument("--output", required=True, help="output directory (written atomically)")
    ex.add_argument("--overwrite", action="store_true")
    return with_examples(p, EXAMPLES)


EXAMPLES = {
    "": examples("python -m mlirkit.datasets list --family parallel",
                 "python -m mlirkit.datasets export mlirkit/ddtp/en/test --format trec --output out/ddtp-en-test"),
    "list": examples("python -m mlirkit.datasets list --family parallel"),
    "export": examples("python -m mlirkit.datasets export mlirkit/ddtp/en/test --format trec --output out/ddtp-en-test"),
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


#: the entity types of ``ir_datasets export ID ENTITY``
IR_DATASETS_ENTITIES = ("docs", "queries", "qrels", "scoreddocs", "docpairs")


def ir_datasets_cli(argv: Sequence[str]) -> int:
    """Run ``ir_datasets ARGV...`` (its own CLI) with the mlirkit ids registered."""
    import ir_datasets

    import mlirkit.datasets  # noqa: F401  (registers the ids)

    if list(argv[:1]) == ["export"]:
        _check_export_id(argv)
        _check_export_fields(argv)
    try:
        ir_datasets.main(list(argv))
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
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    from pathlib import Path

    from mlirkit.base.env import env_directory

    env_directory("IR_DATASETS_HOME", Path.home() / ".ir_datasets")  # before ir_datasets makes directories there
    if argv[:1] == ["ir_datasets"]:
        return ir_datasets_cli(argv[1:])
    if argv[:1] == ["export"] and len(argv) > 2 and argv[2] in IR_DATASETS_ENTITIES:
        return ir_datasets_cli(argv)
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
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
