"""Named recipes for SHIFT vectors fitted on a corpus without parallel text (``python -m mlirkit.shift fit
--from-index DIR --vectors corpus|mined``).

- ``corpus``: ``V_l = mu_l - mu_src``, the difference of the language means of the corpus
  (:func:`~mlirkit.transforms.corpus_fit.fit_corpus_shift`). Exact on a parallel corpus (there it is the
  pair fit over the corpus's own translations); it absorbs topic when a corpus's languages cover
  different subjects.
- ``mined`` (the default): SHIFT's mean of differences ``x - y`` over pseudo-parallel pairs mined in the
  corpus (:func:`~mlirkit.transforms.mining.fit_mined_shift`): every document paired with its ``k = 4``
  nearest documents on the other side, in both directions (``union-knn``), cosines taken after removing
  the source-language mean (``center``), re-mined after each refit until the vector stabilises; and kept
  out of the documents' topic subspace (rank at the Marchenko-Pastur noise edge,
  :mod:`~mlirkit.transforms.topic_subspace`) when the skew test at level 0.01 finds topic in the
  corpus vectors. The skew test compares the vectors with random directions; for an encoder whose
  language offsets lie in its own high-variance directions (:data:`SKEW_TEST_INVALID`) that null does
  not hold, the test fires on every corpus and the projection removes language, so there the recipe
  keeps the mined vectors unprojected.

Measured in docs/results.md ("Language vectors without parallel text"): where the languages of a corpus
share their topics the two recipes are on par; where topics differ by language, mined vectors keep what
corpus vectors lose (e5-small: on par with in-domain translation pairs at the label-free alpha).

Every choice the recipe made is recorded in the transform's metadata under ``recipe`` (and copied into an
index's meta.json by ``apply``), next to ``mining`` and ``topic_robust`` with the details.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mlirkit.base.registry import Registry
from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS, fit_corpus_shift
from mlirkit.transforms.shift_transform import ShiftTransform

#: the recipes of ``--vectors``, name -> one-line description
VECTOR_RECIPES: Registry[str] = Registry("vectors recipe")
VECTOR_RECIPES.register("corpus", "V_l = mean(l documents) - mean(source documents)")
VECTOR_RECIPES.register("mined", "V_l = mean(x - y) over union-kNN pairs mined in the corpus (centred, iterated), "
                                 "out of the topic subspace where the skew test finds topic")
DEFAULT_VECTORS = "mined"

#: the mined recipe's choices (the best label-free setting measured, docs/results.md)
MINED = {"selection": "union-knn", "k": 4, "center": True, "topic_rank": "auto", "topic_test_level": 0.01}

#: encoder classes (the fingerprint's ``class``) for which the skew test's random-direction null does not
#: hold, with the measurement that showed it: the recipe does not project their vectors
SKEW_TEST_INVALID: dict[str, str] = {
    "usem": "USEM's language offsets lie in its high-variance directions: even its translation-pair vectors "
            "hold half their energy in the topic subspace, so the skew test fires on every corpus and the "
            "projection removes language",
}


def mined_choices(encoder: dict[str, Any]) -> dict[str, Any]:
    """The :func:`~mlirkit.transforms.mining.fit_mined_shift` keywords of the ``mined`` recipe for an encoder
    fingerprint, with ``topic_projection`` saying why the topic subspace is or is not used."""
    reason = SKEW_TEST_INVALID.get(str(encoder.get("class")))
    if reason is None:
        return {**MINED, "topic_projection": "when the skew test finds topic in the corpus vectors"}
    return {**MINED, "topic_rank": None, "topic_test_level": None,
            "topic_projection": f"off for encoder class {encoder.get('class')!r}: {reason}"}


def fit_recipe(embs: np.ndarray, langs: Sequence[str | None], source_lang: str, *, vectors: str = DEFAULT_VECTORS,
               encoder: dict[str, Any], min_docs: int = DEFAULT_MIN_DOCS, only_langs: Sequence[str] | None = None,
               origin: str | None = None, meta: dict[str, Any] | None = None) -> ShiftTransform:
    """SHIFT vectors of the recipe ``vectors`` (:data:`VECTOR_RECIPES`) from the documents ``embs`` (n, d,
    untransformed) with languages ``langs``; the choices are recorded in ``meta["recipe"]``."""
    VECTOR_RECIPES.get(vectors)  # an unknown name fails here, with a did-you-mean
    if vectors == "corpus":
        record: dict[str, Any] = {"vectors": "corpus", "formula": VECTOR_RECIPES.get("corpus")}
        return fit_corpus_shift(embs, langs, source_lang, encoder=encoder, min_docs=min_docs, only_langs=only_langs,
                                origin=origin, meta={**(meta or {}), "recipe": record})
    from mlirkit.transforms.mining import fit_mined_shift

    choices = mined_choices(encoder)
    record = {"vectors": "mined", **choices}
    kwargs = {k: v for k, v in choices.items() if k != "topic_projection"}
    return fit_mined_shift(embs, langs, source_lang, encoder=encoder, min_docs=min_docs, only_langs=only_langs,
                           origin=origin, meta={**(meta or {}), "recipe": record}, **kwargs)
