"""The guarded per-language alpha (``experiments.alpha_guard``): planted offsets recovered, retrievability never
lowered (against an independent computation), the repairs when languages crowd each other out."""
from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.alpha_guard import select_guarded_alphas
from mlirkit.base.errors import MlirkitError
from experiments.corpus_variants import fit_corpus_shift
from mlirkit.transforms import ShiftTransform
from tests.transforms.toy_corpora import planted, skewed, unit

ENC = {"class": "test", "model": "toy"}


def _retrievability(embs, langs, t, alpha, k):
    """Share of each language's documents in the top k of at least one en document (itself excluded)."""
    docs = unit(t.transform(embs.copy(), langs, "doc", alpha).astype(np.float64))
    la = np.array(langs)
    probes = np.flatnonzero(la == "en")
    scores = docs[probes] @ docs.T
    scores[np.arange(len(probes)), probes] = -np.inf
    hit = np.zeros(len(langs), dtype=bool)
    hit[np.argsort(-scores, axis=1)[:, :k].ravel()] = True
    return {lang: hit[la == lang].mean() for lang in set(langs)}


def test_guarded_alpha_recovers_planted_offsets_of_different_sizes():
    embs, langs, offsets = planted()
    grid = [round(0.1 * i, 1) for i in range(21)]
    # vectors at different scales of the planted offsets: the right alphas are 0.5, 1.0 and 1.6
    scale = {"de": 2.0, "fr": 1.0, "ja": 1 / 1.6}
    t = ShiftTransform.from_tensors({lang: offsets[lang] * s for lang, s in scale.items()}, encoder=ENC, source_lang="en")
    sel = select_guarded_alphas(embs, langs, t, grid=grid, k=10)
    assert sel.per_language == {"de": pytest.approx(0.5, abs=0.15), "fr": pytest.approx(1.0, abs=0.15),
                                "ja": pytest.approx(1.6, abs=0.15)}
    assert not any(sel.at_edge.values())
    r0 = _retrievability(embs, langs, t, 0.0, 10)
    r = _retrievability(embs, langs, t, sel.alpha_spec(), 10)
    for lang in scale:
        assert sel.retrievability[lang]["alpha_0"] == pytest.approx(r0[lang])
        assert sel.retrievability[lang]["chosen"] == pytest.approx(r[lang]) and r[lang] >= r0[lang]
    json.dumps(sel.as_dict())
    # the guard's own k: the retrievability it reports is that of the top 1
    one = select_guarded_alphas(embs, langs, t, grid=grid, k=10, retrievability_k=1)
    r1 = _retrievability(embs, langs, t, one.alpha_spec(), 1)
    r10 = _retrievability(embs, langs, t, 0.0, 1)
    for lang in scale:
        assert one.retrievability[lang] == {"alpha_0": pytest.approx(r10[lang]), "chosen": pytest.approx(r1[lang])}
        assert r1[lang] >= r10[lang]
    # a grid that stops short of ja's alpha says so
    short = select_guarded_alphas(embs, langs, t, grid=[round(0.1 * i, 1) for i in range(13)], k=10)
    assert short.per_language["ja"] == 1.2 and short.at_edge == {"de": None, "fr": None, "ja": "upper"}


def test_guarded_alpha_never_lowers_retrievability_and_the_guard_bites():
    """On topic-skewed corpora the unguarded gap minimum can cost a language retrievability; the guarded
    choice never does (checked against an independent computation)."""
    grid = [round(0.2 * i, 1) for i in range(11)]
    bitten = 0
    for seed in range(6):
        embs, langs, offsets = skewed(seed=seed, per=60, noise=0.6)
        t = fit_corpus_shift(embs, langs, "en", encoder=ENC)
        sel = select_guarded_alphas(embs, langs, t, grid=grid, k=5)
        r0 = _retrievability(embs, langs, t, 0.0, 5)
        r = _retrievability(embs, langs, t, sel.alpha_spec(), 5)
        assert all(r[lang] >= r0[lang] for lang in ("de", "fr")), (seed, r, r0)
        unguarded = {lang: min(grid, key=lambda a: (sel.gap_curve[lang][a], a)) for lang in ("de", "fr")}
        ru = _retrievability(embs, langs, t, {"*": 0.0, **unguarded}, 5)
        bitten += any(ru[lang] < r0[lang] for lang in ("de", "fr"))
    assert bitten >= 1  # the guard is not vacuous on these corpora


def test_guarded_alpha_refusals():
    embs, langs, offsets = planted(groups=10)
    t = ShiftTransform.from_tensors({"de": offsets["de"]}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="needs 0 in the grid"):
        select_guarded_alphas(embs, langs, t, grid=[0.5, 1.0])
    overall = fit_corpus_shift(embs, langs, "en", encoder=ENC, relative_to="overall", min_docs=5)
    with pytest.raises(MlirkitError, match="only non-source"):
        select_guarded_alphas(embs, langs, overall)
    with pytest.raises(MlirkitError, match="source-language"):
        select_guarded_alphas(embs[10:], langs[10:], t)


def test_guarded_alpha_steps_others_down_when_a_language_at_zero_is_crowded_out():
    rng = np.random.default_rng(0)
    d, n = 16, 60
    u = unit(rng.normal(size=(1, d)))[0]
    en = rng.normal(size=(n, d))
    fr = rng.normal(size=(n, d)) + 0.3 * u  # close to en already; its vector is zero (nothing to correct)
    de = en + 0.05 * rng.normal(size=(n, d)) + 5 * u  # translations of en behind a large offset
    embs = np.concatenate([en, fr, de]).astype(np.float32)
    langs = ["en"] * n + ["fr"] * n + ["de"] * n
    t = ShiftTransform.from_tensors({"fr": np.zeros(d), "de": 5 * u}, encoder=ENC, source_lang="en")
    grid = [0.0, 0.5, 1.0]
    sel = select_guarded_alphas(embs, langs, t, grid=grid, k=3)
    assert sel.candidates == {"de": 1.0, "fr": 0.0}
    # de at 1.0 puts a near-duplicate into every en document's top 3 and pushes fr out of them
    crowded = _retrievability(embs, langs, t, {"*": 0.0, "de": 1.0}, 3)
    r0 = _retrievability(embs, langs, t, 0.0, 3)
    assert crowded["fr"] < r0["fr"]
    assert sel.per_language["fr"] == 0.0 and sel.per_language["de"] < 1.0
    assert any(r["lang"] == "de" and r["because"] == ["fr"] for r in sel.repairs)
    r = _retrievability(embs, langs, t, sel.alpha_spec(), 3)
    assert r["fr"] >= r0["fr"] and r["de"] >= r0["de"]
