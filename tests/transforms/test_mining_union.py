"""Union-kNN pair selection of the mining loop (``selection="union-knn"``): formula, even-topic corpora, CLI
(the parallel-corpus case is in test_mining.py, beside the mutual-margin one)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import fit_corpus_shift
from mlirkit.transforms.mining import SELECTIONS, fit_mined_shift, union_knn_pairs
from tests.transforms.toy_corpora import even, unit

ENC = {"class": "test", "model": "toy"}


@pytest.mark.parametrize("k", [1, 3, 6])
def test_union_knn_pairs_equal_both_directions_neighbour_lists_written_out(k):
    rng = np.random.default_rng(10 + k)
    x, y = unit(rng.normal(size=(23, 8))), unit(rng.normal(size=(17, 8)))
    cos = x @ y.T
    nn_x = np.argsort(-cos, axis=1)[:, :k]
    nn_y = np.argsort(-cos, axis=0)[:k, :].T
    want = sorted([(i, int(j)) for i in range(len(x)) for j in nn_x[i]]
                  + [(int(i), j) for j in range(len(y)) for i in nn_y[j]])
    got = union_knn_pairs(x.astype(np.float32), y.astype(np.float32), k=k, chunk_rows=5)
    assert sorted(zip(got.tgt.tolist(), got.src.tolist())) == want
    assert len(got) == k * (len(x) + len(y))
    # mutual: pairs listed from both sides
    fwd = {(i, int(j)) for i in range(len(x)) for j in nn_x[i]}
    bwd = {(int(i), j) for j in range(len(y)) for i in nn_y[j]}
    assert got.mutual == len(fwd & bwd)
    # the recorded margins and cosines are the ratio margin and cosine of each listed pair
    r_x, r_y = np.sort(cos, axis=1)[:, ::-1][:, :k].mean(axis=1), np.sort(cos, axis=0)[::-1, :][:k, :].mean(axis=0)
    for a, b, m, c in zip(got.tgt, got.src, got.margin, got.cos):
        assert c == pytest.approx(cos[a, b], abs=1e-6)
        assert m == pytest.approx(cos[a, b] / ((r_x[a] + r_y[b]) / 2), rel=1e-5)
    # the margin threshold is not a filter here
    assert len(union_knn_pairs(x, y, k=k, threshold=5.0)) == len(got)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_union_knn_is_closer_to_the_offset_than_mutual_pairs_when_topics_are_shared(seed):
    embs, langs, offsets = even(seed)
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    mutual = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", center=True)
    union = fit_mined_shift(embs, langs, "en", encoder=ENC, center=True, selection="union-knn")
    err = {name: max(np.linalg.norm(t.params[l] - offsets[l]) for l in ("de", "fr"))
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


