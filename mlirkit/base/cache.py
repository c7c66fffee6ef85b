"""Where mlirkit keeps converted models and cached embeddings: ``$MLIRKIT_CACHE`` or the user cache dir."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$MLIRKIT_CACHE/parts...`` (default: the user cache directory), created; an unusable one is one error
    naming the variable (:func:`mlirkit.base.env.env_directory`)."""
    from mlirkit.base.env import env_directory

    if os.environ.get("MLIRKIT_CACHE"):
        return env_directory("MLIRKIT_CACHE", Path(), *parts)
    from platformdirs import user_cache_dir

    return env_directory("MLIRKIT_CACHE", Path(user_cache_dir("mlirkit")), *parts)
