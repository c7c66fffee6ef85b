"""``st``: a sentence-transformers model run by the ``sentence-transformers`` library itself.

The model's own pipeline (``modules.json``: Transformer, Pooling, Dense projections, Normalize) and
its own prompts (``config_sentence_transformers.json``) are used, so the vectors are exactly
``SentenceTransformer(model).encode_query(texts)`` / ``encode_document(texts)``. Options:
``query_prompt_name`` / ``doc_prompt_name`` pick other named prompts, ``query_prefix`` /
``doc_prefix`` give the prompt text itself, ``normalize=True`` adds an L2 normalisation the
pipeline lacks, ``max_length`` sets ``max_seq_length``; ``trust_remote_code`` is passed on.

:func:`mlirkit.encoders.load_encoder` picks this class for a directory with ``modules.json`` (or a
hub id whose cached snapshot has one); ``sentence-transformers`` is the optional extra ``st``
(``pip install 'mlirkit[st]'``).
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.threads import torch_threads
from mlirkit.base.option_names import option
from mlirkit.encoders.base import Encoder
from mlirkit.encoders.hf import DTYPES
from mlirkit.encoders.st_config import STConfig, is_st_directory, read_st_config

logger = logging.getLogger(__name__)

EXTRA = "st"


def require_sentence_transformers():
    """The ``sentence_transformers`` module, or a one-line error naming the extra that installs it."""
    try:
        import sentence_transformers
    except ImportError:
        raise MlirkitError(f"the st encoder needs the sentence-transformers library: "
                           f"pip install 'mlirkit[{EXTRA}]' (or pip install sentence-transformers)") from None
    return sentence_transformers


class STEncoder(Encoder):
    """A ``SentenceTransformer`` pipeline; see the module docstring."""

    class_name = "st"

    def __init__(
        self,
        model: str,
        *,
        query_prompt_name: str | None = None,
        doc_prompt_name: str | None = None,
        query_prefix: str | None = None,
        doc_prefix: str | None = None,
        normalize: bool | None = None,
        max_length: int | None = None,
        batch_size: int = 32,
        device: str = "auto",
        dtype: str = "float32",
        threads: int | None = None,
        revision: str | None = None,
        trust_remote_code: bool = False,
        pooling: str | None = None,
        quantize: str | None = None,
    ) -> None:
        if pooling is not None:
            raise MlirkitError("the st encoder takes its pooling from the model's Pooling module; "
                               f"use {option('encoder_class_name', 'hf', flag='--encoder-class')} to choose another")
        if quantize is not None:
            raise MlirkitError(f"the st encoder does not quantise; use {option('encoder_class_name', 'hf', flag='--encoder-class')} "
                               f"{option('quantize', 'int8', within='--encoder-option')}")
        if dtype not in DTYPES:
            raise MlirkitError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
        if int(batch_size) < 1:
            raise MlirkitError(f"batch_size must be positive, got {batch_size}")
        if max_length is not None and int(max_length) < 2:
            raise MlirkitError(f"max_length must be at least 2, got {max_length}")
        st_lib = require_sentence_transformers()
        import torch

        self.name = model
        self.batch_size = int(batch_size)
        self.threads = threads
        self.dtype = dtype
        local = Path(model).expanduser().is_dir()
        path = str(Path(model).expanduser().resolve()) if local else model
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code, "revision": revision,
                                  "device": None if device == "auto" else device,
                                  "local_files_only": offline and not local}
        if dtype != "float32":
            kwargs["model_kwargs"] = {"dtype": getattr(torch, dtype)}
        from mlirkit.encoders.model_code import ALLOW, is_model_code_error, refuse_model_code

        if local:
            from mlirkit.encoders.weights_hash import check_weight_files

            refuse_model_code(path, trust_remote_code)
            for sub in [Path(path), *(p for p in Path(path).iterdir() if p.is_dir())]:
                check_weight_files(sub)
        from safetensors import SafetensorError

        try:
            self.model = st_lib.SentenceTransformer(path, **kwargs)
        except (OSError, ValueError, KeyError, RuntimeError, EOFError, SafetensorError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if is_model_code_error(e) and not trust_remote_code:
                raise MlirkitError(f"{model}: the model ships its own code, which mlirkit runs only when asked: "
                                   f"{ALLOW}") from None
            raise MlirkitError(f"cannot load the sentence-transformers model {model!r}: {first}") from None
        self.model.eval()
        if max_length is not None:
            self.model.max_seq_length = int(max_length)
        self.config = read_st_config(path) if local and is_st_directory(path) else _config_of(self.model, path)
        self.model_id = path if local else model
        self.query_prefix = query_prefix if query_prefix is not None else self.config.prompt("query", query_prompt_name)
        self.doc_prefix = doc_prefix if doc_prefix is not None else self.config.prompt("doc", doc_prompt_name)
        self.extra_normalize = bool(normalize) and not self.config.normalize
        if normalize is False and self.config.normalize:
            raise MlirkitError(f"{model}: the pipeline ends in a Normalize module; normalize=False cannot undo it")
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self._dim = int(get_dim() or 0) or int(self._encode(["x"], "", "query").shape[1])
        self._weights = _weights_id(path, local, self.model)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {
            "class": self.class_name,
            "model": self.model_id,
            "weights": self._weights,
            "modules": self.config.kinds,
            "pooling": self.config.pooling_mode,
            "dense": [list(d) for d in self.config.dense],
            "normalize": self.config.normalize or self.extra_normalize,
            "query_prefix": self.query_prefix,
            "doc_prefix": self.doc_prefix,
            "max_length": int(self.model.max_seq_length or 0),
            "dtype": self.dtype,
        }

    def encode_queries(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                       batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, self.query_prefix, "query", batch_size, show_progress)

    def encode_docs(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                    batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, self.doc_prefix, "document", batch_size, show_progress)

    def __repr__(self) -> str:
        return f"STEncoder({self.name!r}, modules={self.config.kinds}, dim={self._dim})"

    def _encode(self, texts: Sequence[str], prompt: str, task: str, batch_size: int | None = None,
                show_progress: bool = False) -> np.ndarray:
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise MlirkitError(f"text {i} is a {type(t).__name__}, not a string")
        if not texts:
            return np.zeros((0, getattr(self, "_dim", 0)), dtype=np.float32)
        side = self.model.encode_query if task == "query" else self.model.encode_document
        with torch_threads(self.threads):
            out = side(texts, prompt=prompt, batch_size=batch_size or self.batch_size,
                       show_progress_bar=show_progress, convert_to_numpy=True,
                       normalize_embeddings=self.extra_normalize)
        return np.ascontiguousarray(out, dtype=np.float32)


def _config_of(model: Any, path: str) -> STConfig:
    """The pipeline of a model loaded from the hub (its modules and prompts as loaded)."""
    from mlirkit.encoders.st_config import STModule

    modules = []
    for module in model:
        config: dict[str, Any] = {}
        kind = type(module).__name__
        if kind == "Pooling" and hasattr(module, "get_config_dict"):
            config = dict(module.get_config_dict())
        if kind == "Dense":
            config = {"in_features": module.in_features, "out_features": module.out_features}
        modules.append(STModule(kind, "", config))
    return STConfig(Path(path), tuple(modules), dict(model.prompts or {}), model.default_prompt_name)


def _weights_id(path: str, local: bool, model: Any) -> str:
    if local:
        import hashlib

        from mlirkit.encoders.weights_hash import directory_weights_sha256

        parts = []
        for sub in [Path(path)] + sorted(p for p in Path(path).iterdir() if p.is_dir() and not p.name.startswith(".")):
            digest = directory_weights_sha256(sub)
            if digest:
                parts.append(f"{sub.relative_to(path)} {digest}\n")
        if parts:
            return "sha256:" + (parts[0].split()[1] if len(parts) == 1 else
                                hashlib.sha256("".join(parts).encode()).hexdigest())
    commit = getattr(getattr(model[0], "auto_model", None), "config", None)
    commit = getattr(commit, "_commit_hash", None)
    return f"revision:{commit or 'unknown'}"


__all__ = ["STEncoder"]
