"""The guarded per-language alpha with unlabelled source-language query embeddings as probes."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from experiments.corpus_variants import fit_corpus_shift
from mlirkit.transforms import ShiftTransform
from experiments.alpha_guard import select_guarded_alphas
from tests.transforms.toy_corpora import skewed, unit

ENC = {"class": "test", "model": "toy"}
GRID = [round(0.2 * i, 1) for i in range(11)]



def _skewed(seed=0, per=60, noise=0.6, n_queries=30):
    """The topic-skewed toy corpus (toy_corpora.skewed) (offset norm 2), plus English 'queries' on all six
    topics: a second draw of the same corpus (same seed: same topics and offsets) minus its offsets."""
    embs, langs, offsets = skewed(seed=seed, per=per, noise=noise)
    more, more_langs, same = skewed(seed=seed, per=n_queries, noise=noise)
    assert all(np.array_equal(offsets[lang], same[lang]) for lang in offsets)
    queries = more - np.stack([offsets[lang] for lang in more_langs])
    pick = np.random.default_rng(seed).choice(len(queries), size=n_queries, replace=False)
    return embs, langs, offsets, queries[pick].astype(np.float32)


def _brute_retrievability(embs, langs, t, alpha, queries, k, keep=None):
    """R_l written out: every query's scores fully sorted; ``keep`` restricts the corpus to those languages."""
    la = np.array(langs)
    docs = unit(t.transform(embs.copy(), langs, "doc", alpha).astype(np.float64))
    rows = np.flatnonzero(np.isin(la, keep)) if keep else np.arange(len(la))
    hit = set()
    for q in unit(queries.astype(np.float64)):
        scores = [(float(docs[r] @ q), r) for r in rows]
        hit.update(r for _, r in sorted(scores, reverse=True)[:k])
    return {lang: sum(1 for r in rows if la[r] == lang and r in hit) / int(np.sum(la[rows] == lang))
            for lang in sorted(set(la[rows]) - {"en"})}


def _brute_gap(embs, langs, t, alpha, queries, k, lang):
    la = np.array(langs)
    docs = unit(t.transform(embs.copy(), langs, "doc", alpha).astype(np.float64))
    rows = np.flatnonzero(np.isin(la, ["en", lang]))
    en_share = []
    for q in unit(queries.astype(np.float64)):
        top = sorted(rows, key=lambda r: -float(docs[r] @ q))[:k]
        en_share += [la[r] == "en" for r in top]
    n_en, n_l = int(np.sum(la == "en")), int(np.sum(la == lang))
    return float(np.mean(en_share)) - n_en / (n_en + n_l)


def test_query_probe_retrievability_and_gap_equal_the_formula_written_out():
    embs, langs, _, queries = _skewed(seed=1, per=25, n_queries=12)
    t = fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5)
    sel = select_guarded_alphas(embs, langs, t, grid=[0.0, 0.6, 1.2], k=4, retrievability_k=3, probes=queries)
    assert sel.info["probe_kind"] == "queries" and sel.info["probes"] == 12
    for lang in ("de", "fr"):
        for a in (0.0, 0.6, 1.2):
            r2 = _brute_retrievability(embs, langs, t, a, queries, 3, keep=["en", lang])[lang]
            assert sel.retrievability_curve[lang][a] == pytest.approx(r2, abs=1e-12)
            assert sel.gap_curve[lang][a] == pytest.approx(_brute_gap(embs, langs, t, a, queries, 4, lang), abs=1e-12)
    r0 = _brute_retrievability(embs, langs, t, 0.0, queries, 3)
    r = _brute_retrievability(embs, langs, t, sel.alpha_spec(), queries, 3)
    for lang in ("de", "fr"):
        assert sel.retrievability[lang]["alpha_0"] == pytest.approx(r0[lang], abs=1e-12)
        assert sel.retrievability[lang]["chosen"] == pytest.approx(r[lang], abs=1e-12)


def test_query_probe_guard_never_lowers_its_criterion_below_alpha_0():
    moved_some = 0
    for seed in range(6):
        embs, langs, _, queries = _skewed(seed=seed)
        t = fit_corpus_shift(embs, langs, "en", encoder=ENC)
        sel = select_guarded_alphas(embs, langs, t, grid=GRID, k=5, probes=queries)
        r0 = _brute_retrievability(embs, langs, t, 0.0, queries, 5)
        r = _brute_retrievability(embs, langs, t, sel.alpha_spec(), queries, 5)
        assert all(r[lang] >= r0[lang] - 1e-12 for lang in ("de", "fr")), (seed, r, r0, sel.per_language)
        moved_some += any(a > 0 for a in sel.per_language.values())
    assert moved_some >= 1  # not vacuous: it does correct somewhere


def test_query_probes_recover_planted_offsets():
    rng = np.random.default_rng(3)
    d, groups = 32, 120
    topics = 0.5 * rng.normal(size=(groups, d))
    offsets = {"en": np.zeros(d), "de": 3 * unit(rng.normal(size=(1, d)))[0], "fr": 1.5 * unit(rng.normal(size=(1, d)))[0]}
    embs = np.concatenate([topics + o + 0.05 * rng.normal(size=(groups, d)) for o in offsets.values()]).astype(np.float32)
    langs = [lang for lang in offsets for _ in range(groups)]
    queries = (topics[:60] + 0.05 * rng.normal(size=(60, d))).astype(np.float32)
    # the transform's vectors are the planted offsets scaled to norm 3: the right alpha is 1 for de, 0.5 for fr
    t = ShiftTransform.from_tensors({"de": offsets["de"], "fr": offsets["fr"] * 2}, encoder=ENC, source_lang="en")
    sel = select_guarded_alphas(embs, langs, t, grid=[round(0.1 * i, 1) for i in range(16)], k=10, probes=queries)
    assert abs(sel.per_language["de"] - 1.0) <= 0.2 and abs(sel.per_language["fr"] - 0.5) <= 0.2, sel.per_language


def test_query_probe_refusals():
    embs, langs, _, queries = _skewed(per=20)
    t = fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5)
    with pytest.raises(MlirkitError, match=r"\(m, 24\)"):
        select_guarded_alphas(embs, langs, t, grid=[0.0, 1.0], probes=queries[:, :10])
    with pytest.raises(MlirkitError, match="non-finite"):
        bad = queries.copy()
        bad[0, 0] = np.nan
        select_guarded_alphas(embs, langs, t, grid=[0.0, 1.0], probes=bad)
    with pytest.raises(MlirkitError, match="retrievability guard only"):
        select_guarded_alphas(embs, langs, t, grid=[0.0, 1.0], probes=queries, criterion="pseudo-recall")


def test_cli_select_alpha_probe_queries(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.index import IndexWriter
    from experiments.cli import main
    from mlirkit.transforms.io import save_transform

    embs, langs, _, queries = _skewed(seed=2, per=30)
    idx = tmp_path / "idx"
    with IndexWriter(idx, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    t = fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5)
    path = tmp_path / "t.safetensors"
    save_transform(t, path)
    qfile = tmp_path / "queries.npy"
    np.save(qfile, queries)
    base = ["select-alpha", "--index", str(idx), "--transform", str(path), "--k", "5", "--grid", "0.5", "1.0", "1.5"]
    assert main([*base, "--guarded", "--probe-queries", str(qfile)]) == 0
    out = json.loads(capsys.readouterr().out)
    want = select_guarded_alphas(embs, langs, t, grid=[0.0, 0.5, 1.0, 1.5], k=5, probes=queries)
    assert out["guarded"]["per_language"] == want.per_language
    assert out["guarded"]["probe_kind"] == "queries" and out["guarded"]["probe_queries"] == str(qfile)
    (tmp_path / "bad.npy").write_text("not an array")
    for extra, msg in ((["--probe-queries", str(qfile)], "--probe-queries needs --guarded"),
                       (["--guarded", "--guard", "pseudo-recall", "--probe-queries", str(qfile)],
                        "--probe-queries works with --guard retrievability only"),
                       (["--guarded", "--probe-queries", str(tmp_path / "bad.npy")], "cannot read query probes"),
                       (["--guarded", "--probe-queries", str(tmp_path / "missing.npy")], "cannot read query probes")):
        assert run_cli(main, [*base, *extra]) == 2
        assert msg in capsys.readouterr().err
