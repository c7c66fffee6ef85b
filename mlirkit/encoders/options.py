"""Encoder options shared by every CLI that builds an encoder (encode, search, shift fit, ...)."""
from __future__ import annotations

import argparse
from typing import Any

from mlirkit.encoders import DEFAULT_ENCODER, ENCODER_CLASSES
from mlirkit.encoders.backends import BACKEND_CHOICES, BACKEND_ENV, PRECISIONS
from mlirkit.encoders.hf import DTYPES, QUANTIZE
from mlirkit.encoders.prefixes import POOLINGS
from mlirkit.base.options import non_negative_int, positive_int

OPTION_NAMES = ("batch_size", "max_length", "pooling", "normalize", "query_prefix", "doc_prefix",
                "device", "dtype", "quantize", "threads", "family", "trust_remote_code", "backend", "precision")


def add_encoder_args(parser: argparse.ArgumentParser, *, required: bool = False, default: str | None = DEFAULT_ENCODER) -> None:
    g = parser.add_argument_group("encoder")
    g.add_argument("--encoder", required=required, default=None if required else default,
                   help="preset name, Hugging Face model id or local path (default: "
                        f"{default if default is not None else 'the one recorded in the index'})")
    g.add_argument("--encoder-class", choices=ENCODER_CLASSES.names(), default=None,
                   help="encoder class; default: the preset's, 'dcl' for a DCL directory, else 'hf'")
    g.add_argument("--batch-size", type=positive_int, default=None, help="texts per forward pass")
    g.add_argument("--max-length", type=positive_int, default=None, help="maximum tokens per text")
    g.add_argument("--pooling", choices=POOLINGS, default=None, help="override the model family's pooling")
    g.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=None,
                   help="L2-normalise encoder outputs (default: the model family's)")
    g.add_argument("--query-prefix", default=None, help="override the model family's query prefix")
    g.add_argument("--doc-prefix", default=None, help="override the model family's document prefix")
    g.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ... (default: auto)")
    g.add_argument("--dtype", choices=DTYPES, default=None, help="model weights dtype (hf; default float32)")
    g.add_argument("--quantize", choices=QUANTIZE, default=None,
                   help="dynamic quantisation of the linear layers (hf, CPU; changes vectors, see docs/encoders.md)")
    g.add_argument("--threads", type=non_negative_int, default=None, help="CPU threads for encoding and FAISS")
    g.add_argument("--family", default=None,
                   help="model family of an hf model that does not say (mlirkit.encoders.prefixes: "
                        "multilingual-e5, bge-m3, qwen3-embedding, ...; 'none': mean pooling, no prompts, "
                        "no normalisation)")
    g.add_argument("--trust-remote-code", action="store_true", default=None,
                   help="let transformers / sentence-transformers run the model's own code "
                        "(gte-Qwen2, llama-nemotron-embed)")
    g.add_argument("--backend", choices=BACKEND_CHOICES, default=None,
                   help=f"what runs the hf model: torch, openvino, onnx (ONNX Runtime) or auto = openvino on the "
                        f"CPU, torch elsewhere (default: ${BACKEND_ENV} or auto; see docs/encoders.md)")
    g.add_argument("--precision", choices=PRECISIONS, default=None,
                   help="openvino arithmetic: fp32, bf16, or auto = bf16 where the CPU has it natively (default auto)")


def encoder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The encoder options given on the command line (None = use the default)."""
    return {name: getattr(args, name, None) for name in OPTION_NAMES if getattr(args, name, None) is not None}


def encoder_from_args(args: argparse.Namespace, name: str | None = None):
    """The encoder a CLI's options name; the process is set up for encoding (:func:`~mlirkit.encoders.hf.pin_malloc_threshold`)."""
    from mlirkit.encoders import load_encoder
    from mlirkit.encoders.hf import pin_malloc_threshold

    pin_malloc_threshold()
    return load_encoder(name or args.encoder, args.encoder_class, **encoder_options(args))
