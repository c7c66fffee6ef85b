"""Token-level contrastive loss on aligned tokens of parallel pairs.

Aligned token pairs (u_t, v_t), t = 1..T, from every parallel pair of the batch, with token
representations w projected by W_s; the pool W^P holds all 2T of them; for anchor u_t the positive
is v_t and the negatives ``N_t = W^P minus {w_u_t, w_v_t}``; symmetric:
``L_tok^P = mean_t [CL(u_t, v_t, N_t) + CL(v_t, u_t, N_t)] / 2`` (docs/design.md, "DCL").
"""
from __future__ import annotations

import torch

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import contrastive_nll, cosine_matrix, zero_from


def token_contrastive_loss(u: torch.Tensor, v: torch.Tensor, *, tau: float) -> torch.Tensor:
    """u (T, d'), v (T, d') aligned token reps -> scalar L_tok^P (0 when T == 0)."""
    t = u.shape[0]
    if t == 0:
        return zero_from(u, v)
    pool = torch.cat([u, v], dim=0)  # (2T, d')
    logits = cosine_matrix(pool, pool) / tau  # (2T, 2T)
    idx = torch.arange(2 * t, device=u.device)  # (2T,)
    partner = torch.cat([idx[t:], idx[:t]])  # (2T,)
    pos = logits[idx, partner]  # (2T,)
    mask = torch.ones_like(logits, dtype=torch.bool)  # (2T, 2T)
    mask[idx, idx] = False
    mask[idx, partner] = False
    return contrastive_nll(pos, logits, mask).mean()  # ()


class TokenContrastiveLoss(DCLLossModule):
    name = "tok"

    def __init__(self, tau: float = 0.05) -> None:
        super().__init__()
        self.tau = tau

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return token_contrastive_loss(u, v, tau=self.tau)


__all__ = ["TokenContrastiveLoss", "token_contrastive_loss"]
