"""DCL training: the disentangled contrastive retriever (model, losses, alignment, data, trainer).

Importing this package is cheap; the submodules import torch and transformers.
"""
from __future__ import annotations

__all__: list[str] = []
