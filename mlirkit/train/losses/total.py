"""The weighted DCL objective.

``L_HSA^P = L_sent^P + lambda_t L_tok^P``; ``L_HSA^Q = L_sent^Q + lambda_t L_tok^Q`` (rho losses);
``L_HSA = L_HSA^P + lambda_q L_HSA^Q``;
``L_dec = L_HSA + lambda_ldcl L_LDCL + lambda_o L_orth``; ``L = L_ret + lambda_d L_dec``
(docs/design.md, "DCL"; lambda_q and lambda_ldcl are ours, default 1).
``ldcl_negatives`` and ``consistency_pairing`` choose the paper's forms of L_LDCL and L^Q (default) or
the earlier SupCon / all-pairs forms (docs/training.md, "Loss forms").
A switched-off term has weight 0 and is not computed.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import zero_from
from mlirkit.train.losses.consistency import consistency_loss
from mlirkit.train.losses.paired_consistency import paired_consistency_loss
from mlirkit.train.losses.language import supervised_contrastive_loss
from mlirkit.train.losses.other_language_contrastive import other_language_contrastive_loss
from mlirkit.train.losses.orthogonality import orthogonality_loss
from mlirkit.train.losses.retrieval import retrieval_infonce
from mlirkit.train.losses.sentence import sentence_contrastive_loss
from mlirkit.train.losses.token import token_contrastive_loss

#: every loss name, in logging order
LOSS_NAMES = ("ret", "sent_p", "tok_p", "sent_q", "tok_q", "ldcl", "orth")
#: forms of L_LDCL: the paper's (negatives = other-language items only) and SupCon (every other item)
LDCL_NEGATIVES = ("other_language", "all")
#: forms of L^Q: the paper's (monolingual item k <-> parallel pair k) and every (item, pair) combination
CONSISTENCY_PAIRINGS = ("one_to_one", "all_pairs")


@dataclass(frozen=True)
class LossWeights:
    """Coefficients of :func:`weighted_total`; a weight of 0 switches the term off."""

    ret: float = 1.0
    sent_p: float = 1.0
    lambda_t: float = 1.0
    lambda_q: float = 1.0
    ldcl: float = 1.0
    orth: float = 1.0
    lambda_d: float = 1.0

    def term_weights(self) -> dict[str, float]:
        """The effective weight of every named loss in the total."""
        return {
            "ret": self.ret,
            "sent_p": self.lambda_d * self.sent_p,
            "tok_p": self.lambda_d * self.lambda_t,
            "sent_q": self.lambda_d * self.lambda_q,
            "tok_q": self.lambda_d * self.lambda_q * self.lambda_t,
            "ldcl": self.lambda_d * self.ldcl,
            "orth": self.lambda_d * self.orth,
        }


def weighted_total(losses: dict[str, torch.Tensor], weights: LossWeights) -> torch.Tensor:
    """``sum_name effective_weight(name) * losses[name]`` over the losses present; missing ones are 0."""
    tw = weights.term_weights()
    terms = [tw[k] * v for k, v in losses.items() if k in tw and tw[k] != 0.0]
    if not terms:
        return zero_from(*losses.values()) if losses else torch.zeros(())
    return torch.stack(terms).sum()  # ()


@dataclass
class DCLOutputs:
    """The representations one batch produces (``d'`` = head dim, ``d`` = retrieval dim).

    q (B, d), pos (G, d), hard (G, H, d) or None, query_offset: where this process's queries' own
    documents are in pos (G > B when gathered across processes); s_par (n, d') semantic reps of the
    parallel pool, pairs (P, 2) indices into s_par; s_mono (M, d'); tok_u / tok_v (T, d') aligned token
    reps; tok_mono (Mt, d') monolingual token reps; z_s / z_l (N, d') semantic / language reps of every
    item, labels (N,) language ids.
    """

    q: torch.Tensor
    pos: torch.Tensor
    hard: torch.Tensor | None
    s_par: torch.Tensor
    pairs: torch.Tensor
    s_mono: torch.Tensor
    tok_u: torch.Tensor
    tok_v: torch.Tensor
    tok_mono: torch.Tensor
    z_s: torch.Tensor
    z_l: torch.Tensor | None
    labels: torch.Tensor
    query_offset: int = 0


class DCLObjective(DCLLossModule):
    """All DCL losses; ``forward`` returns ``{name: value}`` for the computed terms plus ``"total"``."""

    name = "total"

    def __init__(self, weights: LossWeights, *, tau_ret: float = 0.05, tau_sent: float = 0.05,
                 tau_tok: float = 0.05, tau_rho: float = 0.05, tau_ldcl: float = 0.1, top_k: int = 8,
                 in_batch_negatives: bool = True, ldcl_negatives: str = "other_language",
                 consistency_pairing: str = "one_to_one") -> None:
        super().__init__()
        if ldcl_negatives not in LDCL_NEGATIVES:
            raise ValueError(f"ldcl_negatives must be one of {LDCL_NEGATIVES}, not {ldcl_negatives!r}")
        if consistency_pairing not in CONSISTENCY_PAIRINGS:
            raise ValueError(f"consistency_pairing must be one of {CONSISTENCY_PAIRINGS}, not {consistency_pairing!r}")
        self.ldcl_negatives, self.consistency_pairing = ldcl_negatives, consistency_pairing
        self.weights = weights
        self.tau_ret, self.tau_sent, self.tau_tok, self.tau_rho, self.tau_ldcl = tau_ret, tau_sent, tau_tok, tau_rho, tau_ldcl
        self.top_k, self.in_batch_negatives = top_k, in_batch_negatives

    def forward(self, o: DCLOutputs) -> dict[str, torch.Tensor]:
        tw = self.weights.term_weights()
        out: dict[str, torch.Tensor] = {}
        if tw["ret"]:
            out["ret"] = retrieval_infonce(o.q, o.pos, o.hard, tau=self.tau_ret,
                                           in_batch=self.in_batch_negatives, query_offset=o.query_offset)
        if tw["sent_p"]:
            out["sent_p"] = sentence_contrastive_loss(o.s_par, o.pairs, tau=self.tau_sent, top_k=self.top_k)
        if tw["tok_p"]:
            out["tok_p"] = token_contrastive_loss(o.tok_u, o.tok_v, tau=self.tau_tok)
        a, b = o.s_par[o.pairs[:, 0]], o.s_par[o.pairs[:, 1]]  # (P, d'), (P, d')
        rho_loss = paired_consistency_loss if self.consistency_pairing == "one_to_one" else consistency_loss
        if tw["sent_q"]:
            out["sent_q"] = rho_loss(o.s_mono, a, b, tau=self.tau_rho)
        if tw["tok_q"]:
            out["tok_q"] = rho_loss(o.tok_mono, o.tok_u, o.tok_v, tau=self.tau_rho)
        if tw["ldcl"] and o.z_l is not None:
            lang_loss = (other_language_contrastive_loss if self.ldcl_negatives == "other_language"
                         else supervised_contrastive_loss)
            out["ldcl"] = lang_loss(o.z_l, o.labels, tau=self.tau_ldcl)
        if tw["orth"] and o.z_l is not None:
            out["orth"] = orthogonality_loss(o.z_s, o.z_l)
        total = weighted_total(out, self.weights)
        # keep every head in the graph even when its terms are off (DDP needs every parameter used)
        anchors = [o.q, o.pos, o.s_par, o.z_s] + ([o.z_l] if o.z_l is not None else [])
        out["total"] = total + zero_from(*anchors)
        return out


__all__ = ["CONSISTENCY_PAIRINGS", "DCLObjective", "DCLOutputs", "LDCL_NEGATIVES", "LOSS_NAMES", "LossWeights",
           "weighted_total"]
