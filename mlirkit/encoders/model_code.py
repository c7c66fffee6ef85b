"""Code shipped with a model runs only when the user asks for it, never because a file says so.

Hugging Face model directories can carry Python files that transformers (``auto_map`` in ``config.json`` or
``tokenizer_config.json``) or sentence-transformers (a ``modules.json`` type outside ``sentence_transformers``)
import when told ``trust_remote_code=True``. mlirkit passes that option only when it comes from the command
line (``--encoder-option trust_remote_code=true``) or an
explicit Python argument (``trust_remote_code=True``):

- options read from a file (an index's ``meta.json`` ``encoder_options``, ...) lose the options that run
  code (:data:`CODE_OPTIONS`, :func:`options_from_file`); a file that asks for one is one error saying how
  to allow it;
- a local model directory that ships code is refused with one line before any library sees it
  (:func:`refuse_model_code`) unless the code was allowed; every load passes ``trust_remote_code``
  explicitly (never None: transformers would otherwise ask on the terminal).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError

#: encoder options that make a library import code from the model's files
CODE_OPTIONS = ("trust_remote_code",)
#: how a user allows a model's own code
ALLOW = "pass --encoder-option trust_remote_code=true (Python: trust_remote_code=True) to allow it"


def options_from_file(options: Mapping[str, Any] | None, where: object,
                      granted: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Encoder ``options`` read from the file ``where``, without :data:`CODE_OPTIONS`: those count only when
    ``granted`` (the caller's explicit options) sets them; a file asking for one the caller did not grant is
    an error saying how to allow it."""
    out = dict(options or {})
    granted = granted or {}
    for name in CODE_OPTIONS:
        asked = out.pop(name, None)
        if asked and not granted.get(name):
            raise MlirkitError(f"{where}: asks for encoder option {name}=true, which runs the model's own code; "
                               f"mlirkit never takes it from a file: {ALLOW}")
    return out


def model_code_files(directory: str | Path) -> list[str]:
    """The Python modules a local model directory asks a library to import (empty for a plain model)."""
    directory = Path(directory)
    found: list[str] = []
    for name in ("config.json", "tokenizer_config.json"):
        auto_map = (_json(directory / name) or {}).get("auto_map")
        if isinstance(auto_map, dict):
            refs = [r for v in auto_map.values() for r in (v if isinstance(v, list) else [v]) if isinstance(r, str)]
            found += [f"{name} auto_map {r}" for r in refs]
    modules = _json(directory / "modules.json")
    if isinstance(modules, list):
        found += [f"modules.json type {m['type']}" for m in modules
                  if isinstance(m, dict) and isinstance(m.get("type"), str)
                  and not m["type"].startswith("sentence_transformers.")]
    return list(dict.fromkeys(found))


def refuse_model_code(directory: str | Path, trust_remote_code: bool, allow: str = ALLOW) -> None:
    """One error when the local model ``directory`` ships code and ``trust_remote_code`` was not given."""
    if trust_remote_code or not Path(directory).is_dir():
        return
    files = model_code_files(directory)
    if files:
        more = f" and {len(files) - 2} more" if len(files) > 2 else ""
        raise MlirkitError(f"{directory}: the model ships its own code ({'; '.join(files[:2])}{more}), which "
                           f"mlirkit runs only when asked: {allow}")


def is_model_code_error(e: BaseException) -> bool:
    """Whether a transformers / sentence-transformers error is their refusal to run a model's code."""
    text = str(e)
    return "trust_remote_code" in text or "custom code" in text


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None


__all__ = ["ALLOW", "CODE_OPTIONS", "is_model_code_error", "model_code_files", "options_from_file",
           "refuse_model_code"]
