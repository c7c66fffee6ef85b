"""``ShiftedFaissIndexer``: the name a Pyserini user looks for, an :class:`mlirkit.encode.Indexer` with a fitted
language transform (any method: SHIFT, centering, LIR, LSAR, LEACE)::

    from mlirkit.encoders import load_encoder
    from mlirkit.shift import ShiftedFaissIndexer

    enc = load_encoder("multilingual-e5-small-q4")
    ShiftedFaissIndexer("indexes/debian-shift", enc, transform="shift-e5.safetensors",
                        save_embeddings=True).index(docs)

Each document vector is ``normalize(T(z))``: for SHIFT ``normalize(z - alpha * V_lang)`` (source-language and
unknown-language documents ``normalize(z)``); SHIFT never touches queries, so any Pyserini ``FaissSearcher``
can search the index (a method that transforms queries too needs them transformed at search time:
``mlirkit.search``, or the Pyserini encoder wrappers). ``langid_threshold`` switches on language
identification for unlabelled documents (see :mod:`mlirkit.transforms.langid`).
"""
from __future__ import annotations

import os
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.encode.indexer import Indexer
from mlirkit.encoders.base import Encoder
from mlirkit.transforms.transform import LanguageTransform

__all__ = ["ShiftedFaissIndexer"]


class ShiftedFaissIndexer(Indexer):
    """:class:`~mlirkit.encode.Indexer` whose ``transform`` (a fitted estimator or its file) is required."""

    def __init__(self, index_dir: str | os.PathLike, encoder: Encoder, *,
                 transform: LanguageTransform | str | os.PathLike, **kwargs: Any) -> None:
        if transform is None:
            raise MlirkitError("ShiftedFaissIndexer needs a fitted transform (or its file); "
                               "mlirkit.encode.Indexer indexes without one")
        super().__init__(index_dir, encoder, transform=transform, **kwargs)
