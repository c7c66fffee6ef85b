"""Base class of the DCL loss modules: a thin ``nn.Module`` whose ``forward`` calls a pure function.

This package imports torch at module level; only training code imports it (never ``import mlirkit``
or a CLI's argument parsing).
"""
from __future__ import annotations

import torch.nn as nn


class DCLLossModule(nn.Module):
    """A loss; ``name`` is the key its value is logged under."""

    name: str = ""


__all__ = ["DCLLossModule"]
