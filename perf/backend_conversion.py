"""One-off conversion cost of the OpenVINO and ONNX Runtime backends: the preset loaded twice per backend.

The first load converts the model into the cache (wall s and CPU s of this process), the second reuses
it. Run with an empty cache (figures in docs/performance.md, "Encoding backends and batched queries")::

    MLIRKIT_CACHE=$(mktemp -d) .venv/bin/python -m perf.backend_conversion
"""
from __future__ import annotations

import logging
import sys
import time


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from mlirkit.encoders import load_encoder

    start = time.perf_counter()
    load_encoder("multilingual-e5-small-q4", backend="torch")
    print(f"e5 q4 directory build + torch load: {time.perf_counter() - start:.1f} s", flush=True)
    for backend in ("openvino", "onnx"):
        for what in ("first load (conversion)", "second load (cached)"):
            start, cpu = time.perf_counter(), time.process_time()
            load_encoder("multilingual-e5-small-q4", backend=backend)
            print(f"{backend}: {what} {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} CPU s",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
