"""Consistency (rho) loss in the DCL paper's one-to-one form.

"Within the same batch, the number of parallel sentence pairs and low-resource monolingual sentences
is N": monolingual sentence k is tied to parallel pair k only (not to every pair), at sentence and at
token level. With ``rho(x; a, b) = sigmoid((cos(x, a) - cos(x, b)) / tau)`` (see
:mod:`mlirkit.train.losses.consistency`):
``L^Q = mean_k [-(1/2) log rho(x_k; a_{k mod P}, b_{k mod P}) - (1/2) log(1 - rho(...)) - log 2]``;
when there are more monolingual items than pairs (M > P), pair ``k mod P`` is reused, when fewer, only
the first M pairs are used (docs/design.md, "DCL").
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from mlirkit.train.losses.common import zero_from


def paired_consistency_loss(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, tau: float) -> torch.Tensor:
    """x (M, d') monolingual reps, a (P, d') / b (P, d') pair sides -> () mean over k of the one-to-one term."""
    m, p = x.shape[0], a.shape[0]
    if m == 0 or p == 0:
        return zero_from(x, a, b)
    idx = torch.arange(m, device=x.device) % p  # (M,)
    xn = F.normalize(x, dim=-1, eps=1e-8)  # (M, d')
    xa = (xn * F.normalize(a[idx], dim=-1, eps=1e-8)).sum(-1)  # (M,)
    xb = (xn * F.normalize(b[idx], dim=-1, eps=1e-8)).sum(-1)  # (M,)
    z = (xa - xb) / tau  # (M,): rho = sigmoid(z)
    ce = 0.5 * F.softplus(-z) + 0.5 * F.softplus(z)  # (M,)
    return (ce - math.log(2.0)).mean()  # ()


__all__ = ["paired_consistency_loss"]
