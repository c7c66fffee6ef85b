"""Transform operations that read an index directory: vectors fitted on its documents and label-free alpha.

The maths lives in :mod:`mlirkit.transforms` (``recipes``, ``corpus_fit``, ``alpha_select``); these functions
feed it the untransformed document embeddings and languages of an mlirkit index.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.vectors import check_finite
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.index import DenseIndex
from mlirkit.index.layout import LANGS_FILE
from mlirkit.transforms.alpha_select import AlphaSelection, select_alpha
from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS, fit_corpus_shift
from mlirkit.transforms.recipes import DEFAULT_VECTORS, fit_recipe
from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)


def index_document_embeddings(index_dir: str | os.PathLike) -> tuple[np.ndarray, list[str], dict[str, Any]]:
    """``(untransformed embeddings, langs, encoder fingerprint)`` of an mlirkit index directory.

    Uses ``embeddings.npy`` (``--save-embeddings``); without it, the indexed vectors when the index holds
    untransformed (L2-normalised) vectors; an index of transformed vectors without embeddings is refused.
    """
    index = DenseIndex(index_dir)
    if index.encoder is None:
        raise MlirkitError(f"{index_dir} has no meta.json: its encoder is unknown (an mlirkit index is needed)")
    if not (Path(index_dir) / LANGS_FILE).is_file():
        raise MlirkitError(f"{index_dir} has no langs file: document languages are needed to fit corpus vectors")
    if index.has_embeddings:
        embs = index.embeddings(mmap=True)
    elif index.transform:
        raise MlirkitError(f"{index_dir} holds transformed vectors ({index.transform.get('method')}) and no "
                           f"embeddings.npy: re-encode with {option('save_embeddings', True)} to fit corpus vectors")
    else:
        logger.info("%s has no embeddings.npy: fitting on the indexed (normalised) vectors", index_dir)
        embs = index.indexed_vectors()
    check_finite("document vectors", embs, index_dir)
    return embs, list(index.langs), dict(index.encoder)


def fit_corpus_shift_from_index(index_dir: str | os.PathLike, source_lang: str, *, relative_to: str = "source",
                                min_docs: int = DEFAULT_MIN_DOCS, only_langs: Sequence[str] | None = None,
                                meta: dict[str, Any] | None = None,
                                embeddings: tuple[np.ndarray, list[str], dict[str, Any]] | None = None
                                ) -> LanguageTransform:
    """:func:`fit_corpus_shift` on the documents of an index directory (its encoder is recorded).

    ``embeddings``: what :func:`index_document_embeddings` gave for ``index_dir``, when the caller reads
    them anyway (``fit --topic-rank`` also needs them: the index is read once)."""
    embs, langs, encoder = index_document_embeddings(index_dir) if embeddings is None else embeddings
    extra = {"normalized": bool(encoder.get("normalize", False)), **(meta or {})}
    return fit_corpus_shift(embs, langs, source_lang, encoder=encoder, relative_to=relative_to, min_docs=min_docs,
                            only_langs=only_langs, origin=str(index_dir), meta=extra)


def fit_from_index(index_dir: str | os.PathLike, source_lang: str, *, vectors: str = DEFAULT_VECTORS,
                   min_docs: int = DEFAULT_MIN_DOCS, only_langs: Sequence[str] | None = None) -> LanguageTransform:
    """SHIFT vectors of the recipe ``vectors`` (``"mined"`` or ``"corpus"``, :mod:`mlirkit.transforms.recipes`)
    fitted on the documents of an index directory, read once; the index's encoder and the recipe's choices
    are recorded in the transform's metadata."""
    embs, langs, encoder = index_document_embeddings(index_dir)
    return fit_recipe(embs, langs, source_lang, vectors=vectors, encoder=encoder, min_docs=min_docs,
                      only_langs=only_langs, origin=str(index_dir),
                      meta={"normalized": bool(encoder.get("normalize", False))})


def select_alpha_for_index(index_dir: str, transform: LanguageTransform, **kwargs: Any) -> AlphaSelection:
    """:func:`select_alpha` on an index directory's untransformed document vectors."""
    embs, langs, encoder = index_document_embeddings(index_dir)
    transform.check_encoder(encoder, dim=embs.shape[1])
    return select_alpha(np.asarray(embs, dtype=np.float32), langs, transform, **kwargs)
