"""mlirkit: multilingual dense retrieval without language bias (SHIFT, DCL, TLR@k).

Importing this package is cheap: torch, faiss and pyserini are imported only where used.
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
