"""``python -m mlirkit.train``: train a DCL retriever from a config file and/or flags.

Every :class:`~mlirkit.train.config.TrainConfig` field is a flag (``--max-steps 200``,
``--no-use-ldcl``); flags override the config file; ``--ablation NAME`` applies a preset first.
Multi-process: ``torchrun --nproc_per_node 2 -m mlirkit.train --config run.json``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from typing import Any, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples
from mlirkit.base.options import LANG_LIST_HELP, LangListAction
from mlirkit.train.config import ABLATIONS, TrainConfig


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.train", description=__doc__.splitlines()[0], epilog=examples(
        "python -m mlirkit.train run.json --max-steps 200"))
    p.add_argument("config_path", nargs="?", help="config file (JSON or YAML); same as --config")
    p.add_argument("--config", dest="config_opt", help="config file (JSON or YAML)")
    p.add_argument("--ablation", choices=ABLATIONS.names(), help="apply an ablation preset")
    p.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in output_dir")
    p.add_argument("--overwrite", action="store_true", help="replace a previous run in output_dir")
    p.add_argument("--print-config", action="store_true", help="print the resolved config as JSON and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)  # deprecated alias
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    hints = typing.get_type_hints(TrainConfig)
    from mlirkit.train.config_help import field_help

    for f in dataclasses.fields(TrainConfig):
        hint, text = hints[f.name], field_help(TrainConfig, f)
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        base = args[0] if args else hint
        if hint is bool:
            p.add_argument(_flag(f.name), dest=f.name, action=argparse.BooleanOptionalAction, default=None,
                           help=text)
        elif f.name.endswith("_langs"):  # language codes: "de fr" or "de,fr"
            p.add_argument(_flag(f.name), dest=f.name, action=LangListAction, nargs="*", default=None,
                           metavar="LANG", help=f"{text} ({LANG_LIST_HELP})")
        elif typing.get_origin(base) is list or typing.get_origin(hint) is list:
            p.add_argument(_flag(f.name), dest=f.name, nargs="*", default=None, metavar="X", help=text)
        else:
            flags = [_flag(f.name)] + (["--output"] if f.name == "output_dir" else [])  # --output: the CLIs' name
            p.add_argument(*flags, dest=f.name, type=base if base in (int, float) else str, default=None,
                           metavar=base.__name__.upper() if hasattr(base, "__name__") else "X", help=text)
    return p


def resolve_config(args: argparse.Namespace) -> TrainConfig:
    path = args.config_opt or args.config_path
    data: dict[str, Any] = TrainConfig.load(path).to_dict() if path else {}
    if args.ablation:
        data.update(ABLATIONS.get(args.ablation))
    for f in dataclasses.fields(TrainConfig):
        v = getattr(args, f.name)
        if v is not None:
            data[f.name] = v
    return TrainConfig.from_dict(data, "command line").validate()


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    cfg = resolve_config(args)
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2, ensure_ascii=False))
        return 0
    from mlirkit.train.trainer import Trainer

    trainer = Trainer(cfg)
    final = trainer.train(resume=args.resume, overwrite=args.overwrite, show_progress=not args.quiet)
    if trainer.rank == 0:
        print(final)
    return 0
