"""The matrix-multiply limit of a BERT-style encoder at its own GEMM shapes, on this machine, now.

One transformer layer of e5-small (hidden ``d`` = 384, feed-forward ``f`` = 1536) does, per batch of
``T`` tokens, six dense products: Q, K, V and the attention output (``T x d @ d x d``), the
feed-forward up (``T x d @ d x f``) and down (``T x f @ f x d``): ``2 T (4 d^2 + 2 d f)`` FLOPs.
This script times exactly that chain, ``layers`` times (random weights scaled by ``1/sqrt(k)`` so
the values stay in range), with the library a backend computes with:

- ``torch``: ``torch.matmul`` in float32 or bfloat16 on ``threads`` intra-op threads;
- ``openvino``: an OpenVINO model of the same MatMul chain compiled for the CPU with
  ``INFERENCE_PRECISION_HINT`` f32 or bf16 and ``INFERENCE_NUM_THREADS`` (what mlirkit's default
  backend compiles the encoder with).

The reported limit is ``FLOPs / best wall time`` over ``repeats`` runs (after one warm-up) for each
token count ``T``. Used by :mod:`perf.encode_speed` (``--limit``), which alternates it with the
encoders in one run, since on a shared machine a limit measured at another time means nothing.

Run alone::

    .venv/bin/python -m perf.gemm_limit --threads 2 --tokens 512 4096
"""
from __future__ import annotations

import argparse
import json
import sys
import time

D, FFN, LAYERS = 384, 1536, 12
#: (k, n) of the six products of one layer, in order: Q, K, V, attention output, FFN up, FFN down
SHAPES = [(D, D)] * 4 + [(D, FFN), (FFN, D)]


def layer_flops(tokens: int, d: int = D, ffn: int = FFN) -> int:
    """Dense-product FLOPs of one layer for ``tokens`` tokens: ``2 T (4 d^2 + 2 d f)``."""
    return 2 * tokens * (4 * d * d + 2 * d * ffn)


def _shapes(d: int, ffn: int) -> list[tuple[int, int]]:
    return [(d, d)] * 4 + [(d, ffn), (ffn, d)]


def torch_chain(tokens: int, precision: str, threads: int, layers: int, d: int, ffn: int):
    """-> a callable running the chain once in torch."""
    import torch

    torch.set_num_threads(threads)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    gen = torch.Generator().manual_seed(0)
    weights = [torch.randn(k, n, generator=gen).div_(k ** 0.5).to(dtype)
               for _ in range(layers) for k, n in _shapes(d, ffn)]
    x0 = torch.randn(tokens, d, generator=gen).to(dtype)

    def run():
        with torch.inference_mode():
            x = x0
            for w in weights:
                x = torch.matmul(x, w)
            return x

    return run


def openvino_chain(tokens: int, precision: str, threads: int, layers: int, d: int, ffn: int):
    """-> a callable running the chain once as a compiled OpenVINO model."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    param = ops.parameter([tokens, d], np.float32, name="x")
    x = param
    for _ in range(layers):
        for k, n in _shapes(d, ffn):
            w = (rng.standard_normal((k, n)) / k ** 0.5).astype(np.float32)
            x = ops.matmul(x, ops.constant(w), False, False)
    model = ov.Model([x], [param], "gemm_chain")
    config = {"INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32",
              "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": int(threads)}
    request = ov.Core().compile_model(model, "CPU", config).create_infer_request()
    x0 = rng.standard_normal((tokens, d)).astype(np.float32)

    def run():
        return request.infer([x0])

    return run


CHAINS = {"torch": torch_chain, "openvino": openvino_chain}


def measure(library: str, precision: str, tokens: int, *, threads: int = 2, repeats: int = 5,
            layers: int = LAYERS, d: int = D, ffn: int = FFN) -> dict:
    """Best-of-``repeats`` GFLOP/s of the layer chain at ``tokens`` tokens."""
    run = CHAINS[library](tokens, precision, threads, layers, d, ffn)
    run()  # warm-up (kernel selection, weight repacking)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    flops = layers * layer_flops(tokens, d, ffn)
    return {"library": library, "precision": precision, "tokens": tokens, "threads": threads,
            "seconds": best, "gflops": flops / best / 1e9}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tokens", type=int, nargs="+", default=[512, 4096], help="tokens per batch (T)")
    p.add_argument("--libraries", nargs="+", default=["torch", "openvino"], choices=sorted(CHAINS))
    p.add_argument("--precisions", nargs="+", default=["bf16", "fp32"], choices=["bf16", "fp32"])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print one JSON object per measurement")
    args = p.parse_args(argv)
    for library in args.libraries:
        for precision in args.precisions:
            for tokens in args.tokens:
                row = measure(library, precision, tokens, threads=args.threads, repeats=args.repeats)
                if args.json:
                    print(json.dumps(row), flush=True)
                else:
                    print(f"{library:>9} {precision} T={tokens:>5}: {row['gflops']:7.1f} GFLOP/s "
                          f"({row['seconds'] * 1e3:.1f} ms per {LAYERS}-layer chain)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
