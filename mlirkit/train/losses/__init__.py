"""The DCL losses: one small module per loss around a pure function (imports torch)."""
from __future__ import annotations

from mlirkit.train.losses.base import DCLLossModule
from mlirkit.train.losses.common import contrastive_nll, cosine_matrix
from mlirkit.train.losses.consistency import ConsistencyLoss, consistency_loss, rho
from mlirkit.train.losses.paired_consistency import paired_consistency_loss
from mlirkit.train.losses.language import LanguageDebiasingLoss, supervised_contrastive_loss
from mlirkit.train.losses.other_language_contrastive import other_language_contrastive_loss
from mlirkit.train.losses.orthogonality import OrthogonalityLoss, orthogonality_loss
from mlirkit.train.losses.retrieval import RetrievalLoss, retrieval_infonce
from mlirkit.train.losses.sentence import SentenceContrastiveLoss, hard_negative_mask, sentence_contrastive_loss
from mlirkit.train.losses.token import TokenContrastiveLoss, token_contrastive_loss
from mlirkit.train.losses.total import (
    CONSISTENCY_PAIRINGS, LDCL_NEGATIVES, LOSS_NAMES, DCLObjective, DCLOutputs, LossWeights, weighted_total,
)

__all__ = [
    "CONSISTENCY_PAIRINGS", "LDCL_NEGATIVES", "LOSS_NAMES", "ConsistencyLoss", "DCLLossModule", "DCLObjective",
    "DCLOutputs", "LanguageDebiasingLoss",
    "LossWeights", "OrthogonalityLoss", "RetrievalLoss", "SentenceContrastiveLoss", "TokenContrastiveLoss",
    "consistency_loss", "contrastive_nll", "cosine_matrix", "hard_negative_mask", "orthogonality_loss",
    "other_language_contrastive_loss", "paired_consistency_loss",
    "retrieval_infonce", "rho", "sentence_contrastive_loss", "supervised_contrastive_loss",
    "token_contrastive_loss", "weighted_total",
]
