"""Language vectors from mined pseudo-parallel pairs (the research variants of experiments/mining_variants.py over
the product's loop): the margin, the selections, the loop and its fallback."""
from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from experiments.corpus_variants import fit_corpus_shift
from experiments.mining_variants import SELECTIONS, fit_mined_shift, mine_pairs
from mlirkit.transforms.mining import mined_language_vector, union_knn_pairs
from tests.transforms.toy_corpora import even, skewed, unit

ENC = {"class": "test", "model": "toy"}


def _brute_force_pairs(x, y, k, threshold):
    """The ratio margin of Artetxe & Schwenk (2019) written out with full similarity matrices."""
    cos = x @ y.T
    k = min(k, len(x), len(y))
    r_x = np.sort(cos, axis=1)[:, ::-1][:, :k].mean(axis=1)
    r_y = np.sort(cos, axis=0)[::-1, :][:k, :].mean(axis=0)
    nn_x = np.argsort(-cos, axis=1)[:, :k]
    nn_y = np.argsort(-cos, axis=0)[:k, :].T
    margin = cos / ((r_x[:, None] + r_y[None, :]) / 2)
    best_x = {i: int(nn_x[i][np.argmax(margin[i, nn_x[i]])]) for i in range(len(x))}
    best_y = {j: int(nn_y[j][np.argmax(margin[nn_y[j], j])]) for j in range(len(y))}
    return {(i, j): margin[i, j] for i, j in best_x.items() if best_y[j] == i and margin[i, j] >= threshold}


@pytest.mark.parametrize("k", [1, 3, 6])
def test_mined_pairs_equal_the_margin_formula_written_out(k):
    rng = np.random.default_rng(k)
    x, y = unit(rng.normal(size=(23, 8))), unit(rng.normal(size=(17, 8)))
    for threshold in (0.0, 1.0, 1.05):
        want = _brute_force_pairs(x, y, k, threshold)
        got = mine_pairs(x.astype(np.float32), y.astype(np.float32), k=k, threshold=threshold, chunk_rows=5)
        assert {(int(a), int(b)) for a, b in zip(got.tgt, got.src)} == set(want)
        for a, b, m in zip(got.tgt, got.src, got.margin):
            assert m == pytest.approx(want[(int(a), int(b))], rel=1e-5)
        assert len(set(got.tgt.tolist())) == len(got) == len(set(got.src.tolist()))  # one pair per document
    # a threshold keeps a subset of the mutual pairs
    assert len(mine_pairs(x, y, k=k, threshold=1.05)) <= len(mine_pairs(x, y, k=k, threshold=0.0)) == \
        mine_pairs(x, y, k=k, threshold=0.0).mutual


def test_mining_finds_the_translations_of_a_parallel_corpus_and_their_vector():
    rng = np.random.default_rng(1)
    d, n = 16, 50
    topics = rng.normal(size=(n, d))
    offset = 2 * unit(rng.normal(size=(1, d)))[0]
    en = topics + 0.05 * rng.normal(size=(n, d))
    de = topics[::-1] + offset + 0.05 * rng.normal(size=(n, d))  # de row i translates en row n-1-i
    for center in (False, True):
        v, record = mined_language_vector(de, en, np.zeros(d), k=4, center=center, select=partial(mine_pairs, threshold=1.0))
        assert record["fallback"] is False and record["converged"] is True
        assert record["pairs"] == n
        # with every translation found, the mined vector is SHIFT's pair-fitted vector
        np.testing.assert_allclose(v, (de - en[::-1]).mean(axis=0), atol=1e-10)
    json.dumps(record)
    # union-kNN with k = 1: each translation listed from both sides, the same vector
    v, record = mined_language_vector(de, en, np.zeros(d), k=1, select=union_knn_pairs)
    assert record["converged"] and record["pairs"] == 2 * n and record["rounds"][-1]["mutual"] == n
    np.testing.assert_allclose(v, (de - en[::-1]).mean(axis=0), atol=1e-10)


def test_mined_vectors_are_closer_to_the_language_offset_than_corpus_means_under_topic_skew():
    embs, langs, offsets = skewed()
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    mined = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=False)
    for lang in ("de", "fr"):
        err_corpus = np.linalg.norm(corpus.params_[lang] - offsets[lang])
        err_mined = np.linalg.norm(mined.params_[lang] - offsets[lang])
        assert err_mined < 0.5 * err_corpus, (lang, err_mined, err_corpus)
        assert mined.meta["provenance"][lang]["from"] == "mined-pairs"
        rounds = mined.meta["mining"]["languages"][lang]["rounds"]
        assert len(rounds) >= 2 and rounds[-1]["pairs"] >= 10 and rounds[-1]["margin"]["min"] >= 1.0
    assert mined.meta["mining"]["k"] == 4 and mined.meta["mining"]["threshold"] == 1.0
    # centring changes the cosines, never the differences: on a parallel corpus it finds the same vector
    assert mined.meta["mining"]["center"] is False


def test_mining_is_independent_of_chunking_and_falls_back_with_too_few_pairs(caplog):
    embs, langs, _ = skewed(per=40)
    a = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=False, chunk_rows=7)
    b = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=False)
    for lang in a.params_:
        np.testing.assert_array_equal(a.params_[lang], b.params_[lang])
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    few = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=False, min_pairs=1000)
    for lang in few.params_:
        np.testing.assert_array_equal(few.params_[lang], corpus.params_[lang])
        assert few.meta["provenance"][lang]["from"] == "corpus"
        assert few.meta["mining"]["languages"][lang]["fallback"] is True
    assert "keeping the initial (corpus-fitted) vector" in caplog.text
    with pytest.raises(MlirkitError, match="threshold"):
        fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=False, threshold=0)
    with pytest.raises(MlirkitError, match="source-language"):
        fit_mined_shift(embs[40:], langs[40:], "en", encoder=ENC, selection="mutual-margin", center=False, initial=corpus)
    with pytest.raises(MlirkitError, match="max_rounds"):
        mined_language_vector(embs[:5], embs[5:9], np.zeros(embs.shape[1]), max_rounds=0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_union_knn_is_closer_to_the_offset_than_mutual_pairs_when_topics_are_shared(seed):
    embs, langs, offsets = even(seed)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    mutual = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=True)
    union = fit_mined_shift(embs, langs, "en", encoder=ENC, center=True, selection="union-knn")
    err = {name: max(np.linalg.norm(t.params_[l] - offsets[l]) for l in ("de", "fr"))
           for name, t in (("corpus", corpus), ("mutual", mutual), ("union", union))}
    assert err["union"] < err["mutual"] < err["corpus"], err
    m = union.meta["mining"]
    assert m["selection"] == "union-knn" and m["threshold"] is None and "both directions" in m["formula"]
    assert union.meta["provenance"]["de"]["pairs"] == 4 * (150 + 150)
    assert mutual.meta["mining"]["selection"] == "mutual-margin" and mutual.meta["mining"]["threshold"] == 1.0


def test_unknown_selection_names_did_you_mean():
    embs, langs, _ = even(0, per=20)
    assert SELECTIONS.names() == ["mutual-margin", "union-knn"]
    with pytest.raises(MlirkitError, match="did you mean: union-knn"):
        fit_mined_shift(embs, langs, "en", encoder=ENC, selection="union-nn")


