"""torch.distributed helpers for DCL training (launched with ``torchrun``; gloo on CPU, nccl on CUDA)."""
from __future__ import annotations

import os

import torch
import torch.distributed as dist

from mlirkit.base.errors import MlirkitError


def env_world() -> tuple[int, int, int]:
    """(rank, local_rank, world_size) from torchrun's environment; (0, 0, 1) when not launched by it; a value
    that is not a non-negative integer (world size >= 1) is one error naming the variable."""
    def read(var: str, default: int, minimum: int) -> int:
        text = os.environ.get(var, "").strip()
        if not text:
            return default
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise MlirkitError(f"{var}={text!r}: expected an integer >= {minimum} (set by torchrun)")
        return value

    return read("RANK", 0, 0), read("LOCAL_RANK", 0, 0), read("WORLD_SIZE", 1, 1)


def init_distributed(device_type: str) -> tuple[int, int]:
    """Initialise the default process group if torchrun started us; returns (rank, world_size)."""
    rank, _, world = env_world()
    if world > 1 and not dist.is_initialized():
        # CUDA tensors (features, gradients) go through NCCL; the small CPU tensors (batch sizes,
        # logged losses) through gloo: NCCL alone refuses CPU tensors.
        dist.init_process_group(backend="cpu:gloo,cuda:nccl" if device_type == "cuda" else "gloo")
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


class _GatherWithGrad(torch.autograd.Function):
    """All-gather along dim 0 keeping the graph: backward sums every process's gradient for our slice."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        world = dist.get_world_size()
        parts = [torch.empty_like(x) for _ in range(world)]
        dist.all_gather(parts, x.contiguous())
        ctx.rank, ctx.n = dist.get_rank(), x.shape[0]
        return torch.cat(parts, 0)  # (world * n, ...)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        grad = grad.contiguous().clone()
        dist.all_reduce(grad)
        return grad[ctx.rank * ctx.n:(ctx.rank + 1) * ctx.n]


def gather(x: torch.Tensor) -> torch.Tensor:
    """(n, ...) on every process -> (world * n, ...) in rank order, differentiable; identity when single."""
    if not is_distributed():
        return x
    sizes = [torch.zeros(1, dtype=torch.long) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, torch.tensor([x.shape[0]], dtype=torch.long))
    if len({int(s) for s in sizes}) != 1:
        raise MlirkitError(f"processes have different batch sizes {[int(s) for s in sizes]}; "
                           "cannot gather negatives (use equal per-process batches)")
    return _GatherWithGrad.apply(x)


def gather_labels(x: torch.Tensor) -> torch.Tensor:
    """Non-differentiable all-gather of an integer tensor (n,) -> (world * n,)."""
    if not is_distributed():
        return x
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, 0)


def mean_across(values: dict[str, float]) -> dict[str, float]:
    """Average scalar logs over processes."""
    if not is_distributed() or not values:
        return values
    keys = sorted(values)
    t = torch.tensor([values[k] for k in keys], dtype=torch.float64)
    dist.all_reduce(t)
    t /= dist.get_world_size()
    return dict(zip(keys, t.tolist()))


def barrier() -> None:
    if is_distributed():
        dist.barrier()


__all__ = ["barrier", "env_world", "gather", "gather_labels", "init_distributed", "is_distributed", "mean_across"]
