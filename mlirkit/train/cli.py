"""``python -m mlirkit.train``: train a DCL retriever from a config file (JSON or YAML: the fields of
:class:`~mlirkit.train.config.TrainConfig`), changed by ``--set FIELD=VALUE`` and a few flags.

``--set`` takes any field (``--set lr=1e-4 --set use_ldcl=false --set parallel_langs=de,fr``), its value read as
the field's type; the flags of the fields most runs change (``--output``, ``--backbone``, ``--max-steps``, ``--seed``,
``--device``) are generated from the dataclass too; ``--ablation NAME`` applies a preset first; ``--print-config``
shows every field. Multi-process: ``torchrun --nproc_per_node 2 -m mlirkit.train run.json``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from typing import Any, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import split_key_value, split_lang_list, typed_value
from mlirkit.train.config import ABLATIONS, TrainConfig

#: the fields with a flag of their own (the rest: --set FIELD=VALUE)
OVERRIDES = {"output_dir": "--output", "backbone": "--backbone", "max_steps": "--max-steps", "seed": "--seed",
             "device": "--device"}
SET = "--set"


def _hints() -> dict[str, Any]:
    return typing.get_type_hints(TrainConfig)


def _inner(hint: Any) -> tuple[Any, bool]:
    """``(the type, whether None is allowed)`` of a field's hint (``int | None`` -> ``(int, True)``)."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is not list and len(args) < len(typing.get_args(hint)):
        return args[0], True
    return hint, False


def field_value(name: str, text: str, option: str = SET) -> Any:
    """The text of ``FIELD=VALUE`` as the field's type: ``true``/``false``, a number, a comma-separated list (language
    codes checked), ``none`` for a field that may be None, else the text itself."""
    kind, optional = _inner(_hints()[name])
    where = f"{option} {name}={text}"
    if optional and text.strip().lower() in ("none", "null"):
        return None
    if typing.get_origin(kind) is list:
        items = [t.strip() for t in text.split(",") if t.strip()]
        if name.endswith("_langs"):
            try:
                return split_lang_list(items)
            except ValueError as e:
                raise MlirkitError(f"{where}: {e}") from None
        return items
    return typed_value(text, kind, where)


def parse_sets(items: Sequence[str] | None) -> dict[str, Any]:
    """``--set FIELD=VALUE`` items -> ``{field: value}`` (unknown fields: one error with "did you mean")."""
    from mlirkit.base.registry import did_you_mean

    names = [f.name for f in dataclasses.fields(TrainConfig)]
    out: dict[str, Any] = {}
    for item in items or []:
        name, text = split_key_value(item, SET, expected="FIELD=VALUE")
        name = name.replace("-", "_")
        if name not in names:
            raise MlirkitError(f"{SET} {name}: TrainConfig has no field {name!r}{did_you_mean(name, names)} "
                               "(python -m mlirkit.train --print-config lists them)")
        out[name] = field_value(name, text)
    return out


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.train.config_help import field_help

    p = ArgumentParser(prog="python -m mlirkit.train", description=__doc__, epilog=examples(
        "python -m mlirkit.train --backbone multilingual-e5-small-q4 --set triples=mlirkit/xquad-r-zs/train \\\n"
        "      --set parallel=mlirkit/parallel/tatoeba --set parallel_langs=ar,de,es,zh --set n_monolingual=0 \\\n"
        "      --set query_prefix='query: ' --set doc_prefix='passage: ' --output runs/dcl --print-config > run.json",
        "python -m mlirkit.train run.json --max-steps 200 --set use_ldcl=false --output runs/dcl-no-ldcl"))
    p.add_argument("config_path", nargs="?", metavar="CONFIG", help="config file (JSON or YAML)")
    p.add_argument(SET, dest="set", action="append", default=None, metavar="FIELD=VALUE",
                   help="set any config field, repeatable: lr=1e-4, use_orth=false, parallel=a.jsonl,b.jsonl, "
                        "head_dim=none (--print-config lists the fields; docs/training.md)")
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    for name, flag in OVERRIDES.items():  # generated from the dataclass: type and help are the field's
        kind, _ = _inner(_hints()[name])
        p.add_argument(flag, dest=name, type=kind if kind in (int, float) else str, default=None,
                       metavar=getattr(kind, "__name__", "X").upper(), help=field_help(TrainConfig, fields[name]))
    p.add_argument("--ablation", choices=ABLATIONS.names(), help="apply an ablation preset")
    p.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in output_dir")
    p.add_argument("--overwrite", action="store_true", help="replace a previous run in output_dir")
    p.add_argument("--print-config", action="store_true", help="print the resolved config as JSON and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def resolve_config(args: argparse.Namespace) -> TrainConfig:
    """The config file (positional), then ``--ablation``, then ``--set``, then the override flags."""
    path = args.config_path
    data: dict[str, Any] = TrainConfig.load(path).to_dict() if path else {}
    if args.ablation:
        data.update(ABLATIONS.get(args.ablation))
    data.update(parse_sets(args.set))
    for name in OVERRIDES:
        value = getattr(args, name, None)
        if value is not None:
            data[name] = value
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


__all__ = ["OVERRIDES", "build_parser", "field_value", "main", "parse_sets", "resolve_config"]
