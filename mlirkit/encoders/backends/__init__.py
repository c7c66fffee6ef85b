"""Inference backends of the ``hf`` encoder, named as sentence-transformers names them.

A backend runs the transformer ``H = f(input_ids, attention_mask)`` (B, L, d); tokenising, batching,
pooling and normalisation stay in :mod:`mlirkit.encoders.hf`, so every backend produces the same
formula and only the arithmetic differs:

- ``torch``: the Hugging Face model itself (``dtype`` float32/bfloat16/float16, optional dynamic int8);
- ``openvino``: the model converted once with ``openvino.convert_model`` (fp32 IR, dynamic shapes),
  compiled with ``INFERENCE_PRECISION_HINT`` fp32 or bf16 and ``INFERENCE_NUM_THREADS``;
- ``onnx``: the model exported once with ``torch.onnx.export`` (dynamic axes), run by ONNX Runtime (fp32).

``auto`` picks OpenVINO on the CPU when it is installed and the model runs in float32 without
quantisation, else torch (CUDA, MPS, bfloat16/float16 weights, int8). OpenVINO precision ``auto`` is
bf16 when the CPU computes bf16 natively (``avx512_bf16`` or ``amx_bf16`` in ``/proc/cpuinfo``) and
fp32 otherwise. The fp32 and bf16 paths agree with torch fp32 to a cosine of at least 0.9999 (table
and command in docs/encoders.md); indexes built by one of them are searchable by the others, see
:data:`mlirkit.encoders.base.RUNTIME_FIELDS`.

The registry maps names to ``"module:function"``; nothing heavy is imported until a backend loads.
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
import os
from functools import lru_cache
from typing import Any, Callable

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry

logger = logging.getLogger(__name__)

#: backend name -> "module:function" building a runner ``(input_ids, attention_mask) -> (B, L, d)``
BACKENDS: Registry[str] = Registry("backend")
BACKENDS.register("torch", "mlirkit.encoders.backends.torch:load_runner")
BACKENDS.register("openvino", "mlirkit.encoders.backends.openvino:load_runner")
BACKENDS.register("onnx", "mlirkit.encoders.backends.onnx:load_runner")

BACKEND_CHOICES = ("auto", "torch", "openvino", "onnx")
PRECISIONS = ("auto", "fp32", "bf16")
#: precisions each backend can run (torch's precision is its ``dtype`` option)
BACKEND_PRECISIONS = {"torch": ("fp32",), "openvino": ("fp32", "bf16"), "onnx": ("fp32",)}
#: the Python package each backend needs
BACKEND_PACKAGES = {"torch": "torch", "openvino": "openvino", "onnx": "onnxruntime"}
#: environment variable naming the backend used when none is given (default: auto)
BACKEND_ENV = "MLIRKIT_BACKEND"

Runner = Callable[[Any, Any], Any]


@lru_cache(maxsize=None)
def cpu_supports_bf16() -> bool:
    """True when the CPU computes bf16 natively (x86 ``avx512_bf16`` or ``amx_bf16`` flags)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def installed(backend: str) -> bool:
    return importlib.util.find_spec(BACKEND_PACKAGES[backend]) is not None


def default_backend() -> str:
    """``$MLIRKIT_BACKEND`` or ``auto``."""
    return os.environ.get(BACKEND_ENV) or "auto"


def resolve_backend(backend: str | None, precision: str | None, *, device_type: str, dtype: str,
                    quantize: str | None) -> tuple[str, str]:
    """``(backend, precision)`` actually used; refuses combinations a backend cannot run."""
    backend = backend or default_backend()
    precision = precision or "auto"
    if backend not in BACKEND_CHOICES:
        raise MlirkitError(f"unknown backend {backend!r}; choose one of {', '.join(BACKEND_CHOICES)}")
    if precision not in PRECISIONS:
        raise MlirkitError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if backend == "auto":
        if device_type == "cpu" and dtype == "float32" and not quantize and installed("openvino"):
            backend = "openvino"
        else:
            backend = "torch"
            if precision == "bf16":
                raise MlirkitError("precision bf16 needs the openvino backend (torch's is dtype='bfloat16')")
        logger.debug("backend auto -> %s", backend)
    if backend != "torch":
        if device_type != "cpu":
            raise MlirkitError(f"the {backend} backend runs on the CPU only (device {device_type!r}); use backend='torch'")
        if dtype != "float32":
            raise MlirkitError(f"the {backend} backend converts the float32 model (dtype {dtype!r} is torch's); "
                               f"use precision= for openvino")
        if quantize:
            raise MlirkitError(f"quantize={quantize!r} is torch dynamic quantisation; use backend='torch'")
        if not installed(backend):
            raise MlirkitError(f"the {backend} backend needs the {BACKEND_PACKAGES[backend]!r} package "
                               f"(pip install {BACKEND_PACKAGES[backend]})")
    if precision == "auto":
        precision = "bf16" if backend == "openvino" and cpu_supports_bf16() else "fp32"
    if precision not in BACKEND_PRECISIONS[backend]:
        hint = " (torch's bf16 is dtype='bfloat16')" if backend == "torch" else ""
        raise MlirkitError(f"the {backend} backend has no precision {precision!r}; "
                           f"choose {', '.join(BACKEND_PRECISIONS[backend])}{hint}")
    return backend, precision


def load_runner(backend: str, **kwargs: Any) -> Runner:
    """Build the runner of ``backend`` (see each module's ``load_runner``)."""
    module, _, attr = BACKENDS.get(backend).partition(":")
    return getattr(importlib.import_module(module), attr)(**kwargs)


__all__ = ["BACKENDS", "BACKEND_CHOICES", "BACKEND_ENV", "PRECISIONS", "cpu_supports_bf16",
           "default_backend", "installed", "load_runner", "resolve_backend"]
