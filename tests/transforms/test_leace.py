"""LEACE through EleutherAI's ``concept-erasure`` (``LeaceFitter`` / ``LeaceEraser``): mlirkit's streamed
statistics give the package's own eraser, and after erasure the language of XQuAD-R's documents cannot be
predicted linearly (the probe test, slow: real e5-small embeddings)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from mlirkit.transforms import LEACETransform, load_transform, save_transform

DATA = Path(__file__).parent / "data"


def fixture(name="xquad-r"):
    with safe_open(str(DATA / f"{name}-e5.safetensors"), "np") as f:
        return f.get_tensor("embeddings").astype(np.float32), json.loads(f.metadata()["langs"])


def package_eraser(x, langs):
    """``LeaceEraser.fit`` on the rows and their one-hot languages, as the package's users call it (float64)."""
    import torch
    from concept_erasure import LeaceEraser

    classes = sorted(set(langs))
    z = np.zeros((len(x), len(classes)))
    z[np.arange(len(x)), [classes.index(la) for la in langs]] = 1.0
    return LeaceEraser.fit(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(z))


@pytest.mark.parametrize("name", ["xquad-r", "ddtp"])
def test_leace_is_the_packages_eraser(name, tmp_path):
    import torch

    x, langs = fixture(name)
    t = LEACETransform("en").fit(x, langs)
    want = package_eraser(x, langs)(torch.from_numpy(x.astype(np.float64))).numpy()
    for side in ("doc", "query"):  # documents and queries alike
        np.testing.assert_allclose(t.transform(x, langs, side), want, atol=1e-6)
    assert t.rank_ == t.meta["directions"] == len(set(langs)) - 1  # k - 1 directions for k languages
    # streamed in blocks: the same eraser
    s = LEACETransform("en")
    for a in range(0, len(x), 50):
        s.partial_fit(x[a:a + 50], langs[a:a + 50])
    np.testing.assert_allclose(s.transform(x, langs, "doc"), want, atol=1e-6)
    # after erasure every language has the same mean (LEACE: no linear signal left in the class means)
    out = t.transform(x, langs, "doc")
    la = np.array(langs)
    means = np.stack([out[la == lang].mean(axis=0) for lang in sorted(set(langs))])
    assert np.abs(means - means.mean(axis=0)).max() < 1e-5 < np.abs(x[la == "de"].mean(0) - x.mean(0)).max()
    back = load_transform(save_transform(t, tmp_path / "l.safetensors"))
    assert back.transform(x, langs, "query").tobytes() == t.transform(x, langs, "query").tobytes()
    assert back.meta["concept_erasure"]["class"] == "LeaceFitter"


def probe_accuracy(x, langs, train):
    """A logistic-regression probe trained on the rows ``train`` predicts the language of the others."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    y = np.asarray(langs)
    scaler = StandardScaler().fit(x[train])
    clf = LogisticRegression(max_iter=5000).fit(scaler.transform(x[train]), y[train])
    return float((clf.predict(scaler.transform(x[~train])) == y[~train]).mean())


@pytest.mark.slow
def test_after_leace_the_document_language_cannot_be_predicted_linearly():
    """XQuAD-R's 1,920 paragraphs (240 in each of 8 languages), e5-small: a probe trained on the erased documents
    of half the paragraphs predicts the language of the other half's (translations never straddle the halves).
    The eraser is fitted on the probe's half: fitted on every document, the halves' language means become exact
    opposites (their sum is erased, the design is balanced) and a probe is wrong more often than chance
    (measured: 0.055), which is information too. After L2 normalisation (what an index stores) part of the
    language comes back: the erased vectors' norms differ by language, and normalising rescales their large
    common component by language (docs/design.md, "LEACE")."""
    import mlirkit as mk
    from mlirkit.base.cache import cache_dir
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.benchmark.cache import EmbeddingCache

    docs = list(mk.read_corpus("mlirkit/xquad-r/en"))
    langs = [d.lang for d in docs]
    encoder = mk.load_encoder("multilingual-e5-small-q4", max_length=512)
    x = EmbeddingCache(cache_dir("benchmark", "embeddings"), show_progress=False).embed(
        encoder, "multilingual-e5-small-q4", "xquad-r-corpus", "doc", [d.text for d in docs], langs)
    paragraph = np.array([int(d.doc_id.split("_")[1]) * 1000 + int(d.doc_id.split("_")[2]) for d in docs])
    train = np.isin(paragraph, np.unique(paragraph)[::2])
    chance = 1 / len(set(langs))
    t = LEACETransform("en").fit(x[train], [la for la, k in zip(langs, train) if k])
    erased = t.transform(x, langs, "doc")
    raw_acc, erased_acc = probe_accuracy(x, langs, train), probe_accuracy(erased, langs, train)
    normalised_acc = probe_accuracy(l2_normalize(erased), langs, train)  # what the index stores
    print(f"probe accuracy: raw {raw_acc:.4f}, erased {erased_acc:.4f}, erased and L2-normalised {normalised_acc:.4f} "
          f"(chance {chance:.4f}); normalisation gives back {(normalised_acc - chance) / (raw_acc - chance):.1%} of "
          f"the raw probe's margin over chance")
    assert raw_acc > 0.95
    assert abs(erased_acc - chance) <= 0.02
    # measured 0.314 (21.5 % of the margin, experiments/notes/leace-normalisation.md): more than the 10 % aimed at,
    # far below the raw 1.0
    assert normalised_acc - chance <= 0.25 * (raw_acc - chance)
