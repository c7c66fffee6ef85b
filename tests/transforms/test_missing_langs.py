"""Languages a transform lacks: filled from the corpus (the hybrid's corpus side) or kept, and recorded."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.centering import CenteringTransform
from mlirkit.transforms.corpus_fit import language_means
from mlirkit.transforms.defaults import DEFAULT_MISSING
from mlirkit.transforms.hybrid import (fill_missing, fill_missing_from_corpus, filled_any,
                                       missing_languages)
from mlirkit.transforms.shift_transform import ShiftTransform

RNG = np.random.default_rng(11)
LANGS = ["en"] * 30 + ["de"] * 30 + ["ar"] * 25 + ["hi"] * 5 + ["und"] * 4
EMBS = RNG.normal(size=(len(LANGS), 6)).astype(np.float32)
PAIRS = ShiftTransform.from_tensors({"de": RNG.normal(size=6)}, encoder={"model": "toy"}, source_lang="en",
                       meta={"pairs": {"de": 100}})


def mean(lang):
    return EMBS[np.array(LANGS) == lang].astype(np.float64).mean(axis=0)


def test_missing_languages_skip_source_unknown_and_covered():
    assert missing_languages(PAIRS, {"en": 30, "de": 30, "ar": 25, "hi": 5, "und": 4}) == {"ar": 25, "hi": 5}
    centering = CenteringTransform.from_tensors({"de": np.ones(6)}, encoder={}, source_lang="en")
    assert missing_languages(centering, {"en": 1, "de": 1}) == {"en": 1}  # centering moves the source too


def test_corpus_fill_is_mean_of_language_minus_mean_of_source(caplog):
    assert DEFAULT_MISSING == "corpus"
    with caplog.at_level(logging.WARNING):
        t = fill_missing_from_corpus(PAIRS, EMBS, LANGS, origin="idx")
    np.testing.assert_allclose(t.params_["ar"], mean("ar") - mean("en"), atol=1e-6)
    np.testing.assert_array_equal(t.params_["de"], PAIRS.params_["de"])  # pair vectors stay
    assert "hi" not in t.params_  # 5 documents: below the 20 a language mean needs
    record = t.meta["missing_languages"]
    assert record["policy"] == "corpus" and record["filled"] == {"ar": 25}
    assert record["kept"] == {"hi": "5 documents (a corpus vector needs 20)"}
    assert t.meta["provenance"]["ar"] == {"from": "corpus", "docs": 25}
    assert t.meta["provenance"]["de"]["from"] == "pairs" and filled_any(t)
    assert t.describe(0.5)["missing_languages"] == record  # what an index's meta.json records
    lines = [r.getMessage() for r in caplog.records if "no vector" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("idx: ") and "ar filled from the corpus" in lines[0]
    assert "hi left unshifted" in lines[0] and "missing='keep'" in lines[0]  # a Python caller's spelling


def test_keep_leaves_vectors_and_file_and_records():
    t = fill_missing_from_corpus(PAIRS, EMBS, LANGS, policy="keep")
    assert t.params_.keys() == PAIRS.params_.keys() and not filled_any(t)
    assert t.meta["missing_languages"] == {"policy": "keep", "filled": {}, "kept": {"ar": "policy keep",
                                                                                    "hi": "policy keep"}}
    assert "missing_languages" not in PAIRS.meta  # the given transform is not modified
    x = t.transform(EMBS, LANGS, "doc", 1.0)
    np.testing.assert_array_equal(x[np.array(LANGS) == "ar"], EMBS[np.array(LANGS) == "ar"])


def test_nothing_missing_returns_the_transform_itself():
    full = fill_missing_from_corpus(PAIRS, EMBS, LANGS)
    again = fill_missing_from_corpus(full, EMBS, LANGS)  # ar has its vector now; hi is still too small
    assert again.params_.keys() == full.params_.keys() and not filled_any(again)
    covered = ShiftTransform.from_tensors({"de": np.ones(6)}, encoder={}, source_lang="en")
    assert fill_missing(covered, {"en": 3, "de": 3}) is covered


def test_fill_refusals_and_fallbacks():
    means, counts = language_means(EMBS, LANGS)
    with pytest.raises(MlirkitError, match="unknown policy 'corpse'.*did you mean: corpus"):
        fill_missing(PAIRS, counts, means, policy="corpse")
    centering = CenteringTransform.from_tensors({"de": np.ones(6), "en": np.ones(6)}, encoder={}, source_lang="en")
    with pytest.raises(MlirkitError, match="filling them from the corpus is for shift transforms"):
        fill_missing(centering, counts, means, policy="corpus", explicit=True)
    kept = fill_missing(centering, counts, means)  # the default cannot fill centering: kept, said so
    assert kept.meta["missing_languages"]["kept"]["ar"] == "no corpus fill for centering"
    no_src = {k: v for k, v in counts.items() if k != "en"}
    t = fill_missing(PAIRS, no_src, means)
    assert t.meta["missing_languages"]["kept"]["ar"] == "no en (source-language) documents in the corpus"


def test_codes_are_canonical():
    langs = ["en"] * 25 + ["dt"] * 25
    embs = RNG.normal(size=(50, 6)).astype(np.float32)
    t = fill_missing_from_corpus(PAIRS, embs, langs)
    assert "nl" in t.params_ and t.meta["missing_languages"]["filled"] == {"nl": 25}
