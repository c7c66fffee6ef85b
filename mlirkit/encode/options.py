"""The engine options of ``python -m mlirkit.encode``: ``--engine {local,ray}`` and the Ray options as one group.

A Ray option without ``--engine ray`` is refused with one line (it would change nothing); the defaults are
:class:`~mlirkit.encode.ray_engine.RayOptions`'s, so the help and the engine cannot disagree.
"""
from __future__ import annotations

import argparse
from dataclasses import fields

from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import positive_int

ENGINES = ("local", "ray")

#: RayOptions field -> (type, help)
_RAY_FLAGS = {
    "address": (str, "Ray cluster address (default: start a local one)"),
    "num_workers": (positive_int, "Ray encoder actors (each loads the model once)"),
    "num_gpus_per_worker": (float, "GPUs per Ray actor"),
    "num_cpus_per_worker": (float, "CPUs per Ray actor"),
    "block_size": (positive_int, "documents per Ray task and shard"),
    "shard_root": (str, "directory for the Ray shards, shared by all workers (default: beside the output index)"),
}


def add_engine_args(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """``--engine`` and the Ray options (each default None: given or not is what :func:`ray_options` checks)."""
    from mlirkit.encode.ray_engine import RayOptions

    defaults = {f.name: f.default for f in fields(RayOptions)}
    assert set(defaults) == set(_RAY_FLAGS), "every RayOptions field has its flag"
    g = parser.add_argument_group("engine (the Ray options need --engine ray)")
    g.add_argument("--engine", choices=ENGINES, default="local",
                   help="local: this process; ray: a Ray cluster (pip install 'mlirkit[ray]')")
    for name, (kind, text) in _RAY_FLAGS.items():
        shown = "" if defaults[name] is None else f" (default: {defaults[name]})"
        g.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=text + shown)
    return g


def ray_flags_given(args: argparse.Namespace) -> list[str]:
    """The Ray options given on the command line, as flags."""
    return ["--" + name.replace("_", "-") for name in _RAY_FLAGS if getattr(args, name, None) is not None]


def ray_options(args: argparse.Namespace):
    """The :class:`~mlirkit.encode.ray_engine.RayOptions` of ``--engine ray`` (the defaults where a flag is not
    given), or None for ``--engine local``; a Ray option given with the local engine is one error."""
    given = ray_flags_given(args)
    if args.engine != "ray":
        if given:
            raise MlirkitError(f"{' '.join(given)} need{'s' if len(given) == 1 else ''} --engine ray "
                               "(the local engine encodes in this process)")
        return None
    from mlirkit.encode.ray_engine import RayOptions

    return RayOptions(**{name: getattr(args, name) for name in _RAY_FLAGS if getattr(args, name) is not None})


__all__ = ["add_engine_args", "ray_options"]
