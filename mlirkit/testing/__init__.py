"""Helpers for tests and examples: tiny random-init models built offline from a config."""
from __future__ import annotations

from mlirkit.testing.tiny_models import TINY_SPEC, build_tiny_hf_model

__all__ = ["TINY_SPEC", "build_tiny_hf_model"]
