"""Orthogonality between the semantic and the language head (soft subspace orthogonality).

``L_orth = ||Z_s^T Z_l||_F^2 / B`` with Z_s, Z_l the (B, d') matrices of L2-normalised semantic and
language representations of one batch (docs/design.md, "DCL"; the form of Bousmalis et al. 2016,
"Domain Separation Networks"). It is zero when every semantic feature column is orthogonal, over
the batch, to every language feature column.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import zero_from


def orthogonality_loss(z_s: torch.Tensor, z_l: torch.Tensor) -> torch.Tensor:
    """z_s (B, d'), z_l (B, d') -> scalar ``||norm(Z_s)^T norm(Z_l)||_F^2 / B``."""
    if z_s.shape[0] == 0:
        return zero_from(z_s, z_l)
    z_s = F.normalize(z_s, dim=-1)  # (B, d')
    z_l = F.normalize(z_l, dim=-1)  # (B, d')
    cross = z_s.transpose(0, 1) @ z_l  # (d', d')
    return cross.pow(2).sum() / z_s.shape[0]  # ()


class OrthogonalityLoss(DCLLossModule):
    name = "orth"

    def forward(self, z_s: torch.Tensor, z_l: torch.Tensor) -> torch.Tensor:
        return orthogonality_loss(z_s, z_l)


__all__ = ["OrthogonalityLoss", "orthogonality_loss"]
