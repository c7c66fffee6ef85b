"""Applying a transform never fits it: a spy on every fit (the estimators' ``fit_blocks``/``partial_fit`` and
the fit step for the languages a transform lacks, down to the corpus statistics it reads) sees no call from
``transform``, from encoding a chunk, from ``apply_to_index`` or from ``Searcher.search``. Filling the
languages without vectors from the corpus is the named fit step, run once (``fill_missing_from_index``, the
``Searcher`` when told another transform or policy, or the ``Indexer`` after the last document), and its
result is reused."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import save_transform
from tests.search.test_one_index_every_policy import bed

FITS = [("mlirkit.transforms.transform", "LanguageTransform.fit_blocks"),
        ("mlirkit.transforms.transform", "LanguageTransform.partial_fit"),
        ("mlirkit.transforms.transform", "LanguageTransform._finish_fit"),
        ("mlirkit.transforms.hybrid", "fill_missing_from_corpus"),
        ("mlirkit.transforms.corpus_fit", "corpus_vectors"),
        ("mlirkit.transforms.corpus_fit", "language_means"),
        ("mlirkit.transforms.corpus_fit", "LanguageMeans.update"),
        ("mlirkit.transforms.centering", "LanguageSums.update"),
        ("mlirkit.transforms.mining", "mined_recipe")]


@pytest.fixture
def fits(monkeypatch) -> Counter:
    """``{name: calls}`` of every fit while the test runs."""
    import importlib

    calls: Counter = Counter()
    for module, name in FITS:
        owner = importlib.import_module(module)
        *path, attr = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, attr)

        def spy(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, attr, spy)
    return calls


def test_transform_and_encoding_a_chunk_never_fit(fits):
    from mlirkit.base.vectors import transform_and_normalize
    from mlirkit.transforms import TRANSFORMS

    enc, t, docs, _ = bed()
    x = enc.encode_docs([d.text for d in docs], [d.lang for d in docs])
    langs = [d.lang for d in docs]
    fitted = [t] + [TRANSFORMS.get(m)("en").fit(x, langs) for m in ("centering", "lir", "lsar", "leace")]
    fits.clear()
    for f in fitted:
        for side in f.sides:
            f.transform(x, langs, side)
            transform_and_normalize(x, langs, side, f, 0.8, counts=Counter())
    assert not fits


def test_apply_to_index_applies_what_the_fit_step_returned(tmp_path, fits):
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex
    from mlirkit.shift import apply_to_index, fill_missing_from_index

    enc, t, docs, _ = bed()  # the pairs lack ja and ko, which the corpus holds
    save_transform(t, tmp_path / "pivot.shift")
    Indexer(tmp_path / "plain", enc, save_embeddings=True, show_progress=False).index(docs)
    fits.clear()
    with pytest.raises(MlirkitError, match="fit them from the corpus first"):
        apply_to_index(tmp_path / "plain", tmp_path / "pivot.shift", tmp_path / "refused")
    assert not fits and not (tmp_path / "refused").exists()
    filled = fill_missing_from_index(tmp_path / "plain", tmp_path / "pivot.shift")  # the fit step, once
    assert fits["fill_missing_from_corpus"] == 1
    assert set(filled.meta["missing_languages"]["filled"]) == {"ja", "ko"}
    fits.clear()
    stats = apply_to_index(tmp_path / "plain", filled, tmp_path / "shifted", alpha=0.9)
    apply_to_index(tmp_path / "plain", tmp_path / "pivot.shift", tmp_path / "kept", missing="keep")
    assert not fits
    assert set(stats["missing_languages"]["filled"]) == {"ja", "ko"}
    stored = DenseIndex(tmp_path / "shifted")
    assert set(stored.transform["missing_languages"]["filled"]) == {"ja", "ko"}


def test_searching_reuses_the_fill_stored_in_the_index(tmp_path, fits):
    from mlirkit.encode import Indexer
    from mlirkit.search.searcher import Searcher

    enc, t, docs, queries = bed()
    save_transform(t, tmp_path / "pivot.shift")
    fits.clear()
    Indexer(tmp_path / "one", enc, transform=tmp_path / "pivot.shift", save_embeddings=True,
            show_progress=False).index(docs)
    assert fits["corpus_vectors"] == 1  # the index-time fit step, once, stored
    fits.clear()
    searcher = Searcher(tmp_path / "one", enc, query_shift="cosine")  # the index's own (filled) shift
    searcher.search(queries, k=10)
    assert not fits
    told = Searcher(tmp_path / "one", enc, query_shift="cosine", transform=tmp_path / "pivot.shift")
    assert fits["fill_missing_from_corpus"] == 1  # another transform: fitted once, here
    fits.clear()
    told.search(queries, k=10)
    told.search(queries[:3], k=5)
    assert not fits
