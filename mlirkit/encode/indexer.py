"""Streaming indexer: documents -> encoder -> (language transform) -> L2 norm -> FAISS index directory."""
from __future__ import annotations

import logging
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.encoders.base import Encoder
from mlirkit.base.errors import MlirkitError
from mlirkit.index.layout import TRANSFORM_FILE
from mlirkit.io.records import Doc
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)


@dataclass
class IndexStats:
    documents: int = 0
    seconds: float = 0.0
    lang_counts: Counter = field(default_factory=Counter)

    @property
    def docs_per_second(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0


def chunked(items: Iterable[Doc], size: int) -> Iterator[list[Doc]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


class Indexer:
    """Encode documents into an index directory that Pyserini's ``FaissSearcher`` opens.

    Document vectors are ``normalize(T(f(d)))``: the encoder output ``f(d)``, the language transform
    ``T`` if one is given (e.g. SHIFT ``z - alpha * V_lang(d)``), then L2 normalisation, so inner
    product = cosine. The untransformed ``f(d)`` can be kept in ``embeddings.npy`` for post-hoc
    transforms and alpha sweeps. Memory is bounded by ``chunk_size`` documents plus the index itself.
    """

    def __init__(self, encoder: Encoder, index_dir: str | os.PathLike, *,
                 transform: LanguageTransform | str | os.PathLike | None = None, alpha: AlphaLike = 1.0,
                 save_embeddings: bool = False, overwrite: bool = False, batch_size: int | None = None,
                 chunk_size: int = 2048, strict: bool = False, force: bool = False,
                 langid_threshold: float | None = None,
                 show_progress: bool = True, encoder_name: str | None = None,
                 encoder_options: dict[str, Any] | None = None, extra_meta: dict[str, Any] | None = None,
                 index_type: Any = None) -> None:
        self.alpha = Alpha.coerce(alpha)  # a bad alpha fails first
        self.encoder = encoder
        self.index_dir = Path(index_dir)
        self.transform_path: Path | None = None
        if isinstance(transform, (str, os.PathLike)):
            from mlirkit.transforms.io import load_transform

            self.transform_path = Path(transform)
            transform = load_transform(self.transform_path)
        elif transform is not None:
            self.transform_path = Path(transform.path)
        self.transform = transform
        if transform is not None:
            transform.check_encoder(encoder.fingerprint, force=force)
        if langid_threshold is not None:
            if transform is None:
                raise MlirkitError("language identification (langid_threshold) needs a transform with a classifier")
            transform.use_langid(langid_threshold)
        self.save_embeddings = save_embeddings
        self.overwrite = overwrite
        self.batch_size = batch_size
        self.chunk_size = chunk_size
        self.strict = strict
        self.show_progress = show_progress
        self.index_type = index_type  # IndexSpec, type name or None (flat); see mlirkit.index.types
        self.extra_meta = {"encoder_name": encoder_name, "encoder_options": encoder_options or {},
                           **(extra_meta or {})}

    def index(self, docs: Iterable[Doc], total: int | None = None) -> IndexStats:
        from tqdm.auto import tqdm

        from mlirkit.index import IndexWriter

        transform_meta = self.transform.describe(self.alpha) if self.transform is not None else None
        stats = IndexStats()
        start = time.perf_counter()
        with IndexWriter(self.index_dir, dim=self.encoder.dim, encoder=self.encoder.fingerprint, normalized=True,
                         transform=transform_meta, save_embeddings=self.save_embeddings,
                         overwrite=self.overwrite, extra_meta=self.extra_meta,
                         index_type=self.index_type) as writer, \
                tqdm(total=total, unit="doc", desc="encode", disable=not self.show_progress) as bar:
            if self.transform_path is not None:
                shutil.copyfile(self.transform_path, writer.tmp / TRANSFORM_FILE)
            for chunk in chunked(docs, self.chunk_size):
                ids = [d.doc_id for d in chunk]
                langs = [d.lang for d in chunk]
                raw = self.encoder.encode_docs([d.text for d in chunk], langs, batch_size=self.batch_size)
                vectors = transform_and_normalize(raw, langs, "doc", self.transform, self.alpha, strict=self.strict,
                                                  where=f"encoder output (documents {ids[0]!r}..{ids[-1]!r})")
                writer.add(ids, langs, vectors, raw=raw)
                stats.lang_counts.update(langs)
                stats.documents += len(chunk)
                bar.update(len(chunk))
        stats.seconds = time.perf_counter() - start
        logger.info("indexed %d documents in %.1f s (%.1f docs/s) into %s", stats.documents, stats.seconds,
                    stats.docs_per_second, self.index_dir)
        return stats
