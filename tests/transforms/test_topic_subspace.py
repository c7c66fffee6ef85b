"""Topic-robust language vectors: the pooled within-language (topic) subspace projected out."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import fit_corpus_shift
from mlirkit.transforms.mining import fit_mined_shift
from mlirkit.transforms.topic_subspace import (marchenko_pastur_rank, parse_topic_rank, remove_topic, skew_test,
                                               topic_subspace, within_language_covariance)

from tests.transforms.toy_corpora import topic_skewed

ENC = {"class": "test", "model": "toy"}


def test_within_language_covariance_is_the_pooled_covariance_written_out():
    rng = np.random.default_rng(3)
    embs = rng.normal(size=(41, 6)) + np.repeat(rng.normal(size=(3, 6)) * 4, [10, 20, 11], axis=0)
    langs = ["en"] * 10 + ["de"] * 20 + ["fr"] * 9 + ["und", ""]  # unknown-language rows are ignored
    want = sum((embs[np.asarray(langs) == l] - embs[np.asarray(langs) == l].mean(0)).T
               @ (embs[np.asarray(langs) == l] - embs[np.asarray(langs) == l].mean(0)) for l in ("en", "de", "fr"))
    want /= 39 - 3
    for chunk in (4, 65536):
        cov, n, n_langs = within_language_covariance(embs, langs, chunk_rows=chunk)
        assert (n, n_langs) == (39, 3)
        np.testing.assert_allclose(cov, want, rtol=1e-10, atol=1e-12)
    with pytest.raises(MlirkitError, match="too few"):
        within_language_covariance(embs[:2], ["en", "de"])


def test_marchenko_pastur_rank_counts_the_eigenvalues_above_the_edge():
    s = np.array([9.0, 5.0, 1.2, 1.0, 0.5, 0.3])
    edge = s.mean() * (1 + np.sqrt(6 / 50)) ** 2
    assert marchenko_pastur_rank(s, 50, 6) == (int((s > edge).sum()), pytest.approx(edge))
    # pure isotropic noise: no direction stands out; planted strong directions: exactly those
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(600, 32))
    assert topic_subspace(noise, ["en"] * 300 + ["de"] * 300).rank == 0
    embs, langs, _, topics = topic_skewed()
    sub = topic_subspace(embs, langs)
    assert sub.rank == 4 and sub.rule == "marchenko-pastur" and sub.basis.shape == (32, 4)
    # the estimated subspace is the planted one (principal angles near 0)
    assert np.linalg.svd(topics.T @ sub.basis, compute_uv=False).min() > 0.99
    assert topic_subspace(embs, langs, 2).rank == 2 and topic_subspace(embs, langs, 2).rule == "given"


def test_projection_equals_the_formula_and_is_recorded():
    embs, langs, _, _ = topic_skewed(seed=1)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    sub = topic_subspace(embs, langs, 3)
    out = remove_topic(corpus, sub)
    for lang, v in corpus.params.items():
        u = sub.basis
        want = (np.eye(u.shape[0]) - u @ u.T) @ v.astype(np.float64)
        np.testing.assert_allclose(out.params[lang], want, atol=1e-5)
        np.testing.assert_allclose(u.T @ out.params[lang], 0.0, atol=1e-5)  # nothing left in the subspace
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
        err_corpus = np.linalg.norm(corpus.params[lang] - offsets[lang])
        assert err_corpus > 1.0  # the topic skew biases the corpus means
        for t in (robust, mined):
            err = np.linalg.norm(t.params[lang] - offsets[lang])
            assert err < 0.1 * err_corpus, (lang, err, err_corpus)
        rounds = mined.meta["mining"]["languages"][lang]["rounds"]
        assert mined.meta["provenance"][lang]["from"] == "mined-pairs" and rounds[-1]["pairs"] >= 10
    # an offset partly inside the topic subspace loses exactly that part
    sub = topic_subspace(embs, langs)
    v = offsets["de"] + 1.0 * sub.basis[:, 0]
    np.testing.assert_allclose(sub.project_out(v), offsets["de"] - sub.basis @ (sub.basis.T @ offsets["de"]),
                               atol=1e-12)


def test_topic_rank_refusals():
    embs, langs, _, _ = topic_skewed(seed=4, d=8, r=2, n=20)
    for bad in (-1, 8, "many"):
        with pytest.raises(MlirkitError, match="topic rank"):
            topic_subspace(embs, langs, bad)
    assert parse_topic_rank("auto") == "auto" and parse_topic_rank("5") == 5
    assert parse_topic_rank("AUTO") == parse_topic_rank(" Auto ") == "auto"
    with pytest.raises(MlirkitError, match=r"topic rank \(rank\) must be in \[0, 7\]"):
        topic_subspace(embs, langs, 8)
    for bad in ("-2", "x", "1.5"):
        with pytest.raises(MlirkitError, match="^topic_rank must be"):
            parse_topic_rank(bad)


def test_skew_test_null_moments_and_decisions():
    rng = np.random.default_rng(7)
    embs, langs, _, _ = topic_skewed(seed=7, d=40, r=6, n=150, langs=("en", "de", "fr", "es", "it"))
    sub = topic_subspace(embs, langs)
    d, r = 40, sub.rank
    # the null: random directions' share in the subspace has mean r/d and variance 2r(d-r)/(d^2(d+2))
    shares = np.array([sub.energy_in(v) for v in rng.normal(size=(20000, d))])
    assert shares.mean() == pytest.approx(r / d, abs=3e-3)
    assert shares.var() == pytest.approx(2 * r * (d - r) / (d * d * (d + 2)), rel=0.05)
    test = skew_test(sub, list(rng.normal(size=(4, d))), 0.01)
    from statistics import NormalDist
    want = r / d + NormalDist().inv_cdf(0.99) * np.sqrt(2 * r * (d - r) / (d * d * (d + 2)) / 4)
    assert test["critical"] == pytest.approx(want, abs=1e-6) and test["null_mean"] == pytest.approx(r / d, abs=1e-6)
    # random directions are rejected about 1 % of the time
    rejections = np.mean([skew_test(sub, list(rng.normal(size=(4, d))), 0.01)["skewed"] for _ in range(2000)])
    assert rejections < 0.04
    with pytest.raises(MlirkitError, match="level"):
        skew_test(sub, [np.ones(d)], 1.5)


def test_skew_test_projects_topic_skewed_vectors_and_keeps_unskewed_ones():
    embs, langs, offsets, _ = topic_skewed(seed=8)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    out = remove_topic(corpus, topic_subspace(embs, langs), test_level=0.01)
    assert out.meta["topic_robust"]["applied"] is True and out.meta["topic_robust"]["skew_test"]["skewed"]
    assert np.linalg.norm(out.params["de"] - offsets["de"]) < 0.1 * np.linalg.norm(corpus.params["de"] - offsets["de"])
    # every language on the same topics: the corpus means are the offsets, the test keeps them
    embs, langs, offsets, _ = topic_skewed(seed=9, skew=0.0, n=400)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    out = remove_topic(corpus, topic_subspace(embs, langs), test_level=0.01)
    rec = out.meta["topic_robust"]
    assert rec["applied"] is False and rec["skew_test"]["skewed"] is False and rec["energy_removed"]["de"] == 0.0
    for lang in ("de", "fr"):
        np.testing.assert_array_equal(out.params[lang], corpus.params[lang])
    mined = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=True, topic_rank="auto", topic_test_level=0.01)
    plain = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=True)
    assert mined.meta["topic_robust"]["applied"] is False
    for lang in ("de", "fr"):
        np.testing.assert_allclose(mined.params[lang], plain.params[lang], atol=1e-6)
    with pytest.raises(MlirkitError, match="needs a topic rank"):
        fit_mined_shift(embs, langs, "en", encoder=ENC, topic_test_level=0.01)
