"""``openvino`` backend: the model converted once to OpenVINO IR (fp32 weights, dynamic batch and length),
compiled for the CPU with ``INFERENCE_PRECISION_HINT`` (f32 or bf16) and ``INFERENCE_NUM_THREADS``.

Conversion: ``openvino.convert_model`` traces :func:`mlirkit.encoders.backends.export.hidden_states_module`
on a padded example batch; ``save_model(compress_to_fp16=False)`` keeps the float32 weights (the bf16
hint only changes the arithmetic, as oneDNN's AMX/AVX512-BF16 kernels do it).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

from mlirkit.encoders.backends.conversion import converted_path

logger = logging.getLogger(__name__)

FORMAT = 1


def convert(model: Any, pad_id: int, directory: Path) -> None:
    """Trace and save. The tracer warns about transformers' data-dependent mask branches; the padded
    example takes the masked path, which is also exact for unpadded batches (tested at batch size 1)."""
    import warnings

    import openvino as ov
    import torch

    from mlirkit.encoders.backends.export import example_inputs, hidden_states_module

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ov_model = ov.convert_model(hidden_states_module(model), example_input=example_inputs(pad_id))
    ov.save_model(ov_model, str(directory / "model.xml"), compress_to_fp16=False)


def load_runner(*, load_model: Callable[[], Any], key: dict[str, Any], pad_id: int, precision: str = "fp32",
                threads: int | None = None, **_: Any):
    """``(input_ids, attention_mask) -> last_hidden_state`` (B, L, d) computed by OpenVINO on the CPU."""
    import openvino as ov
    import torch

    key = {**key, "backend": "openvino", "runtime": f"openvino {ov.__version__}", "format": FORMAT}
    xml = converted_path("openvino", key, "model.xml", lambda d: convert(load_model(), pad_id, d))
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32",
                              "PERFORMANCE_HINT": "LATENCY"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = int(threads)
    compiled = ov.Core().compile_model(str(xml), "CPU", config)
    request = compiled.create_infer_request()
    logger.debug("openvino model %s compiled with %s", xml, config)

    def run(input_ids, attention_mask):
        out = request.infer([input_ids.numpy(), attention_mask.numpy()])[0]
        return torch.from_numpy(out)

    run.compiled = compiled  # type: ignore[attr-defined]  (for inspection: properties, threads)
    return run
