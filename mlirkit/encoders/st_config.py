"""What a sentence-transformers model directory declares: its module pipeline and its prompts.

A directory is a sentence-transformers model when it holds ``modules.json``: the ordered list of
modules the ``SentenceTransformer`` pipeline runs (``Transformer``, ``Pooling`` with its mode in
``1_Pooling/config.json``, ``Dense`` projections such as EmbeddingGemma's 768->3072->768 with their
own ``config.json`` and weights, ``Normalize``). ``config_sentence_transformers.json`` holds the
named ``prompts`` and the ``default_prompt_name``.

The query prompt is the one named ``query``, else the default prompt; the document prompt the
first of ``document``, ``passage``, ``corpus``, else the default prompt: the choices of
``SentenceTransformer.encode_query`` / ``encode_document``. This module only reads JSON (no torch,
no sentence-transformers): :mod:`mlirkit.encoders.st` runs the pipeline, and the ``hf`` encoder
reads the pooling, normalisation and prompts of a directory it is given from here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlirkit.base.errors import MlirkitError

MODULES_FILE = "modules.json"
ST_CONFIG_FILE = "config_sentence_transformers.json"
QUERY_PROMPT_NAMES = ("query",)
DOC_PROMPT_NAMES = ("document", "passage", "corpus")
#: ST pooling modes -> mlirkit's pooling names (mlirkit.encoders.prefixes.POOLINGS)
_POOLING_NAMES = {"mean": "mean", "cls": "cls", "lasttoken": "last"}
_POOLING_FLAGS = {  # the boolean keys of sentence-transformers < 6
    "pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean", "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken",
}


@dataclass(frozen=True)
class STModule:
    """One entry of ``modules.json``: its kind (the class name, e.g. ``Dense``) and its sub-directory."""

    kind: str
    path: str
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class STConfig:
    directory: Path
    modules: tuple[STModule, ...]
    prompts: dict[str, str]
    default_prompt_name: str | None

    @property
    def kinds(self) -> list[str]:
        return [m.kind for m in self.modules]

    @property
    def pooling_mode(self) -> str | None:
        """The ST pooling mode (``mean``, ``cls``, ``lasttoken``, ``max``, ...), None without a Pooling module."""
        for m in self.modules:
            if m.kind == "Pooling":
                return pooling_mode(m.config)
        return None

    @property
    def pooling(self) -> str | None:
        """The mlirkit pooling equivalent to the ST mode, None when mlirkit's ``hf`` has none."""
        return _POOLING_NAMES.get(self.pooling_mode or "")

    @property
    def normalize(self) -> bool:
        return "Normalize" in self.kinds

    @property
    def dense(self) -> list[tuple[int, int]]:
        """(in_features, out_features) of each Dense module, in pipeline order."""
        return [(int(m.config.get("in_features", 0)), int(m.config.get("out_features", 0)))
                for m in self.modules if m.kind == "Dense"]

    def prompt_name(self, side: str) -> str | None:
        """The prompt name ``encode_query`` (side ``query``) or ``encode_document`` (``doc``) uses."""
        for name in QUERY_PROMPT_NAMES if side == "query" else DOC_PROMPT_NAMES:
            if name in self.prompts:
                return name
        return self.default_prompt_name

    def prompt(self, side: str, name: str | None = None) -> str:
        """The prompt text of ``side``, or of the prompt ``name`` when given (refused when unknown)."""
        if name is not None and name not in self.prompts:
            raise MlirkitError(f"{self.directory / ST_CONFIG_FILE}: no prompt named {name!r}; "
                               f"prompts: {', '.join(sorted(self.prompts)) or '(none)'}")
        name = name if name is not None else self.prompt_name(side)
        return self.prompts.get(name, "") if name else ""

    def hf_compatible(self) -> str | None:
        """None when mlirkit's ``hf`` encoder computes this pipeline exactly, else the reason it does not."""
        extra = [k for k in self.kinds if k not in ("Transformer", "Pooling", "Normalize")]
        if extra:
            return f"the pipeline has {', '.join(extra)} module(s) that the hf encoder does not apply"
        if self.pooling is None:
            return f"pooling mode {self.pooling_mode!r} is not one of the hf encoder's"
        return None


def is_st_directory(path: str | Path) -> bool:
    return (Path(path) / MODULES_FILE).is_file()


def sentence_transformers_directory(name: str) -> Path | None:
    """The directory of ``name`` when it is a sentence-transformers model: a local directory with
    ``modules.json``, or an HF id whose snapshot in the local HF cache has one (no network)."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path if is_st_directory(path) else None
    if name.count("/") != 1 or name.startswith(("/", ".", "~")):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(name, MODULES_FILE)
    except Exception:  # an id the hub library refuses: not a cached hub model
        return None
    return Path(hit).parent if isinstance(hit, str) else None


def pooling_mode(config: dict[str, Any]) -> str | None:
    if isinstance(config.get("pooling_mode"), str):
        return str(config["pooling_mode"])
    modes = [mode for key, mode in _POOLING_FLAGS.items() if config.get(key)]
    return "+".join(modes) if modes else None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise MlirkitError(f"{path}: cannot read ({e.strerror or e})") from None
    except ValueError as e:
        raise MlirkitError(f"{path}: invalid JSON ({e})") from None


def read_st_config(directory: str | Path) -> STConfig:
    """Read ``modules.json``, each module's ``config.json`` and ``config_sentence_transformers.json``."""
    directory = Path(directory)
    entries = _read_json(directory / MODULES_FILE)
    if not isinstance(entries, list):
        raise MlirkitError(f"{directory / MODULES_FILE}: expected a JSON list of modules")
    modules = []
    for i, entry in enumerate(sorted(entries, key=lambda e: int(e.get("idx", 0)) if isinstance(e, dict) else 0)):
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise MlirkitError(f"{directory / MODULES_FILE}: module {i} has no 'type'")
        sub = str(entry.get("path") or "")
        config_file = directory / sub / "config.json"
        config = _read_json(config_file) if sub and config_file.is_file() else {}
        modules.append(STModule(entry["type"].rsplit(".", 1)[-1], sub, config if isinstance(config, dict) else {}))
    st = _read_json(directory / ST_CONFIG_FILE) if (directory / ST_CONFIG_FILE).is_file() else {}
    prompts = st.get("prompts") or {}
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise MlirkitError(f"{directory / ST_CONFIG_FILE}: 'prompts' must map names to strings")
    return STConfig(directory, tuple(modules), dict(prompts), st.get("default_prompt_name") or None)


__all__ = ["STConfig", "STModule", "is_st_directory", "read_st_config", "sentence_transformers_directory"]
