"""Transform operations that read an index directory: vectors fitted on its documents and label-free alpha.

The maths lives in :mod:`mlirkit.transforms` (the estimators, ``alpha_select``); these functions feed it the
untransformed document embeddings and languages of an mlirkit index: the array builder from an index
(:func:`fit_from_index`) and the label-free alpha of a fitted transform on it (:func:`select_alpha_for_index`).
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
from mlirkit.transforms.defaults import DEFAULT_INDEX_STATISTICS
from mlirkit.transforms.transform import LanguageTransform

__all__ = ["fit_from_index", "index_document_embeddings", "select_alpha_for_index"]

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


def fit_from_index(index_dir: str | os.PathLike, source_lang: str | None = None, *,
                   method: str | LanguageTransform = "shift", langs: Sequence[str] | None = None,
                   **recipe: Any) -> LanguageTransform:
    """A transform fitted on the untransformed document vectors of an index directory (read once), with no
    parallel text: ``method`` a name (``shift``, whose statistics default to ``"mined"``
    (:data:`~mlirkit.transforms.shift_transform.DEFAULT_INDEX_STATISTICS`), ``lsar``, ``leace``, ...; ``recipe``
    gives its other constructor arguments, e.g. ``vectors="corpus"``, ``rank=8``) or an unfitted estimator.
    ``langs``: the languages that get SHIFT vectors (the corpus statistics). The index's encoder is recorded."""
    from mlirkit.transforms.fit import estimator

    if method == "shift":
        recipe.setdefault("vectors", DEFAULT_INDEX_STATISTICS)
        if langs is not None:
            recipe["langs"] = langs
    elif langs is not None:
        raise MlirkitError(f"{option('langs')} selects the languages of SHIFT vectors fitted on an index, not of {method}")
    t = estimator(method, source_lang, **recipe)
    if t.needs_groups:
        raise MlirkitError(f"{t!r} is fitted on translation pairs, which an index does not have: use "
                           f"vectors='corpus' or 'mined', or fit it with --pairs / fit_from_pairs")
    embs, doc_langs, encoder = index_document_embeddings(index_dir)
    try:
        t.fit(embs, doc_langs)
    except MlirkitError as e:
        raise MlirkitError(f"{index_dir}: {e}") from None
    t.encoder = dict(encoder)
    t.meta["source"] = str(index_dir)
    t.meta["normalized"] = bool(encoder.get("normalize", False))
    if isinstance(t.meta.get("corpus_fit"), dict):
        t.meta["corpus_fit"]["origin"] = str(index_dir)
    if isinstance(t.meta.get("mining"), dict):
        t.meta["mining"]["origin"] = str(index_dir)
    return t


def select_alpha_for_index(index_dir: str, transform: LanguageTransform, **kwargs: Any) -> AlphaSelection:
    """:func:`select_alpha` on an index directory's untransformed document vectors."""
    embs, langs, encoder = index_document_embeddings(index_dir)
    transform.check_encoder(encoder, dim=embs.shape[1])
    return select_alpha(np.asarray(embs, dtype=np.float32), langs, transform, **kwargs)
