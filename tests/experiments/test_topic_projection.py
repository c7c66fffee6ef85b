"""Topic-robust language vectors: the pooled within-language (topic) subspace projected out with the knobs of
experiments/topic_projection.py (a given rank, any SHIFT vectors)."""
from __future__ import annotations

import numpy as np
import pytest

from experiments.corpus_variants import fit_corpus_shift
from experiments.mining_variants import fit_mined_shift
from experiments.topic_projection import parse_topic_rank, remove_topic
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.topic_subspace import topic_subspace
from tests.transforms.toy_corpora import topic_skewed

ENC = {"class": "test", "model": "toy"}


def test_projection_equals_the_formula_and_is_recorded():
    embs, langs, _, _ = topic_skewed(seed=1)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    sub = topic_subspace(embs, langs, 3)
    out = remove_topic(corpus, sub)
    for lang, v in corpus.params_.items():
        u = sub.basis
        want = (np.eye(u.shape[0]) - u @ u.T) @ v.astype(np.float64)
        np.testing.assert_allclose(out.params_[lang], want, atol=1e-5)
        np.testing.assert_allclose(u.T @ out.params_[lang], 0.0, atol=1e-5)  # nothing left in the subspace
        e = np.sum((u.T @ v.astype(np.float64)) ** 2) / np.sum(v.astype(np.float64) ** 2)
        assert out.meta["topic_robust"]["energy_removed"][lang] == pytest.approx(e, abs=1e-6)
    rec = out.meta["topic_robust"]
    assert rec["rank"] == 3 and rec["rule"] == "given" and rec["documents"] == 600 and rec["languages"] == 3
    assert out.meta["corpus_fit"] == corpus.meta["corpus_fit"]  # the original provenance is kept


def test_topic_robust_vectors_recover_planted_offsets_that_corpus_means_miss():
    embs, langs, offsets, _ = topic_skewed(seed=2)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    robust = remove_topic(corpus, topic_subspace(embs, langs))
    mined = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", topic_rank="auto", center=True)
    assert mined.meta["topic_robust"]["rank"] == 4
    for lang in ("de", "fr"):
        err_corpus = np.linalg.norm(corpus.params_[lang] - offsets[lang])
        assert err_corpus > 1.0  # the topic skew biases the corpus means
        for t in (robust, mined):
            err = np.linalg.norm(t.params_[lang] - offsets[lang])
            assert err < 0.1 * err_corpus, (lang, err, err_corpus)
        rounds = mined.meta["mining"]["languages"][lang]["rounds"]
        assert mined.meta["provenance"][lang]["from"] == "mined-pairs" and rounds[-1]["pairs"] >= 10
    # an offset partly inside the topic subspace loses exactly that part
    sub = topic_subspace(embs, langs)
    v = offsets["de"] + 1.0 * sub.basis[:, 0]
    np.testing.assert_allclose(sub.project_out(v), offsets["de"] - sub.basis @ (sub.basis.T @ offsets["de"]),
                               atol=1e-12)


def test_parse_topic_rank():
    assert parse_topic_rank("auto") == "auto" and parse_topic_rank("5") == 5
    assert parse_topic_rank("AUTO") == parse_topic_rank(" Auto ") == "auto"
    for bad in ("-2", "x", "1.5"):
        with pytest.raises(MlirkitError, match="^--topic-rank must be"):
            parse_topic_rank(bad)


def test_skew_test_projects_topic_skewed_vectors_and_keeps_unskewed_ones():
    embs, langs, offsets, _ = topic_skewed(seed=8)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    out = remove_topic(corpus, topic_subspace(embs, langs), test_level=0.01)
    assert out.meta["topic_robust"]["applied"] is True and out.meta["topic_robust"]["skew_test"]["skewed"]
    assert np.linalg.norm(out.params_["de"] - offsets["de"]) < 0.1 * np.linalg.norm(corpus.params_["de"] - offsets["de"])
    # every language on the same topics: the corpus means are the offsets, the test keeps them
    embs, langs, offsets, _ = topic_skewed(seed=9, skew=0.0, n=400)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    out = remove_topic(corpus, topic_subspace(embs, langs), test_level=0.01)
    rec = out.meta["topic_robust"]
    assert rec["applied"] is False and rec["skew_test"]["skewed"] is False and rec["energy_removed"]["de"] == 0.0
    for lang in ("de", "fr"):
        np.testing.assert_array_equal(out.params_[lang], corpus.params_[lang])
    mined = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=True, topic_rank="auto", topic_test_level=0.01)
    plain = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=True)
    assert mined.meta["topic_robust"]["applied"] is False
    for lang in ("de", "fr"):
        np.testing.assert_allclose(mined.params_[lang], plain.params_[lang], atol=1e-6)
    with pytest.raises(MlirkitError, match="needs a topic rank"):
        fit_mined_shift(embs, langs, "en", encoder=ENC, topic_test_level=0.01)
