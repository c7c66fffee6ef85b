"""Vector helpers shared by every layer: L2 normalisation and the one SHIFT step.

The SHIFT step (docs/design.md, "SHIFT") is: transform the embeddings of one side with each row's
language, then L2-normalise, so that inner-product search scores cosines::

    z' = normalize(T(z, lang, side, alpha))      # T = identity when there is no transform

Every path that turns raw embeddings into indexed or query vectors (index-time encoding, post-hoc
apply, search, the Pyserini encoders, the benchmark) calls :func:`transform_and_normalize`, which is
also where numbers are checked, once: a NaN or inf in the input vectors is an error (:func:`check_finite`,
the one finiteness check, also used for transform parameters, ``embeddings.npy`` and merged shards).
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError


class SupportsTransform(Protocol):
    """What :func:`transform_and_normalize` needs of a language transform (see ``mlirkit.transforms``)."""

    def touches(self, side: str) -> bool: ...

    def transform(self, embs: np.ndarray, langs: Sequence[str | None], side: str,
              alpha: float | Mapping[str, float] = 1.0, strict: bool = False, **options: Any) -> np.ndarray: ...


def check_finite(name: str, array: np.ndarray, where: object = "") -> None:
    """Raise :class:`MlirkitError` ``"{where}: {name} contains NaN or inf"`` unless every value is finite."""
    if not np.all(np.isfinite(array)):
        raise MlirkitError(f"{where}{': ' if where else ''}{name} contains NaN or inf")


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows left as they are)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


def transform_and_normalize(vectors: np.ndarray, langs: Sequence[str | None] | None, side: str,
                            transform: SupportsTransform | None = None, alpha: Any = 1.0, *,
                            strict: bool = False, where: object = "", counts: Any = None) -> np.ndarray:
    """``normalize(T(vectors))`` as C-contiguous float32; ``T`` is skipped when ``transform`` is None
    or does not touch ``side`` ("doc" or "query"). ``vectors`` is never modified. NaN or inf in
    ``vectors`` is an error naming ``where`` (e.g. the encoder or ``embeddings.npy``). ``counts``: the caller's
    counter of rows the transform left unchanged (passed on to it)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    check_finite(f"{side} vectors", vectors, where)
    if transform is not None and transform.touches(side):
        options = {} if counts is None else {"counts": counts}
        vectors = transform.transform(vectors, list(langs), side, alpha, strict=strict, **options)
    return np.ascontiguousarray(l2_normalize(vectors), dtype=np.float32)


__all__ = ["check_finite", "l2_normalize", "transform_and_normalize"]
