"""Consistency (rho) losses for non-parallel, low-resource monolingual text.

``rho(x; a, b) = delta(x, a) / (delta(x, a) + delta(x, b)) = sigmoid((cos(x, a) - cos(x, b)) / tau)``.
For every monolingual item x_k and every parallel pair (a, b) of the batch, rho is pushed to 1/2 with
the cross-entropy against (1/2, 1/2) minus log 2, so the minimum is 0 at rho = 1/2:
``ell = -(1/2) log rho - (1/2) log(1 - rho) - log 2``. The sentence level uses semantic sentence
reps, the token level monolingual token reps against aligned token pairs (docs/design.md, "DCL").
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import cosine_matrix, zero_from


def rho(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, tau: float) -> torch.Tensor:
    """x (M, d'), a (P, d'), b (P, d') -> rho (M, P)."""
    return torch.sigmoid((cosine_matrix(x, a) - cosine_matrix(x, b)) / tau)  # (M, P)


def consistency_loss(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, tau: float) -> torch.Tensor:
    """Mean over (x_k, pair p) of the rho cross-entropy to (1/2, 1/2) minus log 2; 0 if either set is empty.

    x (M, d') monolingual reps, a (P, d') / b (P, d') the two sides of the parallel pairs -> ().
    """
    if x.shape[0] == 0 or a.shape[0] == 0:
        return zero_from(x, a, b)
    z = (cosine_matrix(x, a) - cosine_matrix(x, b)) / tau  # (M, P): rho = sigmoid(z)
    # -log rho = softplus(-z), -log(1 - rho) = softplus(z)
    ce = 0.5 * F.softplus(-z) + 0.5 * F.softplus(z)  # (M, P)
    return (ce - math.log(2.0)).mean()  # ()


class ConsistencyLoss(DCLLossModule):
    name = "rho"

    def __init__(self, tau: float = 0.05) -> None:
        super().__init__()
        self.tau = tau

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return consistency_loss(x, a, b, tau=self.tau)


__all__ = ["ConsistencyLoss", "consistency_loss", "rho"]
