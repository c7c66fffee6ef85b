"""The model family of a local model directory, read from what the directory itself says.

In order: mlirkit's own ``mlirkit_encoder.json`` (``family`` or the original ``model`` id); the
``family`` option (``--encoder-option family=NAME``, or ``none`` for "no family": mean pooling, no prompts, no
normalisation); ``config.json``'s ``_name_or_path`` when it is a known HF id; the
sentence-transformers files (``modules.json``: Pooling mode, Normalize, prompts), which make an
ad hoc family named ``sentence-transformers``. None when nothing says: the ``hf`` encoder then
refuses rather than silently dropping the prompts and normalisation (:func:`unknown_family_error`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.encoders.prefixes import FAMILIES, ModelFamily, family_for
from mlirkit.encoders.st_config import is_st_directory, read_st_config

NO_FAMILY = "none"


def named_family(name: str | None) -> ModelFamily | None:
    """The family called ``name`` (registry error with close names when unknown); None for ``none``."""
    if name is None or name == NO_FAMILY:
        return None
    return FAMILIES.get(name)


def family_from_directory(directory: str | Path) -> ModelFamily | None:
    """A local directory's family from its ``config.json`` or its sentence-transformers files."""
    directory = Path(directory)
    config = _json(directory / "config.json")
    family = family_for(str(config.get("_name_or_path") or ""))
    if family is not None:
        return family
    if is_st_directory(directory):
        st = read_st_config(directory)
        return ModelFamily(
            "sentence-transformers", (), pooling=st.pooling or "mean", normalize=st.normalize,
            query_prefix=st.prompt("query"), doc_prefix=st.prompt("doc"),
            note=st.hf_compatible() and f"{st.hf_compatible()} (use {option('encoder_class_name', 'st', flag='--encoder-class')})" or "",
        )
    return None


def resolve_family(found: ModelFamily | str | None, option: str | None, directory: str | Path | None, *,
                   explicit: tuple[Any, ...], model: str) -> ModelFamily | None:
    """The family the ``hf`` encoder uses for ``model``.

    ``option`` (``--family``) wins; then ``found`` (the sidecar's or the HF id's family; the string
    ``"none"`` when the sidecar says no family); then what ``directory`` says. With nothing found and
    no explicit pooling/normalize/prefix (``explicit``), the encoder refuses (:func:`unknown_family_error`).
    """
    if option is not None:
        return named_family(option)
    if found == NO_FAMILY:
        return None
    if isinstance(found, ModelFamily):
        return found
    if directory is not None:
        family = family_from_directory(directory)
        if family is not None:
            return family
    if any(x is not None for x in explicit):
        return None
    raise unknown_family_error(model)


#: the command-line option that carries an encoder option (mlirkit.encoders.options)
ENCODER_OPTION = "--encoder-option"


def unknown_family_error(model: str) -> MlirkitError:
    names = ", ".join(FAMILIES.names())
    return MlirkitError(
        f"{model}: unknown model family (no mlirkit_encoder.json, no known id in config.json, no "
        f"sentence-transformers modules.json), so its pooling, prompts and normalisation are not known; "
        f"name it with {option('family', 'NAME', within=ENCODER_OPTION)} ({names}), or "
        f"{option('family', NO_FAMILY, within=ENCODER_OPTION)} for mean pooling without prompts or normalisation, "
        f"or give " + "/".join(option(k, within=ENCODER_OPTION) for k in ("pooling", "normalize", "query_prefix",
                                                                          "doc_prefix")))


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


__all__ = ["resolve_family"]
