"""The corpus-vector variants kept in experiments/: relative to the overall mean (``shift-overall``, a method
registered from outside the package) and blended hybrids."""
from __future__ import annotations

import numpy as np
import pytest

from experiments.corpus_variants import OverallShiftTransform, blend_shift, fit_corpus_shift
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import TRANSFORMS, ShiftTransform, load_transform, save_transform

ENC = {"class": "test", "model": "toy"}


def _corpus(seed: int = 0, n: dict | None = None, d: int = 8):
    rng = np.random.default_rng(seed)
    n = n or {"en": 30, "de": 25, "ja": 22}
    embs = np.concatenate([rng.normal(size=(k, d)) + 3 * i for i, k in enumerate(n.values())]).astype(np.float32)
    return embs, [l for l, k in n.items() for _ in range(k)]


def test_overall_vectors_match_the_formula_and_round_trip(tmp_path):
    embs, langs = _corpus()
    la = np.array(langs)
    mean = {l: embs[la == l].astype(np.float64).mean(axis=0) for l in ("en", "de", "ja")}
    overall = embs.astype(np.float64).mean(axis=0)  # every document weighted once
    o = fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5, relative_to="overall")
    assert isinstance(o, OverallShiftTransform) and o.languages == ["de", "en", "ja"]
    assert TRANSFORMS.get("shift-overall") is OverallShiftTransform
    for l in ("en", "de", "ja"):
        np.testing.assert_allclose(o.params_[l], mean[l] - overall, rtol=1e-6, atol=1e-6)
    # applied at alpha 1, every language's mean lands on the overall mean; queries are untouched
    out = o.transform(embs, langs, "doc", 1.0)
    for l in ("en", "de", "ja"):
        np.testing.assert_allclose(out[la == l].mean(axis=0), overall, atol=1e-5)
    assert not o.touches("query")
    save_transform(o, tmp_path / "o.st")
    back = load_transform(tmp_path / "o.st")
    assert back.method == "shift-overall" and back.transform(embs, langs, "doc").tobytes() == out.tobytes()
    with pytest.raises(MlirkitError, match="relative_to"):
        fit_corpus_shift(embs, langs, "en", encoder=ENC, relative_to="mean")


def test_blend_weighs_both_where_both_exist():
    rng = np.random.default_rng(2)
    pairs = ShiftTransform.from_tensors({"de": rng.normal(size=8), "fr": rng.normal(size=8)}, encoder=ENC,
                                        source_lang="en", meta={"pairs": {"de": 50, "fr": 40}})
    embs, langs = _corpus(n={"en": 30, "de": 25, "ja": 22})
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    b = blend_shift(pairs, corpus, 0.25)
    np.testing.assert_allclose(b.params_["de"], 0.75 * pairs.params_["de"] + 0.25 * corpus.params_["de"], atol=1e-6)
    np.testing.assert_array_equal(b.params_["ja"], corpus.params_["ja"])
    np.testing.assert_array_equal(b.params_["fr"], pairs.params_["fr"])
    assert b.meta["provenance"]["de"] == {"from": "blend", "weight": 0.25, "pairs": 50, "docs": 25}
    assert b.describe()["hybrid"]["blend"] == 0.25
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(MlirkitError, match="outside"):
            blend_shift(pairs, corpus, bad)
