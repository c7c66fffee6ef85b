"""Language debiasing: supervised contrastive loss (Khosla et al. 2020) on the language head.

Over the whole batch, with l = W_l h normalised and labels y = language:
``L_LDCL = mean over anchors a with P(a) != {} of
-(1/|P(a)|) sum_{p in P(a)} log( exp(cos(l_a, l_p)/tau) / sum_{k != a} exp(cos(l_a, l_k)/tau) )``,
``P(a) = {p != a : y_p = y_a}``; anchors without a positive are skipped (docs/design.md, "DCL").
"""
from __future__ import annotations

import torch

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import cosine_matrix, zero_from


def supervised_contrastive_loss(z: torch.Tensor, labels: torch.Tensor, *, tau: float) -> torch.Tensor:
    """z (n, d') language reps, labels (n,) int -> scalar (0 when no anchor has a positive)."""
    n = z.shape[0]
    if n < 2:
        return zero_from(z)
    logits = cosine_matrix(z, z) / tau  # (n, n)
    self_mask = torch.eye(n, dtype=torch.bool, device=z.device)  # (n, n)
    logits = logits.masked_fill(self_mask, float("-inf"))  # (n, n)
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)  # (n, n)
    positive = (labels.unsqueeze(0) == labels.unsqueeze(1)) & ~self_mask  # (n, n)
    n_pos = positive.sum(1)  # (n,)
    has_pos = n_pos > 0  # (n,)
    if not bool(has_pos.any()):
        return zero_from(z)
    pos_log_prob = log_prob.masked_fill(~positive, 0.0).sum(1)  # (n,)
    per_anchor = -pos_log_prob[has_pos] / n_pos[has_pos]  # (n_anchor,)
    return per_anchor.mean()  # ()


class LanguageDebiasingLoss(DCLLossModule):
    name = "ldcl"

    def __init__(self, tau: float = 0.1) -> None:
        super().__init__()
        self.tau = tau

    def forward(self, z: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return supervised_contrastive_loss(z, labels, tau=self.tau)


__all__ = ["LanguageDebiasingLoss", "supervised_contrastive_loss"]
