"""The vectors a projection plot shows: an index's documents before and after a language transform."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.defaults import DEFAULT_ALPHA


@dataclass(frozen=True)
class ProjectionInputs:
    before: np.ndarray
    after: np.ndarray | None
    langs: list[str]
    titles: tuple[str, str]


def projection_inputs(index_dir: str | os.PathLike, *, after_index: str | os.PathLike | None = None,
                      transform: str | os.PathLike | None = None, alpha: AlphaLike = DEFAULT_ALPHA) -> ProjectionInputs:
    """``index_dir``'s untransformed vectors (``embeddings.npy`` if present, else the indexed ones) and, to
    compare, either ``after_index``'s indexed vectors (the same documents) or ``transform`` applied to them."""
    from mlirkit.index import DenseIndex

    if after_index and transform:
        raise MlirkitError(f"give {option('after_index')} or {option('transform')}, not both")
    alpha = Alpha.coerce(alpha)
    index = DenseIndex(index_dir)
    before = np.asarray(index.embeddings() if index.has_embeddings else index.indexed_vectors(), dtype=np.float32)
    langs = index.langs
    after = None
    titles = ("before", "after")
    if after_index:
        other = DenseIndex(after_index)
        if other.docids != index.docids:
            raise MlirkitError(f"{after_index} does not hold the same documents in the same order as {index_dir}")
        after = other.indexed_vectors()
        titles = (Path(index_dir).name, Path(after_index).name)
    elif transform:
        from mlirkit.transforms.io import load_transform

        t = load_transform(transform)
        if index.encoder:
            t.check_encoder(index.encoder, dim=before.shape[1])
        after = t.transform(before, langs, "doc", alpha=alpha)
        titles = ("before", f"after {Path(transform).name} (alpha {alpha})")
    return ProjectionInputs(before, after, langs, titles)


__all__ = ["projection_inputs"]
