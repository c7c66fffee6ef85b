"""Cost of the DCL trainer's optimiser step on CPU: AdamW's implementations and the finite-weight check, side by side.

``OMP_NUM_THREADS=1 python -m perf.train_step_speed [--rounds 20] [--output FILE]``

The model is the tiny test model (``mlirkit.testing.tiny_models.build_tiny_hf_model``: 2 layers of width 32 with
the real 250k-token multilingual-e5 vocabulary, so the trained word embeddings hold ~97% of the weights), every
weight trained (weight decay on matrices, none on vectors, as the trainer's groups) with random gradients. Interleaved, ``--rounds`` times each (median ms):

- ``adamw_single`` / ``adamw_foreach`` / ``adamw_fused``: one ``AdamW.step()`` per implementation (the first is
  torch's CPU default, a Python loop over the tensors), each on its own copy of the weights; after the rounds, the
  largest relative difference of the weights from ``adamw_single``'s;
- ``check_all_isfinite``: ``torch.isfinite`` on every weight (the trainer's test before) against
  ``check_trained_sums``: one sum per weight tensor that requires grad (the trainer's test now: a NaN or inf makes
  the sum non-finite), and ``check_trained_inf_norm``: ``torch._foreach_norm(.., inf)`` over the same tensors.

``--example`` instead times the two ``python -m mlirkit.train --help`` examples end to end (the second trains 200
steps), in a temporary directory, with the offline e5 replaced by the tiny model as tests/test_cli_examples.py
does; run it under the code to compare (``PYTHONPATH=CHECKOUT python perf/train_step_speed.py --example``).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

IMPLEMENTATIONS = {"adamw_single": dict(foreach=False), "adamw_foreach": dict(foreach=True),
                   "adamw_fused": dict(fused=True)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--example", action="store_true", help="time the --help examples end to end instead")
    p.add_argument("--output", type=Path, default=None)
    return p.parse_args(argv)


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """(process CPU seconds, wall seconds) of ``fn()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def tiny_model_dir(root: Path) -> Path:
    from mlirkit.testing.tiny_models import build_tiny_hf_model

    return build_tiny_hf_model(root / "tiny_model")


def run_example(root: Path) -> dict[str, Any]:
    import os
    import shlex
    from unittest import mock

    from mlirkit.base.cli import run_cli
    from mlirkit.train.cli import main

    model = tiny_model_dir(root)
    first = ("--backbone multilingual-e5-small-q4 --set triples=mlirkit/xquad-r-zs/train "
             "--set parallel=mlirkit/parallel/tatoeba --set parallel_langs=ar,de,es,zh --set n_monolingual=0 "
             "--set query_prefix='query: ' --set doc_prefix='passage: ' --output runs/dcl --print-config")
    second = "run.json --max-steps 200 --set use_ldcl=false --output runs/dcl-no-ldcl --quiet"
    os.chdir(root)
    with mock.patch("mlirkit.encoders.e5_q4.converted_model_dir", lambda *a, **k: model):
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert run_cli(main, shlex.split(first)) == 0
        Path("run.json").write_text(out.getvalue(), encoding="utf-8")
        cpu, wall = timed(lambda: run_cli(main, shlex.split(second)))
    return {"example_cpu_s": round(cpu, 2), "example_wall_s": round(wall, 2)}


def run_micro(root: Path, rounds: int) -> dict[str, Any]:
    import copy

    import torch

    from mlirkit.encoders.dcl_model import DisentangledEncoder

    torch.manual_seed(0)
    base = DisentangledEncoder.from_backbone(str(tiny_model_dir(root)), head_dim=16, max_length=32, seed=0)
    grads = {n: torch.randn_like(p) * 1e-2 for n, p in base.named_parameters() if p.requires_grad}
    models = {}
    for name, kw in IMPLEMENTATIONS.items():
        m = copy.deepcopy(base)
        params = [p for p in m.parameters() if p.requires_grad]
        opt = torch.optim.AdamW([{"params": [p for p in params if p.ndim >= 2], "weight_decay": 0.01},
                                 {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}], lr=1e-3, **kw)
        models[name] = (m, opt)

    def adam_step(name: str) -> Callable[[], None]:
        m, opt = models[name]

        def step() -> None:
            for n, p in m.named_parameters():
                if p.requires_grad:
                    p.grad = grads[n].clone()
            opt.step()
        return step

    all_params = [p.detach() for p in base.parameters()]
    trained = [p.detach() for p in base.parameters() if p.requires_grad]
    checks = {  # the trainer's test before (every weight) and now (a sum per trained tensor), and a max-norm test
        "check_all_isfinite": lambda: bool(torch.stack([torch.isfinite(p).all() for p in all_params]).all()),
        "check_trained_inf_norm": lambda: bool(torch.stack(torch._foreach_norm(trained, float("inf"))).isfinite().all()),
        "check_trained_sums": lambda: bool(torch.stack([p.sum(dtype=torch.float32) for p in trained]).isfinite().all()),
    }
    times: dict[str, list[float]] = {k: [] for k in (*IMPLEMENTATIONS, *checks)}
    for _ in range(rounds):
        for name in IMPLEMENTATIONS:
            times[name].append(timed(adam_step(name))[1])
        for name, fn in checks.items():
            times[name].append(timed(fn)[1])
    ref = dict(models["adamw_single"][0].named_parameters())
    max_rel = {}
    for name in IMPLEMENTATIONS:
        worst = 0.0
        for n, p in models[name][0].named_parameters():
            diff = (p.detach() - ref[n].detach()).abs().max() / ref[n].detach().abs().max().clamp_min(1e-30)
            worst = max(worst, float(diff))
        max_rel[name] = worst
    median_ms = {k: round(1000 * statistics.median(v), 3) for k, v in times.items()}
    return {"rounds": rounds, "threads": torch.get_num_threads(),
            "trained_weights": sum(p.numel() for p in trained), "all_weights": sum(p.numel() for p in all_params),
            "median_ms": median_ms,
            "ratio_vs_single": {k: round(median_ms["adamw_single"] / median_ms[k], 2) for k in IMPLEMENTATIONS},
            "ratio_check_vs_all_isfinite": {k: round(median_ms["check_all_isfinite"] / median_ms[k], 2) for k in checks},
            "max_rel_diff_vs_single": max_rel}


def main(argv: list[str] | None = None) -> int:
    import os

    args = parse_args(argv)
    result: dict[str, Any] = {"load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="train-step-speed-") as tmp:
        root = Path(tmp)
        result.update(run_example(root) if args.example else run_micro(root, args.rounds))
    result["load_average_after"] = os.getloadavg()
    text = json.dumps(result, indent=1)
    print(text)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
