"""Sentence-level contrastive loss on parallel pairs with top-K in-batch hard negatives.

For a parallel pair (x_i, x_j) with semantic representations s:
``N_i = TopK_{k != i, j} cos(s_i, s_k)`` over the batch pool, and
``L_sent^P = mean over pairs of [CL(s_i, s_j, N_i) + CL(s_j, s_i, N_j)] / 2``
(docs/design.md, "DCL"; hard negatives as in the DCL paper's text).
"""
from __future__ import annotations

import torch

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import contrastive_nll, cosine_matrix, zero_from


def hard_negative_mask(sim: torch.Tensor, pairs: torch.Tensor, top_k: int) -> torch.Tensor:
    """Which pool items are the top-K negatives of each anchor, excluding the pair itself.

    sim (n, n) similarities of the pool, pairs (P, 2) indices into the pool ->
    bool (2P, n): rows 0..P-1 for anchors ``pairs[:, 0]``, rows P..2P-1 for anchors ``pairs[:, 1]``.
    ``top_k <= 0`` keeps every allowed item.
    """
    n = sim.shape[0]
    anchors = torch.cat([pairs[:, 0], pairs[:, 1]])  # (2P,)
    partners = torch.cat([pairs[:, 1], pairs[:, 0]])  # (2P,)
    rows = torch.arange(anchors.shape[0], device=sim.device)  # (2P,)
    allowed = torch.ones(anchors.shape[0], n, dtype=torch.bool, device=sim.device)  # (2P, n)
    allowed[rows, anchors] = False
    allowed[rows, partners] = False
    n_allowed = int(allowed.sum(1).min().item()) if n else 0
    if top_k <= 0 or top_k >= n_allowed:
        return allowed
    scores = sim.detach()[anchors].masked_fill(~allowed, float("-inf"))  # (2P, n)
    top = scores.topk(top_k, dim=1).indices  # (2P, K)
    mask = torch.zeros_like(allowed)  # (2P, n)
    mask.scatter_(1, top, True)
    return mask & allowed


def sentence_contrastive_loss(s: torch.Tensor, pairs: torch.Tensor, *, tau: float, top_k: int) -> torch.Tensor:
    """s (n, d') semantic reps of the pool, pairs (P, 2) long -> scalar L_sent^P (0 without pairs)."""
    if pairs.shape[0] == 0:
        return zero_from(s)
    sim = cosine_matrix(s, s)  # (n, n)
    anchors = torch.cat([pairs[:, 0], pairs[:, 1]])  # (2P,)
    partners = torch.cat([pairs[:, 1], pairs[:, 0]])  # (2P,)
    logits = sim[anchors] / tau  # (2P, n)
    pos = logits.gather(1, partners.unsqueeze(1)).squeeze(1)  # (2P,)
    mask = hard_negative_mask(sim, pairs, top_k)  # (2P, n)
    per_anchor = contrastive_nll(pos, logits, mask)  # (2P,)
    return per_anchor.mean()  # () = mean over pairs of the two directions' average


class SentenceContrastiveLoss(DCLLossModule):
    name = "sent"

    def __init__(self, tau: float = 0.05, top_k: int = 8) -> None:
        super().__init__()
        self.tau, self.top_k = tau, top_k

    def forward(self, s: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        return sentence_contrastive_loss(s, pairs, tau=self.tau, top_k=self.top_k)


__all__ = ["SentenceContrastiveLoss", "hard_negative_mask", "sentence_contrastive_loss"]
