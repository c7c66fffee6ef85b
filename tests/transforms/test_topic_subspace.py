"""The topic subspace of a corpus: the pooled within-language covariance, its noise-edge rank, the skew test
(projecting vectors out of it with the investigation's knobs: tests/experiments/test_topic_projection.py)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.topic_subspace import marchenko_pastur_rank, skew_test, topic_subspace, within_language_covariance

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


def test_topic_rank_refusals():
    embs, langs, _, _ = topic_skewed(seed=4, d=8, r=2, n=20)
    for bad in (-1, 8, "many"):
        with pytest.raises(MlirkitError, match="topic rank"):
            topic_subspace(embs, langs, bad)
    with pytest.raises(MlirkitError, match=r"topic rank \(rank\) must be in \[0, 7\]"):
        topic_subspace(embs, langs, 8)


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
