"""The encoder options of every CLI that builds an encoder (encode, search, shift fit, the Pyserini wrappers): one
group, ``--encoder NAME [--encoder-class CLASS] [--encoder-option KEY=VALUE ...] [--threads N]``.

An ``--encoder-option`` key is a keyword argument of the encoder class's constructor (``hf``: ``max_length``,
``batch_size``, ``pooling``, ``normalize``, ``query_prefix``, ``doc_prefix``, ``device``, ``dtype``, ``quantize``,
``family``, ``trust_remote_code``, ``backend``, ``precision``, ...), its value converted to the type the constructor
declares (``true``/``false`` for a flag); a key the class does not take is one error with "did you mean"
(:func:`parse_encoder_options`).
"""
from __future__ import annotations

import argparse
import functools
import inspect
import types
import typing
from typing import Any, Iterable

from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import non_negative_int, split_key_value, typed_value
from mlirkit.encoders import DEFAULT_ENCODER, ENCODER_CLASSES

OPTION = "--encoder-option"


@functools.lru_cache(maxsize=None)
def class_options(class_name: str) -> dict[str, type]:
    """The options the encoder class ``class_name`` takes: keyword -> the type its value is converted to
    (``int``, ``float``, ``bool`` or ``str``), read from the constructor's signature."""
    from mlirkit.encoders import encoder_class

    cls = encoder_class(class_name)
    hints = typing.get_type_hints(cls.__init__)
    params = list(inspect.signature(cls.__init__).parameters.values())[2:]  # after self and the model
    return {p.name: _value_type(hints.get(p.name), p.default) for p in params
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def _value_type(hint: Any, default: Any) -> type:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next((a for a in typing.get_args(hint) if a is not type(None)), str)
    if hint in (bool, int, float, str):
        return hint
    return type(default) if isinstance(default, (bool, int, float)) else str


def parse_encoder_options(items: Iterable[str] | None, encoder_class: str | None = None,
                          option: str = OPTION) -> dict[str, Any]:
    """``["max_length=64", "normalize=false"]`` -> ``{"max_length": 64, "normalize": False}``: each key checked
    against ``encoder_class``'s options (every class's when it is not known yet), each value converted to its type;
    a later key wins; ``max-length`` is ``max_length``."""
    from mlirkit.base.registry import did_you_mean

    if encoder_class is not None:
        known = class_options(encoder_class)
        where = f"the {encoder_class} encoder"
    else:
        known = {k: t for name in ENCODER_CLASSES.names() for k, t in class_options(name).items()}
        where = "an encoder"
    out: dict[str, Any] = {}
    for item in items or []:
        key, value = split_key_value(item, option)
        key = key.replace("-", "_")
        if key not in known:
            raise MlirkitError(f"{option} {key}: {where} takes no option {key!r}{did_you_mean(key, sorted(known))}; "
                               f"its options: {', '.join(sorted(known))}")
        out[key] = typed_value(value, known[key], f"{option} {key}={value}")
    return out


def add_encoder_args(parser: argparse.ArgumentParser, *, required: bool = False, default: str | None = DEFAULT_ENCODER,
                     threads: bool = True) -> argparse._ArgumentGroup:
    """The encoder group: ``--encoder``, ``--encoder-class``, ``--encoder-option`` (repeatable), ``--threads``
    (unless ``threads=False``)."""
    g = parser.add_argument_group("encoder")
    g.add_argument("--encoder", required=required, default=None if required else default,
                   help="preset name, Hugging Face model id or local path (default: "
                        f"{default if default is not None else 'the one recorded in the index'})")
    g.add_argument("--encoder-class", choices=ENCODER_CLASSES.names(), default=None,
                   help="encoder class; default: the preset's, 'dcl' for a DCL directory, else 'hf'")
    g.add_argument(OPTION, action="append", default=None, metavar="KEY=VALUE",
                   help="an option of the encoder class, repeatable: max_length=256, batch_size=64, "
                        "pooling=mean, normalize=false, query_prefix='query: ', doc_prefix=..., device=cuda, "
                        "dtype=bfloat16, quantize=int8, family=..., trust_remote_code=true, backend=openvino, "
                        "precision=bf16 (hf; docs/encoders.md)")
    if threads:
        g.add_argument("--threads", type=non_negative_int, default=None, help="CPU threads for encoding and FAISS")
    return g


def encoder_class_of(args: argparse.Namespace) -> str | None:
    """The encoder class the options are for: ``--encoder-class``, else the one ``--encoder`` resolves to, else
    None (the index's encoder, read later)."""
    from mlirkit.encoders import resolve_encoder_class

    if getattr(args, "encoder_class", None):
        return args.encoder_class
    return resolve_encoder_class(args.encoder) if getattr(args, "encoder", None) else None


def encoder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The encoder options the command line gives (``--encoder-option``, and ``--threads``), checked."""
    options = parse_encoder_options(getattr(args, "encoder_option", None), encoder_class_of(args))
    if getattr(args, "threads", None) and "threads" not in options:
        options["threads"] = args.threads
    return options


def encoder_from_args(args: argparse.Namespace, name: str | None = None):
    """The encoder a CLI's options name; the process is set up for encoding (:func:`~mlirkit.encoders.hf.pin_malloc_threshold`)."""
    from mlirkit.encoders import load_encoder
    from mlirkit.encoders.hf import pin_malloc_threshold

    pin_malloc_threshold()
    return load_encoder(name or args.encoder, args.encoder_class, **encoder_options(args))


__all__ = ["OPTION", "add_encoder_args", "class_options", "encoder_from_args", "encoder_options",
           "parse_encoder_options"]
