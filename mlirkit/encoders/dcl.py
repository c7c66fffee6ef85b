"""``dcl``: a retriever trained by ``python -m mlirkit.train`` (the disentangled contrastive retriever).

Embedding of text ``x`` with prompt ``p`` (the query or document prompt saved with the model)::

    h = pool(f(tokenize(p + x)[:max_length]))      # (d,) backbone, mean or CLS pooling
    r = W_s h                                      # (d',) the semantic head (h itself without heads)
    r = r / ||r||_2                                # normalize=True (the default: the losses use cosine)

The directory layout is documented in :mod:`mlirkit.encoders.dcl_model`; ``load_encoder(dir)`` picks this
class when the directory holds ``mlirkit_dcl.json``. The fingerprint holds the sha256 of the backbone
weights and of the heads, so indexes and transforms made with one trained model refuse another's.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.encoders.base import Encoder
from mlirkit.base.errors import MlirkitError
from mlirkit.base.threads import torch_threads


class DCLEncoder(Encoder):
    """Retrieval with ``r(x) = W_s f(x)`` from a saved DCL model directory."""

    class_name = "dcl"

    def __init__(self, model_dir: str, *, batch_size: int = 32, max_length: int | None = None,
                 device: str = "auto", normalize: bool | None = None, threads: int | None = None) -> None:
        import torch

        from mlirkit.encoders.dcl_model import MARKER, DisentangledEncoder

        path = Path(model_dir)
        if not (path / MARKER).is_file():
            raise MlirkitError(f"{model_dir}: not a DCL model directory (no {MARKER})")
        if int(batch_size) < 1:
            raise MlirkitError(f"batch_size must be positive, got {batch_size}")
        if max_length is not None and int(max_length) < 2:
            raise MlirkitError(f"max_length must be at least 2, got {max_length}")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.path = path
        self.threads = threads
        self.model = DisentangledEncoder.load(path, device=device).eval()
        cfg = self.model.config
        self.batch_size = int(batch_size)
        self.max_length = int(max_length) if max_length is not None else cfg.max_length
        positions = getattr(self.model.backbone.config, "max_position_embeddings", None)
        if positions and getattr(self.model.backbone.config, "model_type", "") in {"xlm-roberta", "roberta", "camembert"}:
            positions -= int(getattr(self.model.backbone.config, "pad_token_id", 1) or 0) + 1
        if positions:
            self.max_length = min(self.max_length, int(positions))
        self._normalize = cfg.normalize if normalize is None else bool(normalize)
        self._fingerprint: dict[str, Any] | None = None

    @property
    def dim(self) -> int:
        return self.model.retrieval_dim

    @property
    def fingerprint(self) -> dict[str, Any]:
        if self._fingerprint is None:
            from mlirkit.encoders.weights_hash import directory_weights_sha256
            from mlirkit.io.files import file_sha256
            from mlirkit.encoders.dcl_model import BACKBONE_DIR, HEADS_FILE

            cfg = self.model.config
            heads = self.path / HEADS_FILE
            self._fingerprint = {
                "class": "dcl",
                "backbone": cfg.backbone_name,
                "backbone_sha256": directory_weights_sha256(self.path / BACKBONE_DIR),
                "heads_sha256": file_sha256(heads) if heads.is_file() else None,
                "disentangler": cfg.use_disentangler,
                "head_dim": cfg.head_dim,
                "pooling": cfg.pooling,
                "query_prefix": cfg.query_prefix,
                "doc_prefix": cfg.doc_prefix,
                "max_length": self.max_length,
                "normalize": self._normalize,
            }
        return dict(self._fingerprint)

    @property
    def normalized(self) -> bool:
        return self._normalize

    def encode_queries(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                       batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, "query", batch_size, show_progress)

    def encode_docs(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                    batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, "doc", batch_size, show_progress)

    def _encode(self, texts: Sequence[str], side: str, batch_size: int | None, show_progress: bool) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with torch_threads(self.threads):  # scoped: the process-wide count is the CLI's
            out = self.model.embed(texts, side=side, batch_size=batch_size or self.batch_size,
                                   max_length=self.max_length, normalize=self._normalize, show_progress=show_progress)
        return out.numpy().astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"DCLEncoder({str(self.path)!r}, dim={self.dim}, max_length={self.max_length})"

    def describe(self) -> str:
        return json.dumps(self.fingerprint, sort_keys=True)


__all__ = ["DCLEncoder"]
