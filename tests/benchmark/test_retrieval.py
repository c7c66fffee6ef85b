"""mlirkit.benchmark.retrieval.score_rows: every row scored as retrieve scores its language (the query side and the
document side of its language's transform), whether the block's languages share one document side or not."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.benchmark.retrieval import Condition, encode_side, score_rows, transform_for_query_lang
from mlirkit.transforms import CenteringTransform, ShiftTransform
from mlirkit.transforms.defaults import DEFAULT_ALPHA

LANGS = ("en", "de", "fr")


@pytest.fixture(scope="module")
def bed():
    rng = np.random.default_rng(5)
    doc_langs = [LANGS[i % 3] for i in range(60)]
    docs = rng.normal(size=(60, 12)).astype(np.float32) + np.array([LANGS.index(la) for la in doc_langs])[:, None]
    query_langs = [LANGS[i % 3] for i in range(25)]
    queries = rng.normal(size=(25, 12)).astype(np.float32)
    means = {la: docs[np.array(doc_langs) == la].mean(axis=0) for la in LANGS}
    shift = ShiftTransform.from_tensors({la: means[la] - means["en"] for la in LANGS if la != "en"}, source_lang="en")
    centering = CenteringTransform("en").fit(docs, doc_langs)
    return docs, doc_langs, queries, query_langs, [Condition("base"), Condition("shift", "x", 0.6, shift),
                                                   Condition("centering", "x", None, centering)]


def per_language(cond: Condition, docs, doc_langs, queries, query_langs, rows: np.ndarray) -> np.ndarray:
    """Each row's scores from its own language's product, as retrieve computes them."""
    alpha = DEFAULT_ALPHA if cond.alpha is None else cond.alpha
    out = np.empty((len(rows), len(docs)), dtype=np.float32)
    for i, row in enumerate(rows):
        lang = query_langs[row]
        t = None if cond.transform is None else transform_for_query_lang(cond.transform, lang)
        out[i] = encode_side(queries[[row]], [lang], "query", t, alpha) @ encode_side(docs, doc_langs, "doc", t, alpha).T
    return out


def test_every_row_is_scored_with_its_own_language_s_sides(bed):
    docs, doc_langs, queries, query_langs, conditions = bed
    rows = np.random.default_rng(0).permutation(25)[:17]  # languages interleaved, out of order
    for cond in conditions:
        got = score_rows(cond, docs, doc_langs, queries, query_langs)(rows)
        assert got.shape == (17, 60) and got.dtype == np.float32
        np.testing.assert_allclose(got, per_language(cond, docs, doc_langs, queries, query_langs, rows), atol=2e-6)
    shifted = score_rows(conditions[1], docs, doc_langs, queries, query_langs)(rows)
    base = score_rows(conditions[0], docs, doc_langs, queries, query_langs)(rows)
    assert not np.allclose(shifted, base, atol=1e-3)  # the SHIFT bed moves the scores
