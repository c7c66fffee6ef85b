"""The disentangled encoder: an HF backbone with a semantic head W_s and a language head W_l.

``h = f(x)`` is the pooled backbone output (d); ``z_s = W_s h`` and ``z_l = W_l h`` (d'); retrieval
uses ``r(x) = W_s f(x)`` (docs/design.md, "DCL"). Without the disentangler there are
no heads and ``r(x) = f(x)`` (the "base fine-tune" row of the ablation).

Directory layout written by :meth:`DisentangledEncoder.save` (loaded by the ``dcl`` encoder)::

    backbone/            the HF model and its tokenizer (save_pretrained)
    heads.safetensors    semantic.weight (d', d) [, language.weight (d', d)]
    mlirkit_dcl.json     marker + model config (format, version, pooling, prefixes, dims, ...)
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Sequence

import torch
import torch.nn as nn

from mlirkit.base.errors import MlirkitError
from mlirkit.base.progress import plural

logger = logging.getLogger(__name__)

MARKER = "mlirkit_dcl.json"  # == mlirkit.encoders.DCL_MARKER
FORMAT = "mlirkit-dcl"
FORMAT_VERSION = 1
HEADS_FILE = "heads.safetensors"
BACKBONE_DIR = "backbone"
#: why a DCL backbone that ships its own code is refused (training never makes one)
NO_MODEL_CODE = "mlirkit trains and loads DCL models only on backbones without their own code"


@dataclass
class DCLModelConfig:
    """What a saved DCL model needs besides its weights."""

    hidden_dim: int
    head_dim: int
    use_disentangler: bool = True
    pooling: str = "mean"  # "mean" | "cls"
    query_prefix: str = ""
    doc_prefix: str = ""
    max_length: int = 512
    normalize: bool = True
    backbone_name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> "DCLModelConfig":
        if data.get("format") != FORMAT:
            raise MlirkitError(f"{where}: not an mlirkit DCL model (format {data.get('format')!r})")
        if data.get("version") != FORMAT_VERSION:
            raise MlirkitError(f"{where}: unsupported DCL format version {data.get('version')!r}")
        known = {f.name for f in fields(cls)}
        missing = [k for k in ("hidden_dim", "head_dim") if k not in data]
        if missing:
            raise MlirkitError(f"{where}: missing field {missing[0]!r}")
        return cls(**{k: v for k, v in data.items() if k in known})


def pool(hidden: torch.Tensor, mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """hidden (n, L, d), mask (n, L) -> (n, d): masked mean, or the first ([CLS]) token."""
    if pooling == "cls":
        return hidden[:, 0]  # (n, d)
    m = mask.unsqueeze(-1).to(hidden.dtype)  # (n, L, 1)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9)  # (n, d)


class DisentangledEncoder(nn.Module):
    """Backbone + heads. ``forward`` returns pooled ``h``, token states and the head outputs."""

    def __init__(self, backbone: nn.Module, tokenizer: Any, config: DCLModelConfig) -> None:
        super().__init__()
        if config.pooling not in ("mean", "cls"):
            raise MlirkitError(f"pooling must be 'mean' or 'cls', not {config.pooling!r}")
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.config = config
        if config.use_disentangler:
            self.semantic = nn.Linear(config.hidden_dim, config.head_dim, bias=False)
            self.language = nn.Linear(config.hidden_dim, config.head_dim, bias=False)
        else:
            self.semantic = None
            self.language = None

    # ----------------------------------------------------------------- construction / persistence
    @classmethod
    def from_backbone(cls, name_or_path: str, *, head_dim: int | None = None, use_disentangler: bool = True,
                      pooling: str = "mean", head_init: str = "identity", query_prefix: str = "",
                      doc_prefix: str = "", max_length: int = 512, seed: int | None = None) -> "DisentangledEncoder":
        """Wrap an HF encoder (id or local directory) and initialise the heads.

        ``head_init="identity"``: W_s starts as the (d', d) identity, so the untrained model retrieves
        exactly like its backbone; W_l starts random (PyTorch's Linear init). ``"random"``: both random.
        """
        from transformers import AutoModel, AutoTokenizer

        from mlirkit.encoders.model_code import refuse_model_code

        refuse_model_code(name_or_path, False, NO_MODEL_CODE)
        try:
            tokenizer = AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=False)
            backbone = AutoModel.from_pretrained(name_or_path, add_pooling_layer=False, trust_remote_code=False) \
                if _accepts_pooling_flag(name_or_path) else AutoModel.from_pretrained(name_or_path, trust_remote_code=False)
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise MlirkitError(f"cannot load backbone {name_or_path!r}: {first}") from None
        hidden = int(backbone.config.hidden_size)
        config = DCLModelConfig(hidden_dim=hidden, head_dim=head_dim or hidden, use_disentangler=use_disentangler,
                                pooling=pooling, query_prefix=query_prefix, doc_prefix=doc_prefix,
                                max_length=max_length, backbone_name=str(name_or_path))
        if seed is not None:
            torch.manual_seed(seed)
        model = cls(backbone, tokenizer, config)
        if use_disentangler:
            if head_init == "identity":
                with torch.no_grad():
                    model.semantic.weight.copy_(torch.eye(config.head_dim, hidden))
            elif head_init != "random":
                raise MlirkitError(f"head_init must be 'identity' or 'random', not {head_init!r}")
        return model

    @classmethod
    def load(cls, path: str | Path, *, device: str | None = None) -> "DisentangledEncoder":
        """Load a directory written by :meth:`save`."""
        from safetensors.torch import load_file
        from transformers import AutoModel, AutoTokenizer

        path = Path(path)
        marker = path / MARKER
        if not marker.is_file():
            raise MlirkitError(f"{path}: no {MARKER}; not a DCL model directory")
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise MlirkitError(f"{marker}: invalid JSON ({e})") from e
        config = DCLModelConfig.from_json(data, str(marker))
        bdir = path / BACKBONE_DIR
        if not bdir.is_dir():
            raise MlirkitError(f"{path}: missing {BACKBONE_DIR}/")
        from mlirkit.encoders.model_code import refuse_model_code

        from mlirkit.encoders.weights_hash import check_weight_files

        refuse_model_code(bdir, False, NO_MODEL_CODE)
        check_weight_files(bdir)
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(bdir), trust_remote_code=False)
            kwargs = {"add_pooling_layer": False} if _accepts_pooling_flag(str(bdir)) else {}
            backbone = AutoModel.from_pretrained(str(bdir), trust_remote_code=False, **kwargs)
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise MlirkitError(f"{bdir}: cannot load the backbone ({first})") from None
        model = cls(backbone, tokenizer, config)
        if config.use_disentangler:
            heads_path = path / HEADS_FILE
            if not heads_path.is_file():
                raise MlirkitError(f"{path}: missing {HEADS_FILE}")
            from mlirkit.io.binary import check_safetensors

            check_safetensors(heads_path)
            state = load_file(str(heads_path))
            for key in ("semantic.weight", "language.weight"):
                if key not in state:
                    raise MlirkitError(f"{heads_path}: missing tensor {key!r}")
            model.semantic.weight.data.copy_(state["semantic.weight"])
            model.language.weight.data.copy_(state["language.weight"])
        if device:
            model.to(device)
        return model

    def save(self, path: str | Path, overwrite: bool = False, extra_files: dict[str, str] | None = None) -> Path:
        """Write the model directory atomically (see the module docstring for the layout)."""
        from safetensors import SafetensorError
        from safetensors.torch import save_file

        from mlirkit.base.fs import atomic_directory

        path = Path(path)
        for name, weight in self.named_parameters():
            if not bool(torch.isfinite(weight).all()):
                raise MlirkitError(f"cannot save {path}: weight {name!r} holds NaN or infinite values")
        with atomic_directory(path, overwrite=overwrite, kind="dcl-model") as tmp:
            try:
                self.backbone.save_pretrained(str(tmp / BACKBONE_DIR))
                self.tokenizer.save_pretrained(str(tmp / BACKBONE_DIR))
                if self.config.use_disentangler:
                    save_file({"semantic.weight": self.semantic.weight.detach().cpu().contiguous(),
                               "language.weight": self.language.weight.detach().cpu().contiguous()},
                              str(tmp / HEADS_FILE))
            except SafetensorError as e:  # safetensors' own I/O error (a full disk is "IoError ... StorageFull")
                raise MlirkitError(f"cannot write {path}: {' '.join(str(e).split())}") from None
            for name, text in (extra_files or {}).items():
                (tmp / name).write_text(text, encoding="utf-8")
            (tmp / MARKER).write_text(json.dumps(self.config.to_json(), indent=2) + "\n", encoding="utf-8")
        return path

    # ----------------------------------------------------------------- forward
    @property
    def retrieval_dim(self) -> int:
        return self.config.head_dim if self.config.use_disentangler else self.config.hidden_dim

    def tokenize(self, texts: Sequence[str], prefix: str = "", max_length: int | None = None,
                 offsets: bool = False) -> Any:
        """Tokenise ``prefix + text`` (padding to the longest, truncation to ``max_length``)."""
        from mlirkit.encoders.limits import clip_for_tokenizer

        max_length = max_length or self.config.max_length
        return self.tokenizer(clip_for_tokenizer(texts, max_length, prefix), padding=True,
                              truncation=True, max_length=max_length, return_tensors="pt",
                              return_offsets_mapping=offsets, return_special_tokens_mask=offsets)

    def encode_hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """input_ids (n, L), attention_mask (n, L) -> pooled h (n, d), token states (n, L, d)."""
        out = self.backbone(input_ids=input_ids, attention_mask=attention_mask)
        tokens = out.last_hidden_state  # (n, L, d)
        return pool(tokens, attention_mask, self.config.pooling), tokens

    def semantic_rep(self, h: torch.Tensor) -> torch.Tensor:
        """(..., d) -> (..., d'): ``W_s h`` (identity without the disentangler)."""
        return self.semantic(h) if self.semantic is not None else h

    def language_rep(self, h: torch.Tensor) -> torch.Tensor | None:
        """(..., d) -> (..., d'): ``W_l h`` (None without the disentangler)."""
        return self.language(h) if self.language is not None else None

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor | None]:
        h, tokens = self.encode_hidden(input_ids, attention_mask)  # (n, d), (n, L, d)
        return {"h": h, "tokens": tokens, "z_s": self.semantic_rep(h), "z_l": self.language_rep(h)}

    @torch.inference_mode()
    def embed(self, texts: Sequence[str], *, side: str = "doc", batch_size: int = 32,
              max_length: int | None = None, normalize: bool | None = None, show_progress: bool = False) -> torch.Tensor:
        """Retrieval embeddings ``r(x) = W_s f(x)`` (float32, CPU), length-sorted batches, original order."""
        import torch.nn.functional as F
        from tqdm.auto import tqdm

        prefix = self.config.query_prefix if side == "query" else self.config.doc_prefix
        normalize = self.config.normalize if normalize is None else normalize
        device = next(self.parameters()).device
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = torch.zeros(len(texts), self.retrieval_dim)
        was_training = self.training
        self.eval()
        try:
            for start in tqdm(range(0, len(order), batch_size), disable=not show_progress,
                              desc=f"encode {plural(side)}", unit="batch"):
                idx = order[start:start + batch_size]
                enc = self.tokenize([texts[i] for i in idx], prefix, max_length)
                h, _ = self.encode_hidden(enc["input_ids"].to(device), enc["attention_mask"].to(device))
                r = self.semantic_rep(h).float()
                if normalize:
                    r = F.normalize(r, dim=-1)
                out[idx] = r.cpu()
        finally:
            self.train(was_training)
        return out


def _accepts_pooling_flag(name_or_path: str) -> bool:
    """BERT/XLM-R models take ``add_pooling_layer``; others (e.g. DistilBERT) do not."""
    from transformers import AutoConfig

    try:
        mt = AutoConfig.from_pretrained(name_or_path, trust_remote_code=False).model_type
    except (OSError, ValueError):
        return False
    return mt in {"bert", "xlm-roberta", "roberta", "camembert", "xlm-roberta-xl"}


__all__ = ["BACKBONE_DIR", "DCLModelConfig", "DisentangledEncoder", "HEADS_FILE", "MARKER", "pool"]
