"""``openvino`` backend: the model converted once to OpenVINO IR (fp32 weights, dynamic batch and length),
compiled for the CPU with ``INFERENCE_PRECISION_HINT`` (f32 or bf16) and ``INFERENCE_NUM_THREADS``.

Conversion: ``openvino.convert_model`` traces :func:`mlirkit.encoders.backends.export.hidden_states_module`
on a padded example batch; ``save_model(compress_to_fp16=False)`` keeps the float32 weights (the bf16
hint only changes the arithmetic, as oneDNN's AMX/AVX512-BF16 kernels do it).

OpenVINO's converter sends usage telemetry (Google Analytics, from a forked process) unless the user opted
out; mlirkit converts with telemetry off (:func:`telemetry_off`): it sends nothing anywhere, and on an
offline machine the forked sender can hang in ``getaddrinfo``, and the interpreter then waits for it at exit.
"""
from __future__ import annotations

import importlib
import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from mlirkit.encoders.backends.conversion import converted_path

logger = logging.getLogger(__name__)

FORMAT = 1
#: the converter's modules that bind ``tm`` (the telemetry module) at import
_TELEMETRY_USERS = ("openvino.tools.ovc", "openvino.tools.ovc.telemetry_utils", "openvino.tools.ovc.convert_impl",
                    "openvino.tools.ovc.utils")


@contextmanager
def telemetry_off() -> Iterator[None]:
    """Within the block, the converter's telemetry is OpenVINO's own no-op stub, the one it uses when the
    ``openvino_telemetry`` package is absent: hidden while the converter is first imported (its package
    sends an event at import), swapped in where it was bound before; restored afterwards."""
    absent = object()
    hidden = sys.modules.get("openvino_telemetry", absent)
    sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]  (import -> ImportError -> the stub)
    saved = []
    try:
        stub = importlib.import_module("openvino.tools.ovc.telemetry_stub")
        for name in _TELEMETRY_USERS:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            if vars(module).get("tm") not in (None, stub):
                saved.append((module, module.tm))
                module.tm = stub
        yield
    finally:
        for module, tm in saved:
            module.tm = tm
        if hidden is absent:
            sys.modules.pop("openvino_telemetry", None)
        else:
            sys.modules["openvino_telemetry"] = hidden  # type: ignore[assignment]


def convert(model: Any, pad_id: int, directory: Path) -> None:
    """Trace and save. The tracer warns about transformers' data-dependent mask branches; the padded
    example takes the masked path, which is also exact for unpadded batches (tested at batch size 1)."""
    import warnings

    import openvino as ov
    import torch

    from mlirkit.encoders.backends.export import example_inputs, hidden_states_module

    with torch.no_grad(), warnings.catch_warnings(), telemetry_off():
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


__all__ = ["convert", "load_runner"]
