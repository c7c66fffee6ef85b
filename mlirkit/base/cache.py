"""Where mlirkit keeps converted models and cached embeddings: ``$MLIRKIT_CACHE`` or the user cache dir."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str, create: bool = True) -> Path:
    """``$MLIRKIT_CACHE/<parts>`` (default root: the user cache dir), created unless ``create=False``."""
    root = os.environ.get("MLIRKIT_CACHE")
    if root:
        base = Path(root)
    else:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("mlirkit"))
    path = base.joinpath(*parts)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path
