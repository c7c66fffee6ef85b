"""``ShiftedFaissIndexer``: the encode-time SHIFT indexer (documents shifted by language, then normalised).

A thin subclass of :class:`mlirkit.encode.Indexer` that requires a SHIFT transform::

    from mlirkit.encoders import load_encoder
    from mlirkit.shift import ShiftedFaissIndexer

    enc = load_encoder("multilingual-e5-small-q4")
    ShiftedFaissIndexer(enc, "indexes/debian-shift", transform="shift-e5.safetensors", alpha=0.6,
                        save_embeddings=True).index(docs)

Each document vector is ``normalize(z - alpha * V_lang)`` (source-language and unknown-language documents
``normalize(z)``); queries are never touched, so any Pyserini ``FaissSearcher`` can search the index.
``langid_threshold`` switches on language identification for unlabelled documents (see
:mod:`mlirkit.transforms.langid`).
"""
from __future__ import annotations

import os
from typing import Any

from mlirkit.encode.indexer import Indexer
from mlirkit.base.errors import MlirkitError
from mlirkit.encoders.base import Encoder
from mlirkit.transforms.alpha import AlphaLike
from mlirkit.transforms.transform import LanguageTransform


class ShiftedFaissIndexer(Indexer):
    def __init__(self, encoder: Encoder, index_dir: str | os.PathLike, *,
                 transform: LanguageTransform | str | os.PathLike, alpha: AlphaLike = 1.0,
                 langid_threshold: float | None = None,
                 **kwargs: Any) -> None:
        if transform is None:
            raise MlirkitError("ShiftedFaissIndexer needs a SHIFT transform file")
        super().__init__(encoder, index_dir, transform=transform, alpha=alpha, langid_threshold=langid_threshold,
                         **kwargs)
        if self.transform.method != "shift":
            raise MlirkitError(f"ShiftedFaissIndexer needs a shift transform, {self.transform_path} is "
                               f"{self.transform.method} (use mlirkit.encode.Indexer for other transforms)")
