"""Cached backbone features for CPU-sized DCL training: frozen-backbone and top-K-layers modes.

With ``train_top_layers = K`` (0 <= K <= n_layers), the embeddings and the bottom ``n_layers - K``
transformer layers are frozen, so their output ``H^{(n-K)}(x)`` (the hidden states after layer
``n - K``; ``H^{(n)}`` = the last hidden state for K = 0, the frozen backbone) is a fixed function of
the input text. It is computed once per distinct model input (prompt + text, token limit) in eval
mode (no dropout), stored on disk as one memory-mapped ``(tokens, d)`` matrix (fp16, bf16 or fp32) and
reused by every step, ablation variant and seed; training runs only the top K layers, the pooling and
the heads on it. The mutual-argmax token alignments of every parallel pair are computed in the same
pass (from the initial model's last-layer states) and stored beside it.

A cache directory is keyed by the fingerprint of what determines the states (tokenizer, the frozen
weights, the layer index, the dtype) and the hash of the set of inputs, so a changed model or data set
never reads a stale cache::

    <root>/<key>/meta.json         format, fingerprint, data hash, layer, dtype, hidden size, counts
                 states.bin        (n_tokens, d) rows, texts back to back (raw fp16 / bf16 / fp32)
                 offsets.npy       (n_texts + 1,) int64 row offsets, in the order of keys.json
                 keys.json         sha1 of (prompt + text, max_length) of each input
                 alignments.json   an AlignmentCache (mutual argmax), when parallel pairs were given

Equivalence: for a model in eval mode (or without dropout), training on the cached states gives the
losses and gradients of the uncached path with the same layers frozen, up to the storage precision
(``tests/train/test_feature_cache.py``).
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import torch
import torch.nn as nn

from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

FORMAT = "mlirkit-dcl-feature-cache"
FORMAT_VERSION = 1
DTYPES = {"float16": (np.float16, torch.float16), "bfloat16": (np.uint16, torch.bfloat16),
          "float32": (np.float32, torch.float32)}


@dataclass(frozen=True)
class TextInput:
    """One model input: ``prefix + text`` tokenised with truncation to ``max_length``."""

    text: str
    prefix: str
    max_length: int

    @property
    def key(self) -> str:
        return hashlib.sha1(f"{self.max_length}\0{self.prefix}{self.text}".encode("utf-8")).hexdigest()


def backbone_layers(backbone: nn.Module) -> nn.ModuleList:
    layers = getattr(getattr(backbone, "encoder", None), "layer", None)
    if layers is None or getattr(backbone, "embeddings", None) is None:
        raise MlirkitError(f"cached features: {type(backbone).__name__} has no embeddings/encoder.layer")
    return layers


def start_layer(backbone: nn.Module, top_layers: int) -> int:
    """Index of the first trained layer (= number of frozen layers) for ``top_layers`` trained ones."""
    n = len(backbone_layers(backbone))
    if not 0 <= top_layers <= n:
        raise MlirkitError(f"train_top_layers: must be between 0 and {n} (got {top_layers})")
    return n - top_layers


def frozen_fingerprint(model: Any, layer: int, dtype: str) -> str:
    """sha256 of what the states after ``layer`` depend on: tokenizer, embeddings, layers below, dtype."""
    h = hashlib.sha256(f"{FORMAT}/{FORMAT_VERSION}/{layer}/{dtype}/{model.config.pooling}".encode())
    tok = getattr(model.tokenizer, "backend_tokenizer", None)
    if tok is not None:  # without the per-call padding/truncation state a tokenize() call leaves in it
        spec = {k: v for k, v in json.loads(tok.to_str()).items() if k not in ("padding", "truncation")}
        h.update(json.dumps(spec, sort_keys=True).encode("utf-8"))
    else:
        h.update(repr(model.tokenizer).encode("utf-8"))
    bb = model.backbone
    h.update(repr(sorted(bb.config.to_dict().items(), key=lambda kv: kv[0])).encode("utf-8"))
    modules = [("embeddings", bb.embeddings)] + [(f"layer{i}", m) for i, m in enumerate(backbone_layers(bb)[:layer])]
    for prefix, module in modules:
        for name, t in sorted(module.state_dict().items()):
            h.update(f"{prefix}.{name}{tuple(t.shape)}".encode())
            h.update(memoryview(np.ascontiguousarray(t.detach().cpu().float().numpy())).cast("B"))
    return h.hexdigest()


def data_hash(inputs: Iterable[TextInput]) -> str:
    h = hashlib.sha256()
    for key in sorted({x.key for x in inputs}):
        h.update(key.encode())
    return h.hexdigest()


def _extended_mask(backbone: nn.Module, states: torch.Tensor, mask: torch.Tensor) -> Any:
    from transformers.masking_utils import create_bidirectional_mask

    return create_bidirectional_mask(config=backbone.config, inputs_embeds=states, attention_mask=mask)


def run_top_layers(backbone: nn.Module, states: torch.Tensor, mask: torch.Tensor, first: int) -> torch.Tensor:
    """Hidden states after layer ``first`` (n, L, d) -> the last hidden state, through layers ``first..``."""
    layers = backbone_layers(backbone)
    if first >= len(layers):
        return states
    ext = _extended_mask(backbone, states, mask)
    for layer in layers[first:]:
        out = layer(states, ext)
        states = out[0] if isinstance(out, tuple) else out
    return states


class FeatureCache:
    """A read-only view of one cache directory (see the module docstring)."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        meta_path = self.dir / "meta.json"
        if not meta_path.is_file():
            raise MlirkitError(f"{self.dir}: not a feature cache (no meta.json)")
        self.meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if self.meta.get("format") != FORMAT or self.meta.get("version") != FORMAT_VERSION:
            raise MlirkitError(f"{meta_path}: unsupported feature cache format {self.meta.get('format')!r}")
        np_dtype, self.torch_dtype = DTYPES[self.meta["dtype"]]
        self.hidden = int(self.meta["hidden"])
        self.layer = int(self.meta["layer"])
        self.offsets = np.load(self.dir / "offsets.npy")
        keys = json.loads((self.dir / "keys.json").read_text(encoding="utf-8"))
        self._row = {k: i for i, k in enumerate(keys)}
        n_tokens = int(self.offsets[-1])
        self.states = np.memmap(self.dir / "states.bin", dtype=np_dtype, mode="r", shape=(max(n_tokens, 1), self.hidden))

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, item: TextInput) -> bool:
        return item.key in self._row

    def get(self, item: TextInput) -> torch.Tensor:
        """(length, d) float32 states of one input."""
        i = self._row.get(item.key)
        if i is None:
            raise MlirkitError(f"feature cache {self.dir.name}: input not cached: {item.text[:60]!r}")
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        block = torch.from_numpy(np.array(self.states[a:b]))
        if self.meta["dtype"] == "bfloat16":
            block = block.view(torch.bfloat16)
        return block.float()

    def batch(self, items: Sequence[TextInput], mask: torch.Tensor) -> torch.Tensor:
        """States of ``items`` padded to ``mask``'s length (n, L, d); checks each length against the mask."""
        n, length = mask.shape
        out = torch.zeros(n, length, self.hidden)
        lens = mask.sum(1).tolist()
        for k, item in enumerate(items):
            block = self.get(item)
            if block.shape[0] != int(lens[k]):
                raise MlirkitError(f"feature cache {self.dir.name}: {block.shape[0]} cached tokens but "
                                   f"{int(lens[k])} in the batch for {item.text[:60]!r} (stale cache?)")
            out[k, : block.shape[0]] = block
        return out

    def alignments(self) -> Any:
        from mlirkit.train.alignment import AlignmentCache

        path = self.dir / "alignments.json"
        return AlignmentCache.load(path) if path.is_file() else None


@torch.no_grad()
def build_feature_cache(model: Any, inputs: Sequence[TextInput], root: str | Path, *, layer: int,
                        dtype: str = "float16", batch_size: int = 32,
                        parallel: Sequence[tuple[TextInput, TextInput]] = (), alignment_key: str = "",
                        show_progress: bool = False) -> FeatureCache:
    """Compute (or reuse) the cache of the states after ``layer`` for ``inputs``; returns it.

    ``parallel``: (source, target) inputs whose mutual-argmax alignments are computed from the
    last-layer states of the same pass and stored (keyed like the trainer's ``AlignmentCache``).
    """
    from tqdm.auto import tqdm

    from mlirkit.base.fs import atomic_directory
    from mlirkit.train.alignment import AlignmentCache, mutual_argmax_alignment, valid_token_mask

    if dtype not in DTYPES:
        raise MlirkitError(f"feature cache dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    unique = list({x.key: x for x in list(inputs) + [t for p in parallel for t in p]}.values())
    key = hashlib.sha256(f"{frozen_fingerprint(model, layer, dtype)}/{data_hash(unique)}".encode()).hexdigest()[:24]
    directory = Path(root) / key
    if (directory / "meta.json").is_file():
        logger.info("feature cache %s: reusing %s", key, directory)
        return FeatureCache(directory)
    np_dtype, t_dtype = DTYPES[dtype]
    hidden = int(model.backbone.config.hidden_size)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    order = sorted(range(len(unique)), key=lambda i: -(len(unique[i].prefix) + len(unique[i].text)))
    blocks: dict[str, np.ndarray] = {}
    last: dict[str, tuple[torch.Tensor, list[bool]]] = {}
    want_last = {t.key for p in parallel for t in p}
    try:
        groups: dict[tuple[str, int], list[int]] = {}
        for i in order:
            groups.setdefault((unique[i].prefix, unique[i].max_length), []).append(i)
        bar = tqdm(total=len(unique), disable=not show_progress, desc=f"cache layer {layer}")
        for (prefix, max_length), idx in groups.items():
            for s in range(0, len(idx), batch_size):
                chunk = idx[s:s + batch_size]
                enc = model.tokenize([unique[i].text for i in chunk], prefix, max_length,
                                     offsets=bool(want_last))
                ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
                out = model.backbone(input_ids=ids, attention_mask=mask, output_hidden_states=True)
                states = out.hidden_states[layer].float().cpu()  # (n, L, d)
                final = out.last_hidden_state.float().cpu()  # (n, L, d)
                lens = mask.sum(1).tolist()
                for k, i in enumerate(chunk):
                    n_tok = int(lens[k])
                    x = states[k, :n_tok].to(t_dtype)
                    blocks[unique[i].key] = (x.view(torch.uint16) if dtype == "bfloat16" else x).numpy()
                    if unique[i].key in want_last:
                        valid = valid_token_mask(enc["offset_mapping"][k].tolist(),
                                                 enc["special_tokens_mask"][k].tolist(), len(prefix))
                        last[unique[i].key] = (final[k], valid)
                bar.update(len(chunk))
        bar.close()
    finally:
        model.train(was_training)
    keys = [x.key for x in unique]
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([blocks[k].shape[0] for k in keys])
    with atomic_directory(directory, overwrite=True) as tmp:
        mm = np.memmap(tmp / "states.bin", dtype=np_dtype, mode="w+", shape=(max(int(offsets[-1]), 1), hidden))
        for i, k in enumerate(keys):
            mm[offsets[i]:offsets[i + 1]] = blocks[k]
        mm.flush()
        del mm
        np.save(tmp / "offsets.npy", offsets)
        (tmp / "keys.json").write_text(json.dumps(keys), encoding="utf-8")
        if parallel:
            cache = AlignmentCache(model_key=alignment_key)
            for src, tgt in parallel:
                (a, va), (b, vb) = last[src.key], last[tgt.key]
                sim = torch.nn.functional.normalize(a, dim=-1) @ torch.nn.functional.normalize(b, dim=-1).T
                cache.put(src.prefix + src.text, tgt.prefix + tgt.text, mutual_argmax_alignment(sim.numpy(), va, vb))
            cache.save(tmp / "alignments.json")
        meta = {"format": FORMAT, "version": FORMAT_VERSION, "layer": layer, "dtype": dtype, "hidden": hidden,
                "texts": len(keys), "tokens": int(offsets[-1]), "parallel_pairs": len(parallel),
                "fingerprint": frozen_fingerprint(model, layer, dtype), "data_hash": data_hash(unique)}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    logger.info("feature cache %s: %d inputs, %d tokens, layer %d, %s", key, len(keys), int(offsets[-1]), layer, dtype)
    return FeatureCache(directory)


class CachedForward(nn.Module):
    """The trainer's forward on cached states: inputs name -> (states (n, L, d), mask) -> reps.

    Runs the backbone layers from ``first`` on (none for the frozen backbone), pools and applies the heads.
    """

    def __init__(self, model: Any, first: int) -> None:
        super().__init__()
        self.model, self.first = model, first

    def forward(self, inputs: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, Any]:
        from mlirkit.encoders.dcl_model import pool

        out: dict[str, Any] = {}
        for name, (states, mask) in inputs.items():
            tokens = run_top_layers(self.model.backbone, states, mask, self.first)  # (n, L, d)
            h = pool(tokens, mask, self.model.config.pooling)  # (n, d)
            out[name] = {"h": h, "tokens": tokens, "s": self.model.semantic_rep(h), "l": self.model.language_rep(h)}
        return out


@torch.no_grad()
def embed_cached(model: Any, cache: FeatureCache, texts: Sequence[str], *, side: str = "doc",
                 max_length: int | None = None, batch_size: int = 64, normalize: bool = True) -> np.ndarray:
    """Retrieval embeddings ``r(x)`` of ``texts`` from cached states (float32, (n, d)); equals
    ``model.embed`` up to the cache's storage precision."""
    import torch.nn.functional as F

    prefix = model.config.query_prefix if side == "query" else model.config.doc_prefix
    max_length = max_length or model.config.max_length
    was_training = model.training
    model.eval()
    fwd = CachedForward(model, cache.layer)
    out = np.zeros((len(texts), model.retrieval_dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    try:
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            items = [TextInput(texts[i], prefix, max_length) for i in idx]
            states, mask = pad_blocks([cache.get(x) for x in items], cache.hidden)
            r = fwd({"x": (states, mask)})["x"]["s"].float()
            if normalize:
                r = F.normalize(r, dim=-1)
            out[idx] = r.numpy()
    finally:
        model.train(was_training)
    return out



def pad_blocks(blocks: list, hidden: int) -> tuple:
    """Cached per-text state blocks (L_i, d) -> right-padded states (n, L, d) and attention mask (n, L)."""
    import torch

    length = max(b.shape[0] for b in blocks)
    states = torch.zeros(len(blocks), length, hidden)  # (n, L, d)
    mask = torch.zeros(len(blocks), length, dtype=torch.long)  # (n, L)
    for k, b in enumerate(blocks):
        states[k, : b.shape[0]] = b
        mask[k, : b.shape[0]] = 1
    return states, mask

def training_inputs(cfg: Any) -> tuple[list[TextInput], list[tuple[TextInput, TextInput]]]:
    """Every model input the configured data can produce, and the parallel pairs (as inputs).

    All configured sources are included whatever the loss switches, so every ablation variant of one
    data set shares one cache: queries (query prompt, ``max_length``), positives and every negative
    (document prompt, ``doc_max_length``), both sides of every parallel pair and every monolingual
    sentence (sentence prompt, ``max_length``).
    """
    from mlirkit.train.data import read_monolingual, read_parallel, read_triples

    sp, ml = cfg.effective_sentence_prefix, cfg.max_length
    dl = cfg.doc_max_length or cfg.max_length
    inputs: list[TextInput] = []
    if cfg.triples:
        for ex in read_triples(cfg.triples):
            inputs.append(TextInput(ex.query, cfg.query_prefix, ml))
            inputs += [TextInput(t, cfg.doc_prefix, dl) for t in (ex.positive, *ex.negatives)]
    pairs: list[tuple[TextInput, TextInput]] = []
    for src in cfg.parallel:
        for p in read_parallel(src, pivot=cfg.parallel_pivot, langs=cfg.parallel_langs,
                               text_fields=cfg.parallel_text_field, alignments=cfg.parallel_alignments):
            a, b = TextInput(p.src, sp, ml), TextInput(p.tgt, sp, ml)
            inputs += [a, b]
            if p.alignment is None:
                pairs.append((a, b))
    for src in cfg.monolingual:
        inputs += [TextInput(m.text, sp, ml) for m in read_monolingual(src)]
    return inputs, pairs


__all__ = ["CachedForward", "FeatureCache", "TextInput", "build_feature_cache", "embed_cached", "pad_blocks",
           "start_layer", "training_inputs"]
