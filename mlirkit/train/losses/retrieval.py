"""Retrieval InfoNCE with the positive, hard negatives and in-batch negatives, scored with r(x).

For query q_b with positive p_b and hard negatives n_{b,1..H}:
``L_ret = mean_b -log exp(cos(q_b, p_b)/tau) / sum_{c in C_b} exp(cos(q_b, c)/tau)``;
``C_b`` = p_b and the hard negatives of b, plus, with in-batch negatives, every other positive and
hard negative of the batch (as in DPR, Karpukhin et al. 2020).
"""
from __future__ import annotations

import torch

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import cosine_matrix, zero_from


def retrieval_infonce(q: torch.Tensor, pos: torch.Tensor, hard: torch.Tensor | None, *, tau: float,
                      in_batch: bool = True, query_offset: int = 0) -> torch.Tensor:
    """q (B, d), pos (G, d), hard (G, H, d) or None -> scalar.

    ``G >= B``: the documents may be gathered from several processes; query b's positive is row
    ``query_offset + b`` of ``pos`` (its own hard negatives likewise).
    """
    b = q.shape[0]
    if b == 0:
        return zero_from(q, pos)
    g = pos.shape[0]
    h = 0 if hard is None else hard.shape[1]
    docs = pos if h == 0 else torch.cat([pos, hard.reshape(g * h, -1)], dim=0)  # (G + G*H, d)
    logits = cosine_matrix(q, docs) / tau  # (B, G + G*H)
    own = torch.arange(b, device=q.device) + query_offset  # (B,)
    if not in_batch:
        cols = torch.arange(docs.shape[0], device=q.device)  # (G + G*H,)
        owner = torch.cat([cols[:g], torch.div(cols[g:] - g, max(h, 1), rounding_mode="floor")])  # (G+G*H,)
        keep = owner.unsqueeze(0) == own.unsqueeze(1)  # (B, G + G*H)
        logits = logits.masked_fill(~keep, float("-inf"))
    return torch.nn.functional.cross_entropy(logits, own)  # ()


class RetrievalLoss(DCLLossModule):
    name = "ret"

    def __init__(self, tau: float = 0.05, in_batch: bool = True) -> None:
        super().__init__()
        self.tau, self.in_batch = tau, in_batch

    def forward(self, q: torch.Tensor, pos: torch.Tensor, hard: torch.Tensor | None,
                query_offset: int = 0) -> torch.Tensor:
        return retrieval_infonce(q, pos, hard, tau=self.tau, in_batch=self.in_batch, query_offset=query_offset)


__all__ = ["RetrievalLoss", "retrieval_infonce"]
