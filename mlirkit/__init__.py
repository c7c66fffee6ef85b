"""mlirkit: multilingual dense retrieval without language bias (SHIFT, DCL, TLR@k).

Importing this package is cheap: torch, faiss, pyserini and ir_datasets are imported only where used.
It makes the ``mlirkit/...`` dataset ids visible to ir_datasets (registered when ir_datasets is
imported; see :mod:`mlirkit._ir_datasets_hook`).
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

from mlirkit import _ir_datasets_hook  # noqa: E402

_ir_datasets_hook.install()
