"""Language vectors from mined pseudo-parallel pairs; the guarded per-language label-free alpha."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform, fit_corpus_shift, load_transform
from experiments.alpha_guard import select_guarded_alphas
from mlirkit.transforms.mining import fit_mined_shift, mine_pairs, mined_language_vector
from tests.transforms.toy_corpora import planted, skewed, unit

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
        v, record = mined_language_vector(de, en, np.zeros(d), k=4, threshold=1.0, center=center)
        assert record["fallback"] is False and record["converged"] is True
        assert record["pairs"] == n
        # with every translation found, the mined vector is SHIFT's pair-fitted vector
        np.testing.assert_allclose(v, (de - en[::-1]).mean(axis=0), atol=1e-10)
    json.dumps(record)
    # union-kNN with k = 1: each translation listed from both sides, the same vector
    v, record = mined_language_vector(de, en, np.zeros(d), k=1, selection="union-knn")
    assert record["converged"] and record["pairs"] == 2 * n and record["rounds"][-1]["mutual"] == n
    np.testing.assert_allclose(v, (de - en[::-1]).mean(axis=0), atol=1e-10)



def test_mined_vectors_are_closer_to_the_language_offset_than_corpus_means_under_topic_skew():
    embs, langs, offsets = skewed()
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    mined = fit_mined_shift(embs, langs, "en", encoder=ENC)
    for lang in ("de", "fr"):
        err_corpus = np.linalg.norm(corpus.params[lang] - offsets[lang])
        err_mined = np.linalg.norm(mined.params[lang] - offsets[lang])
        assert err_mined < 0.5 * err_corpus, (lang, err_mined, err_corpus)
        assert mined.meta["provenance"][lang]["from"] == "mined-pairs"
        rounds = mined.meta["mining"]["languages"][lang]["rounds"]
        assert len(rounds) >= 2 and rounds[-1]["pairs"] >= 10 and rounds[-1]["margin"]["min"] >= 1.0
    assert mined.meta["mining"]["k"] == 4 and mined.meta["mining"]["threshold"] == 1.0
    # centring changes the cosines, never the differences: on a parallel corpus it finds the same vector
    assert mined.meta["mining"]["center"] is False


def test_mining_is_independent_of_chunking_and_falls_back_with_too_few_pairs(caplog):
    embs, langs, _ = skewed(per=40)
    a = fit_mined_shift(embs, langs, "en", encoder=ENC, chunk_rows=7)
    b = fit_mined_shift(embs, langs, "en", encoder=ENC)
    for lang in a.params:
        np.testing.assert_array_equal(a.params[lang], b.params[lang])
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    few = fit_mined_shift(embs, langs, "en", encoder=ENC, min_pairs=1000)
    for lang in few.params:
        np.testing.assert_array_equal(few.params[lang], corpus.params[lang])
        assert few.meta["provenance"][lang]["from"] == "corpus"
        assert few.meta["mining"]["languages"][lang]["fallback"] is True
    assert "keeping the initial (corpus-fitted) vector" in caplog.text
    with pytest.raises(MlirkitError, match="threshold"):
        fit_mined_shift(embs, langs, "en", encoder=ENC, threshold=0)
    with pytest.raises(MlirkitError, match="source-language"):
        fit_mined_shift(embs[40:], langs[40:], "en", encoder=ENC, initial=corpus)
    with pytest.raises(MlirkitError, match="max_rounds"):
        mined_language_vector(embs[:5], embs[5:9], np.zeros(embs.shape[1]), max_rounds=0)


# --------------------------------------------------------------------------- guarded per-language alpha

def _retrievability(embs, langs, t, alpha, k):
    """Share of each language's documents in the top k of at least one en document (itself excluded)."""
    docs = unit(t.apply(embs.copy(), langs, "doc", alpha).astype(np.float64))
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
    t = ShiftTransform({lang: offsets[lang] * s for lang, s in scale.items()}, encoder=ENC, source_lang="en")
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
    t = ShiftTransform({"de": offsets["de"]}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="needs 0 in the grid"):
        select_guarded_alphas(embs, langs, t, grid=[0.5, 1.0])
    overall = fit_corpus_shift(embs, langs, "en", encoder=ENC, relative_to="overall", min_docs=5)
    with pytest.raises(MlirkitError, match="only non-source"):
        select_guarded_alphas(embs, langs, overall)
    with pytest.raises(MlirkitError, match="source-language"):
        select_guarded_alphas(embs[10:], langs[10:], t)


# --------------------------------------------------------------------------- CLI
def test_cli_fit_mine_pairs_and_select_alpha_guarded(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.index import IndexWriter
    from mlirkit.shift.cli import main

    embs, langs, offsets = skewed()
    idx = tmp_path / "idx"
    with IndexWriter(idx, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    out = tmp_path / "mined.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--mine-pairs", "--mine-k", "3",
                 "--mine-threshold", "0.99", "--mine-center", "--mine-min-pairs", "5", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    want = fit_mined_shift(embs, langs, "en", encoder=ENC, k=3, threshold=0.99, center=True, min_pairs=5)
    for lang in ("de", "fr"):
        np.testing.assert_allclose(t.params[lang], want.params[lang], atol=1e-6)
        assert printed["mining"]["languages"][lang]["pairs"] == t.meta["provenance"][lang]["pairs"] > 0
    assert t.meta["mining"]["k"] == 3 and t.meta["mining"]["origin"] == str(idx) and t.meta["mining"]["center"]
    assert t.meta["mining"]["languages"]["de"]["rounds"][0]["margin"]["min"] >= 0.99

    from experiments.cli import main as experiments_main

    assert experiments_main(["select-alpha", "--index", str(idx), "--transform", str(out), "--k", "10", "--guarded",
                 "--retrievability-k", "3", "--grid", "0.5", "1.0", "1.5"]) == 0
    sel = json.loads(capsys.readouterr().out)
    g = sel["guarded"]
    assert set(g["per_language"]) == {"de", "fr"} and g["grid"] == [0.0, 0.5, 1.0, 1.5]
    assert g["k"] == 10 and g["retrievability_k"] == 3
    assert all(r["chosen"] >= r["alpha_0"] for r in g["retrievability"].values())

    # the index records the mining provenance of the transform applied
    assert main(["apply", "--index", str(idx), "--transform", str(out), "--alpha", *g["alpha_arg"].split(),
                 "--output", str(tmp_path / "shifted")]) == 0
    meta = json.loads((tmp_path / "shifted" / "meta.json").read_text())
    assert meta["transform"]["provenance"]["de"]["from"] == "mined-pairs"
    assert meta["transform"]["mining"]["threshold"] == 0.99

    for argv, msg in ((["--mine-k", "3"], "need --mine-pairs"),
                      (["--mine-pairs", "--relative-to-overall"], "drop --relative-to-overall"),
                      (["--mine-pairs", "--mine-threshold", "-1"], "positive")):
        assert run_cli(main, ["fit", "--from-index", str(idx), "--source-lang", "en", "--output",
                              str(tmp_path / "y.safetensors"), *argv]) == 2
        assert msg in capsys.readouterr().err
    assert run_cli(main, ["fit", "--mine-pairs", "--pairs", "x", "--source-lang", "en", "--output",
                          str(tmp_path / "y.safetensors")]) == 2
    assert "need --from-index" in capsys.readouterr().err


def test_guarded_alpha_steps_others_down_when_a_language_at_zero_is_crowded_out():
    rng = np.random.default_rng(0)
    d, n = 16, 60
    u = unit(rng.normal(size=(1, d)))[0]
    en = rng.normal(size=(n, d))
    fr = rng.normal(size=(n, d)) + 0.3 * u  # close to en already; its vector is zero (nothing to correct)
    de = en + 0.05 * rng.normal(size=(n, d)) + 5 * u  # translations of en behind a large offset
    embs = np.concatenate([en, fr, de]).astype(np.float32)
    langs = ["en"] * n + ["fr"] * n + ["de"] * n
    t = ShiftTransform({"fr": np.zeros(d), "de": 5 * u}, encoder=ENC, source_lang="en")
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
