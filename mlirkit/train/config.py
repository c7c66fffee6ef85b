"""The DCL training configuration: one flat dataclass, validated, JSON/YAML round-trip.

Every loss coefficient is a hyperparameter (docs/design.md, "DCL"); the defaults are
ours. Ablation presets (:data:`ABLATIONS`) switch terms off to reproduce the shape of the paper's
Table 3: base fine-tune, +disentangler, +HSA, +LDCL (= full).
"""
from __future__ import annotations

import json
import math
import types
import typing
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import check_lang
from mlirkit.base.registry import Registry


@dataclass
class TrainConfig:
    # model
    backbone: str = ""  #: HF id or local directory (the offline e5: "multilingual-e5-small-q4")
    output_dir: str = ""
    head_dim: int | None = None  #: d' (None = the backbone's hidden size)
    use_disentangler: bool = True  #: False: no heads, r(x) = f(x)
    head_init: str = "identity"  #: "identity" (W_s = I at start) | "random"
    pooling: str = "mean"  #: "mean" | "cls"
    query_prefix: str = ""
    doc_prefix: str = ""
    sentence_prefix: str | None = None  #: prompt for parallel / monolingual sentences (None = doc_prefix)
    max_length: int = 128  #: tokens, queries and sentences
    doc_max_length: int | None = None  #: tokens, retrieval documents (None = max_length)
    # data
    triples: str | None = None  #: JSONL {query, positive, negatives} or an ir_datasets id with docpairs
    parallel: list[str] = field(default_factory=list)  #: aligned JSONL / TSV / dataset ids
    parallel_pivot: str = "en"
    parallel_langs: list[str] | None = None  #: target languages kept from the parallel data (None = all)
    parallel_text_field: str = "text"
    parallel_alignments: str | None = None  #: Pharaoh file, one line per parallel pair (single source)
    monolingual: list[str] = field(default_factory=list)  #: JSONL {text, lang}
    triples_lang: str = "en"  #: language of the retrieval triples (label for the language loss)
    n_retrieval: int = 8  #: retrieval examples per batch
    n_hard_negatives: int = 1
    n_parallel: int = 8  #: parallel pairs per batch
    n_monolingual: int = 8  #: monolingual sentences per batch
    shuffle_buffer: int = 1000
    # losses: switches
    use_hsa_sentence: bool = True
    use_hsa_token: bool = True
    use_consistency: bool = True  #: the rho losses on monolingual data (L_HSA^Q)
    use_ldcl: bool = True
    use_orth: bool = True
    # losses: coefficients and temperatures
    weight_ret: float = 1.0
    weight_sent: float = 1.0
    lambda_t: float = 0.5
    lambda_q: float = 1.0
    lambda_ldcl: float = 1.0
    lambda_o: float = 0.1
    lambda_d: float = 0.1
    tau_ret: float = 0.05
    tau_sent: float = 0.05
    tau_tok: float = 0.05
    tau_rho: float = 0.05
    tau_ldcl: float = 0.1
    top_k: int = 8  #: hard negatives per anchor in L_sent^P (0 = all)
    ldcl_negatives: str = "other_language"  #: "other_language" (the paper's N^l) | "all" (SupCon)
    consistency_pairing: str = "one_to_one"  #: "one_to_one" (the paper's) | "all_pairs" (every item x pair)
    in_batch_negatives: bool = True
    gather_across_processes: bool = True  #: sentence-level losses and retrieval negatives over all processes
    alignment: str = "mutual_argmax"  #: "mutual_argmax" | "pharaoh" (requires parallel_alignments)
    max_token_pairs: int = 256  #: aligned token pairs per batch (random subset)
    max_mono_tokens: int = 128  #: monolingual tokens per batch for the token-level rho loss
    # optimisation
    lr: float = 2e-5
    head_lr: float | None = None  #: learning rate of W_s, W_l (None = lr)
    weight_decay: float = 0.01
    warmup_steps: int = 0
    max_steps: int = 100
    schedule: str = "linear"  #: "linear" | "cosine" | "constant" (after warmup)
    grad_accum: int = 1
    max_grad_norm: float = 1.0  #: 0 = no clipping
    mixed_precision: str = "no"  #: "no" | "bf16" | "fp16" (CUDA only; ignored on CPU)
    gradient_checkpointing: bool = False
    freeze_word_embeddings: bool = False
    freeze_layers: int = 0  #: freeze the embeddings and the bottom N transformer layers (CPU speed)
    train_top_layers: int | None = None  #: cached mode: train only the top K layers (0 = frozen backbone, heads only)
    feature_cache_dir: str | None = None  #: where cached features live (None = <output_dir>/feature-cache)
    feature_cache_dtype: str = "float16"  #: "float16" | "bfloat16" | "float32"
    seed: int = 0
    device: str | None = None  #: None = cuda if available else cpu
    # bookkeeping
    log_every: int = 1
    save_every: int = 0  #: checkpoint every N optimiser steps (0 = only at the end)
    keep_checkpoints: int = 2

    def validate(self) -> "TrainConfig":
        def bad(name: str, why: str) -> MlirkitError:
            return MlirkitError(f"config field {name!r}: {why} (got {getattr(self, name)!r})")

        if not self.backbone:
            raise bad("backbone", "required")
        for name in ("parallel_pivot", "triples_lang"):  # language codes in their canonical case (EN -> en)
            setattr(self, name, check_lang(getattr(self, name), f"config field {name!r}", known=True))
        if self.parallel_langs is not None:
            self.parallel_langs = [check_lang(la, "config field 'parallel_langs'", known=True)
                                   for la in self.parallel_langs]
        if not self.output_dir:
            raise bad("output_dir", "required")
        for name in ("max_length", "max_steps", "grad_accum", "log_every"):
            if getattr(self, name) < 1:
                raise bad(name, "must be >= 1")
        for name in ("n_retrieval", "n_parallel", "n_monolingual", "n_hard_negatives", "top_k", "warmup_steps",
                     "save_every", "freeze_layers", "max_token_pairs", "max_mono_tokens", "keep_checkpoints"):
            if getattr(self, name) < 0:
                raise bad(name, "must be >= 0")
        for f in fields(self):  # every float field: nan and inf pass every comparison below, or none
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise bad(f.name, "must be a finite number")
        for name in ("tau_ret", "tau_sent", "tau_tok", "tau_rho", "tau_ldcl", "lr"):
            if not getattr(self, name) > 0:
                raise bad(name, "must be > 0")
        if self.head_lr is not None and not self.head_lr > 0:
            raise bad("head_lr", "must be > 0 (or null for lr)")
        if self.weight_decay * max(self.lr, self.head_lr or self.lr) >= 1:
            raise bad("weight_decay", "times lr must be < 1 (AdamW multiplies every weight by 1 - lr * weight_decay)")
        for name in ("weight_ret", "weight_sent", "lambda_t", "lambda_q", "lambda_ldcl", "lambda_o", "lambda_d",
                     "weight_decay", "max_grad_norm"):
            if getattr(self, name) < 0:
                raise bad(name, "must be >= 0")
        choices = {"pooling": ("mean", "cls"), "head_init": ("identity", "random"),
                   "schedule": ("linear", "cosine", "constant"), "mixed_precision": ("no", "bf16", "fp16"),
                   "alignment": ("mutual_argmax", "pharaoh"), "ldcl_negatives": ("other_language", "all"),
                   "consistency_pairing": ("one_to_one", "all_pairs"),
                   "feature_cache_dtype": ("float16", "bfloat16", "float32")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise bad(name, f"must be one of {', '.join(allowed)}")
        if self.alignment == "pharaoh" and not self.parallel_alignments:
            raise bad("alignment", "'pharaoh' needs parallel_alignments")
        if self.parallel_alignments and len(self.parallel) != 1:
            raise bad("parallel_alignments", "needs exactly one parallel source")
        if self.train_top_layers is not None and self.train_top_layers < 0:
            raise bad("train_top_layers", "must be >= 0 (or null for full fine-tuning)")
        if self.train_top_layers == 0 and not self.use_disentangler:
            raise bad("train_top_layers", "0 (frozen backbone) without the disentangler leaves nothing to train")
        if self.head_dim is not None and self.head_dim < 1:
            raise bad("head_dim", "must be >= 1")
        if self.weight_ret > 0 and self.n_retrieval > 0 and not self.triples:
            raise bad("triples", "required while the retrieval loss is on (or set n_retrieval to 0)")
        if self.n_parallel > 0 and not self.parallel and self.hsa_on:
            raise bad("parallel", "required while HSA is on (or set n_parallel to 0)")
        if self.n_monolingual > 0 and self.use_consistency and self.hsa_on and not self.monolingual:
            raise bad("monolingual", "required while use_consistency is on (or set n_monolingual to 0)")
        return self

    @property
    def hsa_on(self) -> bool:
        return self.use_hsa_sentence or self.use_hsa_token

    @property
    def effective_sentence_prefix(self) -> str:
        return self.doc_prefix if self.sentence_prefix is None else self.sentence_prefix

    # ---------------------------------------------------------------- (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "config") -> "TrainConfig":
        if not isinstance(data, dict):
            raise MlirkitError(f"{where}: expected a mapping of config fields")
        known = {f.name: f for f in fields(cls)}
        hints = typing.get_type_hints(cls)
        unknown = [k for k in data if k not in known]
        if unknown:
            from mlirkit.base.registry import did_you_mean

            raise MlirkitError(f"{where}: unknown config field {unknown[0]!r}{did_you_mean(unknown[0], list(known))}")
        values = {k: _coerce(k, v, hints[k], where) for k, v in data.items()}
        return cls(**values)

    @classmethod
    def load(cls, path: str | Path) -> "TrainConfig":
        path = Path(path)
        if not path.is_file():
            raise MlirkitError(f"{path}: no such config file")
        text = path.read_text(encoding="utf-8")
        try:
            if path.suffix in (".yaml", ".yml"):
                import yaml

                data = yaml.safe_load(text)
            else:
                data = json.loads(text)
        except Exception as e:  # json/yaml parse errors (a YAML tag such as !!python/object is one of them)
            raise MlirkitError(f"{path}: cannot parse config ({_one_line(e)})") from None
        return cls.from_dict(data or {}, str(path))

    def with_updates(self, **changes: Any) -> "TrainConfig":
        return replace(self, **changes)


def _one_line(e: Exception) -> str:
    """A JSON or YAML parse error in one line: YAML's ``problem`` and where it is (line:column, 1-based)."""
    problem, mark = getattr(e, "problem", None), getattr(e, "problem_mark", None)
    if problem and mark is not None:
        context = getattr(e, "context", None)
        return f"line {mark.line + 1}, column {mark.column + 1}: {f'{context}: ' if context else ''}{problem}"
    return " ".join(str(e).split()) or type(e).__name__


def _coerce(name: str, value: Any, hint: Any, where: str) -> Any:
    """Check (and gently convert, int -> float) a value against the field's type hint."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(name, value, inner[0], where)
    if origin is list:
        if not isinstance(value, list):
            raise MlirkitError(f"{where}: config field {name!r} must be a list")
        return [_coerce(name, v, args[0], where) for v in value]
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is int and isinstance(value, bool) or not isinstance(value, hint):
        raise MlirkitError(f"{where}: config field {name!r} must be {hint.__name__}, not {type(value).__name__}")
    return value


#: ablation presets: name -> field overrides (Table 3 shape of the DCL paper)
ABLATIONS: Registry[dict[str, Any]] = Registry("ablation")
ABLATIONS.register("full", {})
ABLATIONS.register("base", {"use_disentangler": False, "use_hsa_sentence": False, "use_hsa_token": False,
                            "use_consistency": False, "use_ldcl": False, "use_orth": False})
ABLATIONS.register("no_disentangler", {"use_disentangler": False, "use_ldcl": False, "use_orth": False})
ABLATIONS.register("no_hsa", {"use_hsa_sentence": False, "use_hsa_token": False, "use_consistency": False})
ABLATIONS.register("no_ldcl", {"use_ldcl": False})
ABLATIONS.register("no_orth", {"use_orth": False})
ABLATIONS.register("no_consistency", {"use_consistency": False})
ABLATIONS.register("no_token", {"use_hsa_token": False})

__all__ = ["ABLATIONS", "TrainConfig"]
