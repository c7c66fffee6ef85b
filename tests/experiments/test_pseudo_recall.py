"""Pseudo-recall (pseudo-relevant pairs mined at alpha 0) as a label-free alpha criterion and as the guard."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from experiments.corpus_variants import fit_corpus_shift
from mlirkit.transforms import ShiftTransform
from experiments.alpha_guard import select_guarded_alphas
from experiments.mining_variants import mine_pairs
from experiments.pseudo_recall import pseudo_recall, pseudo_relevant_pairs, select_pseudo_recall_alpha
from tests.transforms.toy_corpora import planted, skewed, unit

ENC = {"class": "test", "model": "toy"}
GRID = [round(0.1 * i, 1) for i in range(21)]





def _brute_pseudo_recall(embs, langs, t, alpha, k):
    """PR_l written out: mutual ratio-margin pairs at alpha 0, then full sorting of every probe's scores."""
    la = np.array(langs)
    en = np.flatnonzero(la == "en")
    docs = unit(t.transform(embs.copy(), langs, "doc", alpha).astype(np.float64))
    out = {}
    for lang in sorted(set(langs) - {"en"}):
        rows = np.flatnonzero(la == lang)
        p = mine_pairs(unit(embs[rows].astype(np.float64)), unit(embs[en].astype(np.float64)))
        hits = []
        for x, y in zip(rows[p.tgt], en[p.src]):
            s = docs[y] @ docs.T
            s[y] = -np.inf
            hits.append(x in set(np.argsort(-s, kind="stable")[:k]))
        out[lang] = float(np.mean(hits)) if hits else 0.0
    return out


@pytest.mark.parametrize("k", [1, 5, 17])
def test_pseudo_recall_equals_the_formula_written_out(k):
    rng = np.random.default_rng(k)
    docs = unit(rng.normal(size=(70, 8))).astype(np.float32)
    codes = np.repeat([0, 1, 2], [30, 20, 20])
    probes = np.flatnonzero(codes == 0)
    pairs = {c: (np.flatnonzero(codes == c)[rng.choice(20, size=9, replace=False)], rng.integers(0, 30, size=9))
             for c in (1, 2)}
    got = pseudo_recall(docs, probes, pairs, k, chunk_rows=7)
    for c, (rows, pos) in pairs.items():
        hits = []
        for x, i in zip(rows, pos):
            s = docs[probes[i]].astype(np.float64) @ docs.T.astype(np.float64)
            s[probes[i]] = -np.inf
            hits.append(x in set(np.argsort(-s)[:k]))
        assert got[c] == pytest.approx(np.mean(hits))


def test_pseudo_relevant_pairs_are_the_translations_despite_the_offset():
    embs, langs, _ = planted()
    codes = np.repeat([0, 1, 2, 3], 120)  # en de fr ja, group i at row 120 * code + i
    pairs = pseudo_relevant_pairs(embs, codes, np.arange(120), [1, 2, 3])
    for code, (rows, pos) in pairs.items():
        assert len(rows) >= 100
        assert np.mean(rows - 120 * code == pos) > 0.95


def test_pseudo_recall_alpha_recovers_a_planted_offset():
    embs, langs, offsets = planted()
    for scale, want in ((1.0, 1.0), (1 / 1.6, 1.6), (2.0, 0.5)):
        t = ShiftTransform.from_tensors({lang: offsets[lang] * scale for lang in ("de", "fr", "ja")}, encoder=ENC, source_lang="en")
        sel = select_pseudo_recall_alpha(embs, langs, t, grid=GRID, k=5)
        assert sel.alpha == pytest.approx(want, abs=0.15), (scale, sel.alpha)
        assert sel.curve[sel.alpha] == max(sel.curve.values()) and sel.at_edge is None
        brute = _brute_pseudo_recall(embs, langs, t, sel.alpha, 5)
        for lang in ("de", "fr", "ja"):
            assert sel.per_language_curve[lang][sel.alpha] == pytest.approx(brute[lang])
    json.dumps(sel.as_dict())


def test_guarded_pseudo_recall_recovers_planted_offsets_of_different_sizes():
    embs, langs, offsets = planted()
    scale = {"de": 2.0, "fr": 1.0, "ja": 1 / 1.6}
    t = ShiftTransform.from_tensors({lang: offsets[lang] * s for lang, s in scale.items()}, encoder=ENC, source_lang="en")
    sel = select_guarded_alphas(embs, langs, t, grid=GRID, k=10, criterion="pseudo-recall")
    assert sel.per_language == {"de": pytest.approx(0.5, abs=0.15), "fr": pytest.approx(1.0, abs=0.15),
                                "ja": pytest.approx(1.6, abs=0.15)}
    assert sel.info["guard"] == "pseudo-recall" and min(sel.info["pseudo_pairs"].values()) >= 100
    brute0 = _brute_pseudo_recall(embs, langs, t, 0.0, 10)
    brute = _brute_pseudo_recall(embs, langs, t, sel.alpha_spec(), 10)
    for lang in scale:
        assert sel.retrievability[lang] == {"alpha_0": pytest.approx(brute0[lang]), "chosen": pytest.approx(brute[lang])}
        assert brute[lang] >= brute0[lang]
    json.dumps(sel.as_dict())


def test_guarded_pseudo_recall_never_lowers_its_criterion():
    grid = [round(0.2 * i, 1) for i in range(11)]
    for seed in range(5):
        embs, langs, _ = skewed(seed=seed, per=60, noise=0.6)
        t = fit_corpus_shift(embs, langs, "en", encoder=ENC)
        sel = select_guarded_alphas(embs, langs, t, grid=grid, k=5, criterion="pseudo-recall")
        r0 = _brute_pseudo_recall(embs, langs, t, 0.0, 5)
        r = _brute_pseudo_recall(embs, langs, t, sel.alpha_spec(), 5)
        assert all(r[lang] >= r0[lang] - 1e-12 for lang in ("de", "fr")), (seed, r, r0, sel.per_language)


def test_pseudo_recall_refusals():
    embs, langs, offsets = planted(groups=10)
    t = ShiftTransform.from_tensors({"de": offsets["de"]}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="unknown guard criterion"):
        select_guarded_alphas(embs, langs, t, grid=[0.0, 1.0], criterion="recall")
    overall = fit_corpus_shift(embs, langs, "en", encoder=ENC, relative_to="overall", min_docs=5)
    with pytest.raises(MlirkitError, match="only non-source"):
        select_pseudo_recall_alpha(embs, langs, overall)
    with pytest.raises(MlirkitError, match="source-language"):
        select_pseudo_recall_alpha(embs[10:], langs[10:], t)


def test_cli_select_alpha_pseudo_recall(tmp_path, capsys):
    from mlirkit.index import IndexWriter
    from experiments.cli import main
    from mlirkit.transforms.io import save_transform

    embs, langs, offsets = planted(groups=40)
    idx = tmp_path / "idx"
    with IndexWriter(idx, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    t = ShiftTransform.from_tensors({lang: offsets[lang] for lang in ("de", "fr", "ja")}, encoder=ENC, source_lang="en")
    path = tmp_path / "t.safetensors"
    save_transform(t, path)
    grid = ["0.5", "1.0", "1.5"]
    assert main(["select-alpha", "--index", str(idx), "--transform", str(path), "--k", "5", "--guarded",
                 "--guard", "pseudo-recall", "--pseudo-recall", "--grid", *grid]) == 0
    out = json.loads(capsys.readouterr().out)
    want = select_pseudo_recall_alpha(embs, langs, t, grid=[0.5, 1.0, 1.5], k=5)
    assert out["pseudo_recall"]["alpha"] == want.alpha == 1.0
    guarded = select_guarded_alphas(embs, langs, t, grid=[0.0, 0.5, 1.0, 1.5], k=5, criterion="pseudo-recall")
    assert out["guarded"]["per_language"] == guarded.per_language and out["guarded"]["guard"] == "pseudo-recall"
    from mlirkit.base.cli import run_cli

    for extra, msg in ((["--guard", "pseudo-recall"], "--guard needs --guarded"),
                       (["--guard", "retrievability", "--retrievability-k", "3"], "--guard, --retrievability-k need --guarded")):
        # given without --guarded they were silently ignored
        assert run_cli(main, ["select-alpha", "--index", str(idx), "--transform", str(path), *extra]) == 2
        assert msg in capsys.readouterr().err


def test_guarded_pseudo_recall_bites_when_one_language_crowds_out_another():
    """de is close to en (its translations are the probes' nearest at alpha 0); moving fr fully onto en
    puts fr's translations in front of them, so the joint check walks fr back until de keeps its pseudo-recall."""
    rng = np.random.default_rng(0)
    groups, d = 80, 16
    topics = rng.normal(size=(groups, d))
    off_de, off_fr = 1.0 * unit(rng.normal(size=(1, d)))[0], 3 * unit(rng.normal(size=(1, d)))[0]
    embs = np.concatenate([topics + 0.05 * rng.normal(size=(groups, d)),
                           topics + off_de + 0.05 * rng.normal(size=(groups, d)),
                           topics + off_fr + 0.05 * rng.normal(size=(groups, d))]).astype(np.float32)
    langs = ["en"] * groups + ["de"] * groups + ["fr"] * groups
    t = ShiftTransform.from_tensors({"de": 0.0 * off_de, "fr": off_fr}, encoder=ENC, source_lang="en")
    grid = [round(0.25 * i, 2) for i in range(9)]
    sel = select_guarded_alphas(embs, langs, t, grid=grid, k=1, criterion="pseudo-recall")
    r0 = _brute_pseudo_recall(embs, langs, t, 0.0, 1)
    unguarded = _brute_pseudo_recall(embs, langs, t, {"*": 0.0, **sel.candidates}, 1)
    chosen = _brute_pseudo_recall(embs, langs, t, sel.alpha_spec(), 1)
    assert unguarded["de"] < r0["de"]  # the candidates alone would cost de
    assert sel.repairs and sel.per_language["fr"] < sel.candidates["fr"]
    assert all(chosen[lang] >= r0[lang] for lang in ("de", "fr"))
