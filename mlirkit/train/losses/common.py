"""Shared kernels of the DCL losses: cosine similarity matrices and the contrastive term CL.

``delta(u, v) = exp(cos(u, v) / tau)`` and
``CL(x, x+, N) = -log delta(x, x+) / (delta(x, x+) + sum_{n in N} delta(x, n))``
(docs/design.md, "DCL"), computed with log-sum-exp for stability.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def cosine_matrix(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``cos(a_i, b_j)`` for every pair: (n, d) x (m, d) -> (n, m)."""
    a = F.normalize(a, dim=-1, eps=eps)  # (n, d)
    b = F.normalize(b, dim=-1, eps=eps)  # (m, d)
    return a @ b.transpose(0, 1)  # (n, m)


def contrastive_nll(pos_logit: torch.Tensor, neg_logits: torch.Tensor,
                    neg_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Per-anchor CL value ``logsumexp([pos, negs]) - pos`` from logits ``cos / tau``.

    pos_logit (n,), neg_logits (n, k), neg_mask (n, k) bool (True = use that negative) -> (n,).
    """
    if neg_mask is not None:
        neg_logits = neg_logits.masked_fill(~neg_mask, float("-inf"))  # (n, k)
    logits = torch.cat([pos_logit.unsqueeze(1), neg_logits], dim=1)  # (n, 1 + k)
    return torch.logsumexp(logits, dim=1) - pos_logit  # (n,)


def zero_from(*tensors: torch.Tensor) -> torch.Tensor:
    """A differentiable 0 attached to the inputs (keeps every parameter in the graph under DDP)."""
    return sum(t.sum() * 0.0 for t in tensors)  # ()


__all__ = ["contrastive_nll", "cosine_matrix", "zero_from"]
