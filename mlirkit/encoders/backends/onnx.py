"""``onnx`` backend: the model exported once with ``torch.onnx.export`` (TorchScript exporter, opset 17,
dynamic batch and length axes, float32) and run by ONNX Runtime's CPU provider with
``intra_op_num_threads`` = threads.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

from mlirkit.encoders.backends.conversion import converted_path

logger = logging.getLogger(__name__)

FORMAT = 1
OPSET = 17


def convert(model: Any, pad_id: int, directory: Path) -> None:
    import warnings

    import torch

    from mlirkit.encoders.backends.export import example_inputs, hidden_states_module

    axes = {0: "batch", 1: "length"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(hidden_states_module(model), example_inputs(pad_id), str(directory / "model.onnx"),
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
                          opset_version=OPSET, dynamo=False)


def load_runner(*, load_model: Callable[[], Any], key: dict[str, Any], pad_id: int, precision: str = "fp32",
                threads: int | None = None, **_: Any):
    """``(input_ids, attention_mask) -> last_hidden_state`` (B, L, d) computed by ONNX Runtime."""
    import onnxruntime as ort
    import torch

    key = {**key, "backend": "onnx", "runtime": f"torch {torch.__version__.split('+')[0]} opset {OPSET}",
           "format": FORMAT}
    path = converted_path("onnx", key, "model.onnx", lambda d: convert(load_model(), pad_id, d))
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def run(input_ids, attention_mask):
        out = session.run(None, {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()})[0]
        return torch.from_numpy(out)

    return run


__all__ = ["load_runner"]
