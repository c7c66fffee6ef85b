"""Where mlirkit keeps converted models and cached embeddings: ``$MLIRKIT_CACHE`` or the user cache dir."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str, create: bool = True) -> Path:
    """``$MLIRKIT_CACHE/parts...`` (default: the user cache directory), created unless ``create=False``; an
    unusable one is one error naming the variable (:func:`mlirkit.base.env.env_directory`)."""
    from mlirkit.base.env import env_directory

    root = os.environ.get("MLIRKIT_CACHE")
    if root:
        default = Path()
    else:
        from platformdirs import user_cache_dir

        default = Path(user_cache_dir("mlirkit"))
    if not create:
        return (Path(root).expanduser() if root else default).joinpath(*parts)
    return env_directory("MLIRKIT_CACHE", default, *parts)


__all__ = ["cache_dir"]
