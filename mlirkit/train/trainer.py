"""The DCL trainer: plain PyTorch, AdamW with warmup and decay, gradient accumulation and clipping,
mixed precision on CUDA, gradient checkpointing, checkpoints with exact resume, per-loss JSONL logs,
and data parallelism over processes with ``torchrun`` (``DistributedDataParallel``; gloo on CPU).

One optimiser step = ``grad_accum`` micro-batches from :class:`~mlirkit.train.data.BatchComposer`.
Each micro-batch is encoded in one DDP forward (queries, documents, parallel sentences, monolingual
sentences); sentence-level representations and retrieval documents are gathered across processes
(``gather_across_processes``), so the sentence-level losses and in-batch negatives see the global
batch and the result equals a single process on the concatenated batch; token-level losses are
computed per process.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import random
import re
import shutil
import time
import zlib
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import torch
import torch.nn as nn

from mlirkit.base.errors import MlirkitError
from mlirkit.base.fs import atomic_file, refuse_existing
from mlirkit.base.option_names import option
from mlirkit.base.outputs import output_kind
from mlirkit.train import distributed as dd
from mlirkit.train.alignment import (
    AlignmentCache, map_word_alignment, mutual_argmax_alignment, valid_token_mask, word_first_subwords,
)
from mlirkit.train.config import TrainConfig
from mlirkit.train.data import Batch, BatchComposer, read_monolingual, read_parallel, read_triples
from mlirkit.train.losses import DCLObjective, DCLOutputs, LossWeights
from mlirkit.encoders.dcl_model import DisentangledEncoder

logger = logging.getLogger(__name__)

CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)$")
FINAL_DIR = "model"
LOG_FILE = "train_log.jsonl"
CONFIG_FILE = "train_config.json"


@output_kind("train-config", directory=False, description="a training config written by mlirkit's trainer")
def _is_train_config(path: Path) -> bool:
    """What :meth:`TrainConfig.to_json` writes: a JSON object holding every config field (a user's config
    names a few)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return isinstance(data, dict) and set(data) == {f.name for f in dataclasses.fields(TrainConfig)}


@output_kind("train-log", directory=False, description="a training log written by mlirkit's trainer")
def _is_train_log(path: Path) -> bool:
    """JSON lines, each an object with a ``step``."""
    with open(path, encoding="utf-8") as f:
        return all(isinstance(r := json.loads(line), dict) and "step" in r for line in f if line.strip())


def lang_id(lang: str) -> int:
    """A stable integer label for a language code (CRC-32), identical on every process."""
    return zlib.crc32(lang.encode("utf-8"))


def resolve_backbone(name: str) -> str:
    """A model built on this machine (``OFFLINE_MODELS``, e.g. the offline e5) -> its HF directory; anything
    else unchanged."""
    from mlirkit.encoders.hf import OFFLINE_MODELS, offline_model_dir

    return str(offline_model_dir(name)) if name in OFFLINE_MODELS else name


def loss_weights(cfg: TrainConfig) -> LossWeights:
    """Config switches and coefficients -> the weights of the total loss."""
    dis = cfg.use_disentangler
    return LossWeights(
        ret=cfg.weight_ret,
        sent_p=cfg.weight_sent if cfg.use_hsa_sentence else 0.0,
        lambda_t=cfg.lambda_t if cfg.use_hsa_token else 0.0,
        lambda_q=cfg.lambda_q if cfg.use_consistency else 0.0,
        ldcl=cfg.lambda_ldcl if (cfg.use_ldcl and dis) else 0.0,
        orth=cfg.lambda_o if (cfg.use_orth and dis) else 0.0,
        lambda_d=cfg.lambda_d,
    )


def lr_lambda(cfg: TrainConfig):
    def f(step: int) -> float:
        if cfg.warmup_steps and step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        if cfg.schedule == "constant":
            return 1.0
        span = max(1, cfg.max_steps - cfg.warmup_steps)
        progress = min(1.0, (step - cfg.warmup_steps) / span)
        return 1.0 - progress if cfg.schedule == "linear" else 0.5 * (1.0 + math.cos(math.pi * progress))
    return f


def freeze_bottom_layers(backbone: nn.Module, n: int) -> None:
    """Freeze the embeddings and the first ``n`` transformer layers (BERT / XLM-R layout)."""
    layers = getattr(getattr(backbone, "encoder", None), "layer", None)
    embeddings = getattr(backbone, "embeddings", None)
    if layers is None or embeddings is None:
        raise MlirkitError(f"freeze_layers: {type(backbone).__name__} has no embeddings/encoder.layer")
    if n > len(layers):
        raise MlirkitError(f"freeze_layers: the backbone has only {len(layers)} layers, not {n}")
    for module in [embeddings, *layers[:n]]:
        for p in module.parameters():
            p.requires_grad_(False)


class _Forward(nn.Module):
    """One DDP forward over every segment of a micro-batch: inputs name -> (ids, mask)."""

    def __init__(self, model: DisentangledEncoder) -> None:
        super().__init__()
        self.model = model

    def forward(self, inputs: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, (ids, mask) in inputs.items():
            h, tokens = self.model.encode_hidden(ids, mask)  # (n, d), (n, L, d)
            out[name] = {"h": h, "tokens": tokens, "s": self.model.semantic_rep(h),
                         "l": self.model.language_rep(h)}
        return out


def load_checkpoint_file(path: Path, map_location: Any = None) -> Any:
    """Read a checkpoint file written by :meth:`Trainer.save_checkpoint` with ``torch.load(weights_only=True)``:
    tensors, numbers, strings and containers only, so a crafted file cannot run code; anything else is refused."""
    import pickle

    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MlirkitError(f"{path}: refused as a trainer checkpoint (only tensors and plain values are loaded, "
                           f"weights_only=True): {reason}") from None


def _numpy_rng_state() -> tuple[str, torch.Tensor, int, int, float]:
    """numpy's legacy RNG state with its key as a tensor, so the RNG file loads with ``weights_only=True``."""
    name, key, pos, has_gauss, cached = np.random.get_state()
    return name, torch.from_numpy(np.asarray(key, dtype=np.int64)), int(pos), int(has_gauss), float(cached)


def _set_numpy_rng_state(state: Any) -> None:
    name, key, pos, has_gauss, cached = state
    np.random.set_state((name, np.asarray(key.numpy() if isinstance(key, torch.Tensor) else key, dtype=np.uint32),
                         int(pos), int(has_gauss), float(cached)))


class Trainer:
    """Train a :class:`DisentangledEncoder` with the DCL objective (see the module docstring)."""

    def __init__(self, cfg: TrainConfig, model: DisentangledEncoder | None = None,
                 batches: Iterator[Batch] | None = None) -> None:
        self.cfg = cfg.validate()
        dev = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.rank, self.world = dd.init_distributed(torch.device(dev).type)
        if torch.device(dev).type == "cuda" and dd.is_distributed():
            dev = f"cuda:{dd.env_world()[1]}"
            torch.cuda.set_device(dev)
        self.device = torch.device(dev)
        self.out_dir = Path(cfg.output_dir)
        torch.manual_seed(cfg.seed)
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        if model is None:
            model = DisentangledEncoder.from_backbone(
                resolve_backbone(cfg.backbone), head_dim=cfg.head_dim, use_disentangler=cfg.use_disentangler,
                pooling=cfg.pooling, head_init=cfg.head_init, query_prefix=cfg.query_prefix,
                doc_prefix=cfg.doc_prefix, max_length=cfg.max_length, seed=cfg.seed)
        self.model = model.to(self.device)
        if cfg.freeze_word_embeddings:
            self.model.backbone.get_input_embeddings().weight.requires_grad_(False)
        if cfg.freeze_layers:
            freeze_bottom_layers(self.model.backbone, cfg.freeze_layers)
        if cfg.gradient_checkpointing:
            bb = self.model.backbone
            enable = getattr(bb, "activation_checkpointing_enable", None)
            if enable is not None:
                enable(activation_checkpointing_kwargs={"use_reentrant": False})
            else:
                bb.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.features = None  # a FeatureCache in the cached (train_top_layers) mode, set by prepare_features
        self.forward_module: nn.Module = _Forward(self.model)
        if cfg.train_top_layers is not None:
            from mlirkit.train.feature_cache import CachedForward, start_layer

            self.first_trained_layer = start_layer(self.model.backbone, cfg.train_top_layers)
            freeze_bottom_layers(self.model.backbone, self.first_trained_layer)
            self.forward_module = CachedForward(self.model, self.first_trained_layer)
        if dd.is_distributed():
            from torch.nn.parallel import DistributedDataParallel as DDP

            # DDP broadcasts rank 0's parameters at construction, so every process starts equal
            self.forward_module = DDP(self.forward_module, device_ids=[self.device.index] if self.device.type == "cuda" else None)
        self.objective = DCLObjective(
            loss_weights(cfg), tau_ret=cfg.tau_ret, tau_sent=cfg.tau_sent, tau_tok=cfg.tau_tok, tau_rho=cfg.tau_rho,
            tau_ldcl=cfg.tau_ldcl, top_k=cfg.top_k, in_batch_negatives=cfg.in_batch_negatives,
            ldcl_negatives=cfg.ldcl_negatives, consistency_pairing=cfg.consistency_pairing)
        self.optimizer = torch.optim.AdamW(self._param_groups(), lr=cfg.lr, **self._adamw_kernel())
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda(cfg))
        self.scaler = torch.amp.GradScaler("cuda") if (cfg.mixed_precision == "fp16" and self.device.type == "cuda") else None
        self.step = 0
        self._frozen_checked = False  # check_finite looks at the frozen weights once, then at the trained ones
        self.alignments = AlignmentCache(model_key=f"{cfg.backbone}|{cfg.max_length}")
        self._batches = batches

    # ----------------------------------------------------------------- set-up helpers
    def _adamw_kernel(self) -> dict[str, Any]:
        """AdamW's fused kernel where torch has one (CPU, CUDA): the same update as the default per-tensor loop up
        to float rounding, one pass over each tensor (on CPU the loop is ~6x slower: ``perf/train_step_speed.py``)."""
        return {"fused": True} if self.device.type in ("cpu", "cuda") else {}

    def _restore_adamw_kernel(self) -> None:
        """``load_state_dict`` takes each group's settings from the checkpoint: put the kernel back (a checkpoint of
        the per-tensor loop resumes fused), with each ``step`` counter where the fused kernel keeps it."""
        kernel = self._adamw_kernel()
        if not kernel:
            return
        for group in self.optimizer.param_groups:
            group.update(kernel, foreach=None)
            for p in group["params"]:
                st = self.optimizer.state.get(p)
                if st and torch.is_tensor(st.get("step")):
                    st["step"] = st["step"].to(device=p.device, dtype=torch.float32)

    def _param_groups(self) -> list[dict[str, Any]]:
        decay, no_decay, heads = [], [], []
        for name, p in self.model.named_parameters():
            if not p.requires_grad:
                continue
            if name.startswith(("semantic.", "language.")):
                heads.append(p)
            elif p.ndim < 2 or "LayerNorm" in name or "layer_norm" in name or name.endswith(".bias"):
                no_decay.append(p)
            else:
                decay.append(p)
        groups = [{"params": decay, "weight_decay": self.cfg.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        if heads:
            groups.append({"params": heads, "weight_decay": self.cfg.weight_decay,
                           "lr": self.cfg.head_lr or self.cfg.lr})
        return [g for g in groups if g["params"]]

    def make_batches(self) -> BatchComposer:
        c = self.cfg
        triples = (lambda: read_triples(c.triples)) if c.triples else None
        parallel = None
        if c.parallel:
            def parallel():
                for src in c.parallel:
                    yield from read_parallel(src, pivot=c.parallel_pivot, langs=c.parallel_langs,
                                             text_fields=c.parallel_text_field, alignments=c.parallel_alignments)
        mono = None
        if c.monolingual:
            def mono():
                for src in c.monolingual:
                    yield from read_monolingual(src)
        w = loss_weights(c)
        # L_LDCL contrasts items of different languages: without HSA it still needs the parallel and
        # monolingual items (the English retrieval items alone give it no negatives: a zero loss)
        need_par = w.sent_p or w.lambda_t or w.lambda_q or w.ldcl
        return BatchComposer(
            retrieval=triples if w.ret else None, parallel=parallel if need_par else None,
            monolingual=mono if (w.lambda_q or w.ldcl) else None, n_retrieval=c.n_retrieval, n_parallel=c.n_parallel,
            n_monolingual=c.n_monolingual, n_hard_negatives=c.n_hard_negatives, seed=c.seed,
            shuffle_buffer=c.shuffle_buffer, rank=self.rank, world_size=self.world)

    # ----------------------------------------------------------------- cached features
    def prepare_features(self, inputs=None, parallel=None) -> None:
        """Cached mode: build (or reuse) the feature cache of every model input of the configured data
        (or of ``inputs`` / ``parallel`` given as ``TextInput`` lists) and preload its alignments."""
        from mlirkit.train.feature_cache import build_feature_cache, training_inputs

        if self.cfg.train_top_layers is None:
            raise MlirkitError("prepare_features: only in the cached mode (set train_top_layers)")
        if inputs is None:
            inputs, parallel = training_inputs(self.cfg)
        root = self.cfg.feature_cache_dir or str(self.out_dir / "feature-cache")
        pairs = parallel if self.cfg.alignment == "mutual_argmax" else ()

        def build():
            return build_feature_cache(self.model, inputs, root, layer=self.first_trained_layer,
                                       dtype=self.cfg.feature_cache_dtype, parallel=pairs or (),
                                       alignment_key=self.alignments.model_key, show_progress=self.rank == 0)
        if self.rank == 0:
            self.features = build()
        dd.barrier()
        if self.rank != 0:
            self.features = build()
        cached = self.features.alignments()
        if cached is not None and cached.model_key == self.alignments.model_key:
            self.alignments.merge(cached)

    def _segment(self, texts: list[str], prefix: str, max_length: int, enc) -> tuple[torch.Tensor, torch.Tensor]:
        """Model inputs of one segment: (ids, mask), or (cached states, mask) in the cached mode."""
        dev = self.device
        mask = enc["attention_mask"]
        if self.cfg.train_top_layers is None:
            return enc["input_ids"].to(dev), mask.to(dev)
        from mlirkit.train.feature_cache import TextInput

        if self.features is None:
            raise MlirkitError("cached mode: call prepare_features() before computing losses")
        states = self.features.batch([TextInput(t, prefix, max_length) for t in texts], mask)
        return states.to(dev), mask.to(dev)

    # ----------------------------------------------------------------- one micro-batch
    def _tok(self, texts: list[str], prefix: str, max_length: int, offsets: bool = False):
        enc = self.model.tokenize(texts, prefix, max_length, offsets=offsets)
        return enc

    def compute_losses(self, batch: Batch, micro: int = 0) -> dict[str, torch.Tensor]:
        """Encode one micro-batch and return ``{loss name: value, "total": ...}``."""
        c = self.cfg
        sp = c.effective_sentence_prefix
        inputs: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        n_q = len(batch.retrieval)
        n_h = len(batch.retrieval[0].negatives) if n_q else 0
        if n_q:
            queries = [e.query for e in batch.retrieval]
            q = self._tok(queries, c.query_prefix, c.max_length)
            docs = [e.positive for e in batch.retrieval] + [n for e in batch.retrieval for n in e.negatives]
            d = self._tok(docs, c.doc_prefix, c.doc_max_length or c.max_length)
            inputs["q"] = self._segment(queries, c.query_prefix, c.max_length, q)
            inputs["d"] = self._segment(docs, c.doc_prefix, c.doc_max_length or c.max_length, d)
        n_p = len(batch.parallel)
        par_enc = None
        if n_p:
            par_texts = [p.src for p in batch.parallel] + [p.tgt for p in batch.parallel]
            par_enc = self._tok(par_texts, sp, c.max_length, offsets=True)
            inputs["p"] = self._segment(par_texts, sp, c.max_length, par_enc)
        n_m = len(batch.monolingual)
        mono_enc = None
        if n_m:
            mono_texts = [m.text for m in batch.monolingual]
            mono_enc = self._tok(mono_texts, sp, c.max_length, offsets=True)
            inputs["m"] = self._segment(mono_texts, sp, c.max_length, mono_enc)
        if not inputs:
            raise MlirkitError("empty batch: no retrieval, parallel or monolingual items")

        amp = (torch.autocast(self.device.type, dtype=torch.bfloat16 if c.mixed_precision == "bf16" else torch.float16)
               if c.mixed_precision != "no" and self.device.type == "cuda" else nullcontext())
        with amp:
            reps = self.forward_module(inputs)
        return self._losses_from_reps(batch, reps, par_enc, mono_enc, n_q, n_h, n_p, n_m, micro)

    def _losses_from_reps(self, batch: Batch, reps: dict[str, Any], par_enc, mono_enc, n_q: int, n_h: int,
                          n_p: int, n_m: int, micro: int) -> dict[str, torch.Tensor]:
        c = self.cfg
        gather = dd.gather if c.gather_across_processes else (lambda x: x)
        dim_r = self.model.retrieval_dim
        dim_h = self.model.config.head_dim if self.model.config.use_disentangler else self.model.config.hidden_dim
        empty = next(iter(reps.values()))["s"][:0]  # (0, d') attached to the graph
        empty = empty.float()
        zero_rows = lambda dim: empty.new_zeros((0, dim)) + empty.sum() * 0.0  # noqa: E731
        # retrieval
        if n_q:
            q = reps["q"]["s"].float()  # (B, d)
            d_all = reps["d"]["s"].float()  # (B + B*H, d)
            pos = gather(d_all[:n_q])  # (G, d)
            hard = gather(d_all[n_q:]).reshape(pos.shape[0], n_h, -1) if n_h else None  # (G, H, d)
            offset = self.rank * n_q if (c.gather_across_processes and dd.is_distributed()) else 0
        else:
            q, pos, hard, offset = zero_rows(dim_r), zero_rows(dim_r), None, 0
        # parallel pool and pairs
        if n_p:
            ps = reps["p"]["s"].float()  # (2P, d')
            src, tgt = gather(ps[:n_p]), gather(ps[n_p:])  # (Pg, d'), (Pg, d')
            s_par = torch.cat([src, tgt], 0)  # (2Pg, d')
            pg = src.shape[0]
            pairs = torch.stack([torch.arange(pg), torch.arange(pg) + pg], 1).to(s_par.device)  # (Pg, 2)
        else:
            s_par, pairs = zero_rows(dim_h), torch.zeros((0, 2), dtype=torch.long, device=self.device)
        s_mono = gather(reps["m"]["s"].float()) if n_m else zero_rows(dim_h)  # (Mg, d')
        # token level (per process)
        rng = random.Random(f"{c.seed}/{self.rank}/{self.step}/{micro}")
        w = loss_weights(c)
        if n_p and w.lambda_t:
            tok_u, tok_v = self._aligned_tokens(batch, reps["p"], par_enc, rng)
        else:
            tok_u = tok_v = zero_rows(dim_h)
        if n_m and w.lambda_t and w.lambda_q:
            tok_mono = self._mono_tokens(reps["m"], mono_enc, rng)
        else:
            tok_mono = zero_rows(dim_h)
        # all items: semantic / language reps and language labels
        zs, zl, labels = [], [], []
        for key, langs in (("q", [c.triples_lang] * n_q), ("d", [c.triples_lang] * (n_q * (1 + n_h))),
                           ("p", [p.src_lang for p in batch.parallel] + [p.tgt_lang for p in batch.parallel]),
                           ("m", [m.lang for m in batch.monolingual])):
            if key in reps:
                zs.append(reps[key]["s"].float())
                if reps[key]["l"] is not None:
                    zl.append(reps[key]["l"].float())
                labels += [lang_id(x) for x in langs]
        z_s = gather(torch.cat(zs, 0))  # (N, d')
        z_l = gather(torch.cat(zl, 0)) if zl else None  # (N, d')
        lab = torch.tensor(labels, dtype=torch.long, device=z_s.device)
        lab = dd.gather_labels(lab) if c.gather_across_processes else lab  # (N,)
        outputs = DCLOutputs(q=q, pos=pos, hard=hard, s_par=s_par, pairs=pairs, s_mono=s_mono, tok_u=tok_u,
                             tok_v=tok_v, tok_mono=tok_mono, z_s=z_s, z_l=z_l, labels=lab, query_offset=offset)
        return self.objective(outputs)

    def _aligned_tokens(self, batch: Batch, rp: dict[str, Any], enc, rng: random.Random) -> tuple[torch.Tensor, torch.Tensor]:
        """Semantic token reps (T, d') x 2 of the aligned token pairs of every parallel pair."""
        c = self.cfg
        n_p = len(batch.parallel)
        sp_len = len(c.effective_sentence_prefix)
        offsets = enc["offset_mapping"].tolist()
        special = enc["special_tokens_mask"].tolist()
        tokens = rp["tokens"].detach().float()  # (2P, L, d)
        index: list[tuple[int, int, int, int]] = []
        for k, pair in enumerate(batch.parallel):
            a, b = k, n_p + k
            src_in, tgt_in = c.effective_sentence_prefix + pair.src, c.effective_sentence_prefix + pair.tgt
            al = self.alignments.get(src_in, tgt_in)
            if al is None:
                if pair.alignment is not None:
                    al = map_word_alignment(pair.alignment,
                                            word_first_subwords(pair.src, offsets[a], sp_len, special[a]),
                                            word_first_subwords(pair.tgt, offsets[b], sp_len, special[b]))
                else:
                    sim = torch.nn.functional.normalize(tokens[a], dim=-1) @ torch.nn.functional.normalize(tokens[b], dim=-1).T
                    al = mutual_argmax_alignment(sim.cpu().numpy(), valid_token_mask(offsets[a], special[a], sp_len),
                                                 valid_token_mask(offsets[b], special[b], sp_len))
                self.alignments.put(src_in, tgt_in, al)
            index += [(a, i, b, j) for i, j in al]
        if c.max_token_pairs and len(index) > c.max_token_pairs:
            index = rng.sample(index, c.max_token_pairs)
        ts = self.model.semantic_rep(rp["tokens"]).float() if index else None  # (2P, L, d')
        if not index:
            dim = self.model.config.head_dim if self.model.config.use_disentangler else self.model.config.hidden_dim
            z = rp["s"].float()[:0] + rp["s"].float().sum() * 0.0
            return z.reshape(0, dim), z.reshape(0, dim)
        ia = torch.tensor([x[0] for x in index]); ii = torch.tensor([x[1] for x in index])  # noqa: E702
        ib = torch.tensor([x[2] for x in index]); ij = torch.tensor([x[3] for x in index])  # noqa: E702
        return ts[ia, ii], ts[ib, ij]  # (T, d'), (T, d')

    def _mono_tokens(self, rm: dict[str, Any], enc, rng: random.Random) -> torch.Tensor:
        sp_len = len(self.cfg.effective_sentence_prefix)
        offsets = enc["offset_mapping"].tolist()
        special = enc["special_tokens_mask"].tolist()
        index = [(k, i) for k in range(len(offsets))
                 for i, ok in enumerate(valid_token_mask(offsets[k], special[k], sp_len)) if ok]
        if self.cfg.max_mono_tokens and len(index) > self.cfg.max_mono_tokens:
            index = rng.sample(index, self.cfg.max_mono_tokens)
        ts = self.model.semantic_rep(rm["tokens"]).float()  # (M, L, d')
        if not index:
            return ts.reshape(-1, ts.shape[-1])[:0]
        return ts[torch.tensor([x[0] for x in index]), torch.tensor([x[1] for x in index])]  # (Mt, d')

    # ----------------------------------------------------------------- one optimiser step
    def train_step(self, micro_batches: list[Batch]) -> dict[str, float]:
        """Forward/backward over the micro-batches, clip, step; returns the mean of each loss."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        sums: dict[str, float] = {}
        n = len(micro_batches)
        for k, batch in enumerate(micro_batches):
            sync = k == n - 1 or not dd.is_distributed()
            ctx = self.forward_module.no_sync() if not sync else nullcontext()
            with ctx:
                losses = self.compute_losses(batch, micro=k)
                total = losses["total"] / n
                if self.scaler is not None:
                    self.scaler.scale(total).backward()
                else:
                    total.backward()
            for name, v in losses.items():
                sums[name] = sums.get(name, 0.0) + float(v.detach()) / n
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        params = [p for p in self.model.parameters() if p.requires_grad]
        if self.cfg.max_grad_norm > 0:
            sums["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(params, self.cfg.max_grad_norm))
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        logs = dd.mean_across(sums)
        logs["lr"] = self.scheduler.get_last_lr()[0]
        return logs

    # ----------------------------------------------------------------- the loop
    def train(self, *, resume: bool = False, overwrite: bool = False, show_progress: bool = True) -> Path:
        """Run to ``max_steps``; returns the final model directory ``output_dir/model``. A run that fails before
        its first checkpoint leaves ``output_dir`` as it found it (:class:`_Snapshot`)."""
        final = self.out_dir / FINAL_DIR
        if self.rank == 0:
            if not resume and not overwrite and (final.exists() or self.checkpoints()):
                raise MlirkitError(f"{self.out_dir} already holds a run (use {option('resume', True)} or "
                                   f"{option('overwrite', True)})")
        before = _Snapshot.take(self.out_dir) if self.rank == 0 else None
        try:
            return self._train(resume, overwrite, show_progress, final)
        except BaseException:
            if before is not None:
                before.undo_failed_start(self)
            raise

    def _train(self, resume: bool, overwrite: bool, show_progress: bool, final: Path) -> Path:
        from tqdm.auto import tqdm

        c = self.cfg
        if self.rank == 0:
            previous = self.previous_outputs()
            for path, kind in previous:  # every check before anything is removed
                refuse_existing(path, overwrite or resume, kind, probe=False)
            if overwrite and not resume:
                for p, _ in previous:
                    if p.name != CONFIG_FILE:
                        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink(missing_ok=True)
            self.out_dir.mkdir(parents=True, exist_ok=True)
            with atomic_file(self.out_dir / CONFIG_FILE, overwrite=True, kind="train-config") as f:
                f.write(c.to_json())
        dd.barrier()
        batches = self._batches if self._batches is not None else self.make_batches()
        if c.train_top_layers is not None and self.features is None:
            self.prepare_features()
        if resume:
            self.resume_latest()
            if isinstance(batches, BatchComposer):
                batches.skip(self.step * c.grad_accum)
        bar = tqdm(total=c.max_steps, initial=self.step, disable=not show_progress or self.rank != 0, desc="train")
        log_f = open(self.out_dir / LOG_FILE, "a", encoding="utf-8") if self.rank == 0 else None
        try:
            while self.step < c.max_steps:
                t0 = time.time()
                logs = self.train_step([next(batches) for _ in range(c.grad_accum)])
                self.check_finite(logs)
                logs["sec"] = time.time() - t0
                if self.rank == 0 and (self.step % c.log_every == 0 or self.step == c.max_steps):
                    log_f.write(json.dumps({"step": self.step, **logs}) + "\n")
                    log_f.flush()
                bar.update(1)
                bar.set_postfix(loss=f"{logs['total']:.4f}")
                if c.save_every and self.step % c.save_every == 0 and self.step < c.max_steps:
                    self.save_checkpoint()
        finally:
            bar.close()
            if log_f:
                log_f.close()
        if self.rank == 0:
            self.model.save(final, overwrite=True, extra_files={CONFIG_FILE: c.to_json()})
            logger.info("saved the trained model to %s", final)
        dd.barrier()
        return final

    def check_finite(self, logs: dict[str, float]) -> None:
        """Stop with one line when a loss (without a gradient scaler, which skips such steps itself) or a
        weight is NaN or infinite: nothing trained from there on is worth saving."""
        if self.scaler is None:
            for name, value in logs.items():
                if not math.isfinite(value):
                    raise MlirkitError(f"step {self.step}: loss {name!r} is {value} (lower lr, check the data); "
                                       "stopping without saving a model")
        # A frozen weight cannot change: every weight is checked once, then those that train. A NaN or inf
        # makes its tensor's sum NaN or inf, so a finite sum per tensor (one reduction, no mask) clears it;
        # a non-finite sum (or a sum of finite weights that overflows) sends every weight to the exact test.
        params = [p.detach() for p in self.model.parameters() if p.requires_grad or not self._frozen_checked]
        self._frozen_checked = True
        if params and not bool(torch.stack([p.sum(dtype=torch.float32) for p in params]).isfinite().all()):
            bad = next((n for n, p in self.model.named_parameters() if not bool(torch.isfinite(p).all())), None)
            if bad is not None:
                raise MlirkitError(f"step {self.step}: weight {bad!r} is no longer finite (lower lr or weight_decay); "
                                   "stopping without saving a model")

    def previous_outputs(self) -> list[tuple[Path, str]]:
        """What an earlier run left in ``output_dir`` (path, output kind): replaced only when mlirkit wrote it."""
        candidates = [(p, "checkpoint") for p in self.checkpoints()] + [
            (self.out_dir / FINAL_DIR, "dcl-model"), (self.out_dir / LOG_FILE, "train-log"),
            (self.out_dir / CONFIG_FILE, "train-config")]
        return [(p, kind) for p, kind in candidates if p.exists() or p.is_symlink()]

    # ----------------------------------------------------------------- checkpoints
    def checkpoints(self) -> list[Path]:
        if not self.out_dir.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.out_dir.iterdir() if (m := CHECKPOINT_RE.match(p.name)) and p.is_dir()]
        return [p for _, p in sorted(found)]

    def save_checkpoint(self) -> Path:
        """``output_dir/checkpoint-STEP/``: model dir, optimiser/scheduler state, RNG states, alignments."""
        from mlirkit.base.fs import atomic_directory

        path = self.out_dir / f"checkpoint-{self.step:07d}"
        self.out_dir.mkdir(parents=True, exist_ok=True)
        rng_state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": _numpy_rng_state(),
                     "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}
        # every process writes its RNG state beside the shared directory first, rank 0 then builds the dir
        rng_tmp = self.out_dir / f".rng-{self.step:07d}-rank{self.rank}.pt"
        torch.save(rng_state, rng_tmp)
        self.alignments.save(self.out_dir / f".align-{self.step:07d}-rank{self.rank}.json")
        dd.barrier()
        if self.rank == 0:
            with atomic_directory(path, overwrite=True, kind="checkpoint") as tmp:
                self.model.save(tmp / FINAL_DIR, overwrite=True, extra_files={CONFIG_FILE: self.cfg.to_json()})
                torch.save({"step": self.step, "optimizer": self.optimizer.state_dict(),
                            "scheduler": self.scheduler.state_dict(),
                            "scaler": self.scaler.state_dict() if self.scaler else None}, tmp / "trainer_state.pt")
                (tmp / CONFIG_FILE).write_text(self.cfg.to_json(), encoding="utf-8")
                for r in range(self.world):
                    os.replace(self.out_dir / f".rng-{self.step:07d}-rank{r}.pt", tmp / f"rng-rank{r}.pt")
                    os.replace(self.out_dir / f".align-{self.step:07d}-rank{r}.json", tmp / f"alignments-rank{r}.json")
            for old in self.checkpoints()[:-self.cfg.keep_checkpoints or None] if self.cfg.keep_checkpoints else []:
                shutil.rmtree(old, ignore_errors=True)
        dd.barrier()
        return path

    def resume_latest(self) -> None:
        """Restore the newest checkpoint (weights, optimiser, scheduler, step, RNG, alignments)."""
        ckpts = self.checkpoints()
        if not ckpts:
            logger.warning("no checkpoint in %s; starting from scratch", self.out_dir)
            return
        path = ckpts[-1]
        saved = DisentangledEncoder.load(path / FINAL_DIR)
        self.model.load_state_dict(saved.state_dict())
        state = load_checkpoint_file(path / "trainer_state.pt", map_location=self.device)
        self.optimizer.load_state_dict(state["optimizer"])
        self._restore_adamw_kernel()
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        self.step = int(state["step"])
        rng_file = path / f"rng-rank{self.rank}.pt"
        if rng_file.is_file():
            rng = load_checkpoint_file(rng_file)
            torch.set_rng_state(rng["torch"])
            random.setstate(rng["python"])
            _set_numpy_rng_state(rng["numpy"])
            if rng.get("cuda") is not None and torch.cuda.is_available():
                torch.cuda.set_rng_state_all(rng["cuda"])
        al_file = path / f"alignments-rank{self.rank}.json"
        if al_file.is_file():
            self.alignments = AlignmentCache.load(al_file)
        logger.info("resumed from %s at step %d", path, self.step)


class _Snapshot:
    """What ``output_dir`` held before a training run started, so that a run failing before its first
    checkpoint (missing data, a bad file, Ctrl-C) leaves nothing behind: the directories it created are
    removed; in a directory that existed, the entries it added (log, feature cache) are removed and the config
    and log it rewrote are put back as they were. Checkpoints and models (complete outputs, written
    atomically) are never removed: a run that wrote one keeps everything, for ``--resume``."""

    def __init__(self, out_dir: Path, created: list[Path], entries: set[str], files: dict[Path, bytes],
                 checkpoints: list[Path]) -> None:
        self.out_dir, self.created, self.entries, self.files = out_dir, created, entries, files
        self.checkpoints = checkpoints

    @classmethod
    def take(cls, out_dir: Path) -> "_Snapshot":
        created = []
        d = out_dir
        while not d.exists() and d != d.parent:
            created.append(d)  # deepest first
            d = d.parent
        entries = {p.name for p in out_dir.iterdir()} if out_dir.is_dir() else set()
        files = {p: p.read_bytes() for p in (out_dir / CONFIG_FILE, out_dir / LOG_FILE) if p.is_file()}
        checkpoints = sorted(out_dir.glob("checkpoint-*")) if out_dir.is_dir() else []
        return cls(out_dir, created, entries, files, checkpoints)

    def undo_failed_start(self, trainer: "Trainer") -> None:
        made = set(trainer.checkpoints()) - set(self.checkpoints)
        if made or (FINAL_DIR not in self.entries and (self.out_dir / FINAL_DIR).exists()):
            return
        if self.created:
            shutil.rmtree(self.created[-1], ignore_errors=True)  # the topmost directory this run made
            return
        for p in list(self.out_dir.iterdir()) if self.out_dir.is_dir() else []:
            if p.name not in self.entries:
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() and not p.is_symlink() else p.unlink(missing_ok=True)
        for path, content in self.files.items():
            if not path.is_file() or path.read_bytes() != content:
                path.write_bytes(content)


__all__ = ["FINAL_DIR", "Trainer", "load_checkpoint_file", "resolve_backbone"]
