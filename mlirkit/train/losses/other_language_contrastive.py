"""Language debiasing loss in the DCL paper's form: negatives only of *other* languages.

For an anchor x_k of the batch with language head output l_k and every other item x_p of the same
language (a positive), the negative set is ``N^l(x_k) = {l_r : x_r in B, lang(x_r) != lang(x_k)}``
and each (anchor, positive) term is
``CL(l_k, l_p, N^l(x_k)) = -log delta(l_k,l_p) / (delta(l_k,l_p) + sum_{r in N^l(x_k)} delta(l_k,l_r))``
with ``delta(u, v) = exp(cos(u, v) / tau)``; other same-language items are *not* in the denominator
(unlike SupCon, Khosla et al. 2020, :func:`~mlirkit.train.losses.language.supervised_contrastive_loss`).
``L_LDCL`` = mean over all (anchor, positive) pairs; anchors without a positive contribute no term
(docs/design.md, "DCL").
"""
from __future__ import annotations

import torch

from mlirkit.train.losses.common import cosine_matrix, zero_from


def other_language_contrastive_loss(z: torch.Tensor, labels: torch.Tensor, *, tau: float) -> torch.Tensor:
    """z (n, d') language reps, labels (n,) int -> scalar mean over (anchor, positive) pairs.

    0 (attached to the graph) when no anchor has a same-language positive.
    """
    n = z.shape[0]
    if n < 2:
        return zero_from(z)
    logits = cosine_matrix(z, z) / tau  # (n, n)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)  # (n, n)
    self_mask = torch.eye(n, dtype=torch.bool, device=z.device)  # (n, n)
    positive = same & ~self_mask  # (n, n)
    if not bool(positive.any()):
        return zero_from(z)
    # log sum over the other-language items of each anchor (-inf where an anchor has none)
    neg_lse = torch.logsumexp(logits.masked_fill(same, float("-inf")), dim=1, keepdim=True)  # (n, 1)
    # per pair (k, p): logsumexp([logit_kp, neg_lse_k]) - logit_kp
    denom = torch.logaddexp(logits, neg_lse.expand_as(logits))  # (n, n)
    per_pair = denom - logits  # (n, n)
    return per_pair[positive].mean()  # ()


__all__ = ["other_language_contrastive_loss"]
