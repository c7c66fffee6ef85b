"""Language identification from embeddings: fitting, prediction with a threshold, use inside apply."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import load_transform, save_transform
from mlirkit.transforms.fit import fit_from_pairs
from mlirkit.transforms.langid import LangIdClassifier, fit_langid
from mlirkit.transforms.parallel import ParallelGroup
from mlirkit.transforms.shift_transform import ShiftTransform
from tests.helpers import ClusterEncoder, clusters

ENC = {"model": "toy"}


def test_langid_classifier_probabilities_match_formula():
    w = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    b = np.array([0.0, 0.5, 0.0])
    clf = LangIdClassifier(["de", "en", "fr"], w, b)
    x = np.array([[3.0, 4.0]])  # x_hat = (0.6, 0.8)
    logits = np.array([0.6, 1.3, -1.4])
    expected = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(clf.predict_proba(x)[0], expected, rtol=1e-6)
    langs, conf = clf.predict(x)
    assert langs == ["en"] and conf[0] == pytest.approx(expected.max())
    with pytest.raises(MlirkitError, match="shapes"):
        LangIdClassifier(["de", "en"], w, b)


def test_fit_langid_separable_clusters():
    x, y, _ = clusters()
    clf = fit_langid(x, y)
    xt, yt, _ = clusters(n=50, seed=0)
    ev = clf.evaluate(xt, yt, threshold=0.5)
    assert ev["accuracy"] > 0.95 and ev["n"] == 150 and set(ev["per_language"]) == {"de", "en", "fr"}
    binary = fit_langid(x[:400], y[:400])  # two classes: stored as a 2-row softmax
    assert binary.weight.shape[0] == 2 and binary.evaluate(x[:400], y[:400])["accuracy"] > 0.95
    with pytest.raises(MlirkitError, match="two languages"):
        fit_langid(x[:10], ["en"] * 10)


def test_apply_with_langid_threshold_and_file_roundtrip(tmp_path):
    x, y, centers = clusters()
    clf = fit_langid(x, y)
    t = ShiftTransform.from_tensors({"de": np.ones(12), "fr": -np.ones(12)}, encoder=ENC, source_lang="en", langid=clf)
    save_transform(t, tmp_path / "t")
    t = load_transform(tmp_path / "t")
    assert t.langid is not None and t.langid.classes == ["de", "en", "fr"]
    np.testing.assert_array_equal(t.langid.weight, clf.weight)
    docs = np.stack([centers["de"], centers["fr"], centers["en"], np.zeros(12)]).astype(np.float32)
    langs = ["und"] * 4
    # off by default: unknown documents stay unchanged
    assert t.transform(docs, langs, "doc").tobytes() == docs.tobytes()
    t.use_langid(0.9)
    counts = Counter()
    out = t.transform(docs, langs, "doc", counts=counts)
    np.testing.assert_allclose(out[0], docs[0] - 1, atol=1e-6)   # predicted de
    np.testing.assert_allclose(out[1], docs[1] + 1, atol=1e-6)   # predicted fr
    assert out[2].tobytes() == docs[2].tobytes()                 # predicted en = source
    assert out[3].tobytes() == docs[3].tobytes()                 # zero vector: low confidence
    assert counts["langid:de"] == 1 and counts["langid_below_threshold"] == 1
    desc = t.describe(1.0)["langid"]
    assert desc["used"] and desc["threshold"] == 0.9 and desc["classes"] == ["de", "en", "fr"]
    with pytest.raises(MlirkitError, match="outside"):
        t.use_langid(1.5)
    plain = ShiftTransform.from_tensors({"de": np.ones(12)}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="no language classifier"):
        plain.use_langid(0.5)


def test_fit_with_langid():
    groups = [ParallelGroup(str(i), {"en": f"e{i}", "de": f"d{i}", "fr": f"f{i}"}) for i in range(300)]
    t = fit_from_pairs(ClusterEncoder(), groups, method="shift", source_lang="en", fit_langid=True, batch_size=30)
    assert t.meta["pairs"] == {"de": 300, "fr": 300}
    assert t.langid.info["train_per_language"] == {"de": 300, "en": 300, "fr": 300}
    x, y, _ = clusters(n=30)
    assert (np.array(t.langid.predict(x)[0]) == np.array(y)).mean() > 0.95
    assert fit_from_pairs(ClusterEncoder(), groups, method="shift", source_lang="en").langid is None


def test_folded_standardisation_matches_sklearn():
    from sklearn.linear_model import LogisticRegression
    x, y, _ = clusters(n=60, seed=3)
    clf = fit_langid(x, y)
    xh = x / np.linalg.norm(x, axis=1, keepdims=True)
    m, s = xh.mean(0), xh.std(0) + 1e-6
    ref = LogisticRegression(C=1.0, max_iter=1000, random_state=0).fit((xh - m) / s, y)
    np.testing.assert_allclose(clf.predict_proba(x), ref.predict_proba((xh - m) / s), atol=1e-4)
