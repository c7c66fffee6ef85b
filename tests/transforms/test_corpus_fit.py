"""Corpus-fitted and hybrid SHIFT vectors, label-free alpha selection, the non-parallel DDTP variant."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform, hybrid_shift, load_transform, save_transform
from mlirkit.transforms.alpha_select import select_alpha
from tests.transforms.toy_corpora import planted

ENC = {"class": "test", "model": "toy"}


def fit_corpus_shift(embs, langs, source_lang, *, encoder, min_docs=20, only_langs=None):
    t = ShiftTransform(source_lang, vectors="corpus", min_docs=min_docs, langs=only_langs).fit(embs, langs)
    t.encoder = encoder
    return t


def _corpus(seed: int = 0, n: dict | None = None, d: int = 8):
    rng = np.random.default_rng(seed)
    n = n or {"en": 30, "de": 25, "ja": 22}
    embs = np.concatenate([rng.normal(size=(k, d)) + 3 * i for i, k in enumerate(n.values())]).astype(np.float32)
    langs = [l for l, k in n.items() for _ in range(k)]
    return embs, langs


# --------------------------------------------------------------------------- corpus-fitted vectors
def test_corpus_vectors_match_the_formula():
    embs, langs = _corpus()
    la = np.array(langs)
    mean = {l: embs[la == l].astype(np.float64).mean(axis=0) for l in ("en", "de", "ja")}
    t = fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5)
    assert isinstance(t, ShiftTransform) and t.languages == ["de", "ja"]
    for l in ("de", "ja"):
        np.testing.assert_allclose(t.params_[l], mean[l] - mean["en"], rtol=1e-6, atol=1e-6)
    assert t.meta["corpus_fit"]["docs"] == {"de": 25, "en": 30, "ja": 22}
    assert t.meta["provenance"] == {"de": {"from": "corpus", "docs": 25}, "ja": {"from": "corpus", "docs": 22}}



def test_corpus_vectors_equal_pair_vectors_on_a_parallel_corpus():
    rng = np.random.default_rng(1)
    src = rng.normal(size=(20, 6)).astype(np.float32)
    de = (src + rng.normal(size=6) + 0.1 * rng.normal(size=(20, 6))).astype(np.float32)
    pairs = ShiftTransform("en").fit(np.vstack([src, de]), ["en"] * 20 + ["de"] * 20, [*range(20), *range(20)])
    corpus = fit_corpus_shift(np.vstack([src, de]), ["en"] * 20 + ["de"] * 20, "en", encoder=ENC, min_docs=5)
    np.testing.assert_allclose(corpus.params_["de"], pairs.params_["de"], atol=1e-5)


def test_unknown_language_documents_are_ignored():
    embs, langs = _corpus()
    extra = np.full((3, embs.shape[1]), 100.0, dtype=np.float32)
    t = fit_corpus_shift(np.vstack([embs, extra]), langs + ["und", "", None], "en", encoder=ENC, min_docs=5)
    ref = fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5)
    np.testing.assert_array_equal(t.params_["de"], ref.params_["de"])


def test_too_few_documents_are_refused_with_the_threshold():
    embs, langs = _corpus(n={"en": 30, "de": 25, "ja": 4})
    with pytest.raises(MlirkitError, match=r"ja has 4; at least 20 per language.*with min_docs, or leave the language out with langs\)"):
        fit_corpus_shift(embs, langs, "en", encoder=ENC)
    with pytest.raises(MlirkitError, match=r"ja has 4; at least 5 per language"):
        fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5)
    assert fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=4).languages == ["de", "ja"]
    assert fit_corpus_shift(embs, langs, "en", encoder=ENC, only_langs=["de"]).languages == ["de"]
    with pytest.raises(MlirkitError, match=r"en has 3"):
        fit_corpus_shift(embs[27:], langs[27:], "en", encoder=ENC, min_docs=5)
    with pytest.raises(MlirkitError, match="no 'fr' .source-language. documents"):
        fit_corpus_shift(embs, langs, "fr", encoder=ENC)
    with pytest.raises(MlirkitError, match="min_docs must be at least 1"):
        fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=0)
    with pytest.raises(MlirkitError, match="unknown SHIFT vectors 'corpse'.*did you mean: corpus"):
        ShiftTransform("en", vectors="corpse").fit(embs, langs)


# --------------------------------------------------------------------------- hybrid
def _pairs_and_corpus(tmp_path):
    rng = np.random.default_rng(2)
    pairs = ShiftTransform.from_tensors({"de": rng.normal(size=8), "fr": rng.normal(size=8)}, encoder=ENC, source_lang="en",
                           meta={"pairs": {"de": 50, "fr": 40}})
    save_transform(pairs, tmp_path / "pairs.safetensors")
    embs, langs = _corpus(n={"en": 30, "de": 25, "ja": 22})
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    return pairs, corpus


def test_hybrid_takes_pairs_where_they_exist_and_records_provenance(tmp_path):
    pairs, corpus = _pairs_and_corpus(tmp_path)
    h = hybrid_shift(pairs, corpus, require_langs=["en", "de", "ja"])
    assert h.languages == ["de", "fr", "ja"]
    np.testing.assert_array_equal(h.params_["de"], pairs.params_["de"])
    np.testing.assert_array_equal(h.params_["fr"], pairs.params_["fr"])
    np.testing.assert_array_equal(h.params_["ja"], corpus.params_["ja"])
    assert h.meta["provenance"] == {"de": {"from": "pairs", "pairs": 50, "docs": 25}, "fr": {"from": "pairs", "pairs": 40},
                                    "ja": {"from": "corpus", "docs": 22}}
    # provenance survives the file and reaches meta.json through describe()
    save_transform(h, tmp_path / "h.safetensors")
    loaded = load_transform(tmp_path / "h.safetensors")
    assert loaded.meta["provenance"] == h.meta["provenance"]
    desc = loaded.describe(0.6)
    assert desc["provenance"]["ja"]["from"] == "corpus" and desc["hybrid"]["pairs_transform"]["sha256"] == pairs.sha256


def test_hybrid_refusals(tmp_path):
    pairs, corpus = _pairs_and_corpus(tmp_path)
    with pytest.raises(MlirkitError, match="no vector for ko"):
        hybrid_shift(pairs, corpus, require_langs=["en", "de", "ko"])
    other = ShiftTransform.from_tensors({"de": np.ones(8)}, encoder=ENC, source_lang="fr")
    with pytest.raises(MlirkitError, match="source languages differ"):
        hybrid_shift(other, corpus)
    with pytest.raises(MlirkitError, match="another encoder"):
        hybrid_shift(ShiftTransform.from_tensors({"de": np.ones(8)}, encoder={"model": "x"}, source_lang="en"), corpus)
    from mlirkit.transforms import CenteringTransform

    with pytest.raises(MlirkitError, match="two shift transforms"):
        hybrid_shift(pairs, CenteringTransform.from_tensors({"de": np.ones(8)}, encoder=ENC, source_lang="en"))


# --------------------------------------------------------------------------- label-free alpha

def test_label_free_alpha_recovers_a_planted_offset():
    embs, langs, offsets = planted(langs=("de", "fr"))
    grid = [round(0.1 * i, 1) for i in range(21)]
    # the vectors are twice the planted offsets: the right alpha is 0.5
    t = ShiftTransform.from_tensors({l: offsets[l] * 2 for l in ("de", "fr")}, encoder=ENC, source_lang="en")
    for criterion in ("knn", "knn-source"):
        sel = select_alpha(embs, langs, t, grid=grid, k=10, criterion=criterion)
        assert sel.alpha == pytest.approx(0.5, abs=0.1)
        assert sel.curve[0.0] > sel.curve[sel.alpha] and sel.curve[2.0] > sel.curve[sel.alpha]
    # per language, different scales: de needs 2.0, fr needs 2/3
    t2 = ShiftTransform.from_tensors({"de": offsets["de"] / 2, "fr": offsets["fr"] * 1.5}, encoder=ENC, source_lang="en")
    sel2 = select_alpha(embs, langs, t2, grid=grid, k=10, criterion="knn-source", per_language=True)
    assert sel2.per_language["de"] == pytest.approx(2.0, abs=0.15)
    assert sel2.per_language["fr"] == pytest.approx(2 / 3, abs=0.15)
    assert sel2.alpha_spec()["*"] == sel2.alpha
    # the corpus-fitted vectors estimate the offsets themselves: alpha about 1
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    sel3 = select_alpha(embs, langs, corpus, grid=grid, k=10, criterion="knn-source")
    assert sel3.alpha == pytest.approx(1.0, abs=0.15)
    # every language's probes: on this toy (offsets larger than the topics' spread) mixing keeps rising to 1.5,
    # and the plateau starts above 1 (on real encoders it starts at the retrieval optimum: docs/results.md)
    assert 1.0 <= select_alpha(embs, langs, corpus, grid=grid, k=10).alpha <= 1.3
    # the centroid criterion agrees on the planted scales
    sel4 = select_alpha(embs, langs, t2, grid=grid, criterion="centroid", per_language=True)
    assert sel4.per_language == {"de": pytest.approx(2.0, abs=0.1), "fr": pytest.approx(0.7, abs=0.1)}
    json.dumps(sel2.as_dict())


def test_label_free_alpha_refusals():
    embs, langs, offsets = planted(langs=("de", "fr"), groups=10)
    t = ShiftTransform.from_tensors({"de": offsets["de"]}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="criterion"):
        select_alpha(embs, langs, t, criterion="oracle")
    with pytest.raises(MlirkitError, match="grid"):
        select_alpha(embs, langs, t, grid=[3.0])
    with pytest.raises(MlirkitError, match="k=100"):
        select_alpha(embs, langs, t, k=100)
    with pytest.raises(MlirkitError, match="source-language"):
        select_alpha(embs[10:], langs[10:], t)


# --------------------------------------------------------------------------- CLI
def _index(tmp_path, embs, langs, name="idx"):
    from mlirkit.index import IndexWriter

    with IndexWriter(tmp_path / name, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    return tmp_path / name


def test_cli_fit_from_index_hybrid_select_alpha_and_apply(tmp_path, capsys):
    from experiments.cli import main as experiments_main
    from mlirkit.base.cli import run_cli
    from mlirkit.shift.cli import main

    embs, langs, offsets = planted(langs=("de", "fr"), groups=40)
    idx = _index(tmp_path, embs, langs)
    out = tmp_path / "corpus.safetensors"
    assert main(["fit", "--method", "shift", "--from-index", str(idx), "--vectors", "corpus", "--source-lang", "en",
                 "--output", str(out)]) == 0
    t = load_transform(out)
    la = np.array(langs)
    np.testing.assert_allclose(t.params_["de"], embs[la == "de"].mean(0) - embs[la == "en"].mean(0), atol=1e-5)
    assert t.meta["corpus_fit"]["origin"] == str(idx) and t.meta["recipe"]["vectors"] == "corpus"
    capsys.readouterr()

    assert experiments_main(["fit", "--from-index", str(idx), "--source-lang", "en", "--relative-to-overall", "--output",
                 str(tmp_path / "o.safetensors")]) == 0
    assert load_transform(tmp_path / "o.safetensors").method == "shift-overall"

    pairs = ShiftTransform.from_tensors({"de": offsets["de"]}, encoder=ENC, source_lang="en", meta={"pairs": {"de": 9}})
    save_transform(pairs, tmp_path / "pairs.safetensors")
    hyb = tmp_path / "hybrid.safetensors"
    assert experiments_main(["fit", "--from-index", str(idx), "--source-lang", "en", "--hybrid-with",
                             str(tmp_path / "pairs.safetensors"), "--blend", "0.5", "--output", str(hyb)]) == 0
    h = load_transform(hyb)
    assert {l: p["from"] for l, p in h.meta["provenance"].items()} == {"de": "blend", "fr": "corpus"}
    capsys.readouterr()

    assert main(["select-alpha", "--index", str(idx), "--transform", str(out), "--k", "10"]) == 0
    sel = json.loads(capsys.readouterr().out)
    assert sel["alpha"] == select_alpha(embs, langs, load_transform(out), k=10).alpha
    assert "per_language" not in sel and sel["alpha_arg"] == f"{sel['alpha']:g}"  # per-language alphas: not offered
    assert sel["criterion"] == "knn" and sel["tolerance"] == 0.1 and sel["probes"] == {"de": 40, "en": 40, "fr": 40}

    assert main(["apply", "--index", str(idx), "--transform", str(hyb), "--alpha", str(sel["alpha"]),
                 "--output", str(tmp_path / "shifted")]) == 0
    meta = json.loads((tmp_path / "shifted" / "meta.json").read_text())
    assert meta["transform"]["provenance"]["fr"] == {"from": "corpus", "docs": 40}
    assert meta["transform"]["hybrid"]["blend"] == 0.5

    # refusals: exit 2 with the threshold in the message
    few = _index(tmp_path, embs[:45], langs[:45], "few")
    for vectors in ("corpus", "mined"):
        assert run_cli(main, ["fit", "--from-index", str(few), "--vectors", vectors, "--source-lang", "en", "--output",
                              str(tmp_path / "x.safetensors")]) == 2
        assert "de has 5; at least 20 per language" in capsys.readouterr().err
    assert run_cli(main, ["fit", "--from-index", str(few), "--vectors", "corpus", "--source-lang", "en",
                          "--min-docs", "5", "--output", str(tmp_path / "x.safetensors")]) == 0
    for cli, argv, msg in ((experiments_main, ["--blend", "0.5"], "--blend needs --hybrid-with"),
                           (experiments_main, ["--relative-to-overall", "--hybrid-with", str(tmp_path / "pairs.safetensors")],
                            "drop --relative"),
                           (main, ["--method", "centering"], "is fitted on translation pairs"),
                           (main, ["--pairs", "x"], "not both")):
        assert run_cli(cli, ["fit", "--from-index", str(idx), "--source-lang", "en", "--output",
                             str(tmp_path / "y.safetensors"), *argv]) == 2
        assert msg in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # the recipes are the registry's names
        main(["fit", "--from-index", str(idx), "--vectors", "mean", "--source-lang", "en", "--output", "y"])
    assert e.value.code == 2 and "invalid choice: 'mean' (choose from 'corpus', 'mined')" in capsys.readouterr().err
    assert run_cli(main, ["fit", "--min-docs", "3", "--pairs", "x", "--source-lang", "en", "--output",
                          str(tmp_path / "y.safetensors")]) == 2
    assert "need --from-index" in capsys.readouterr().err
    assert run_cli(main, ["fit", "--source-lang", "en", "--output", str(tmp_path / "y.safetensors")]) == 2
    assert "--pairs SRC" in capsys.readouterr().err


# --------------------------------------------------------------------------- non-parallel DDTP
def test_nonparallel_ddtp_has_disjoint_packages_per_language():
    import ir_datasets

    import mlirkit.datasets  # noqa: F401
    from mlirkit.datasets.ddtp_nonparallel import assign_groups

    for mode in ("balanced", "sorted"):
        a = assign_groups(mode)
        assert a == assign_groups(mode)  # deterministic
    ds = ir_datasets.load("mlirkit/ddtp-nonparallel/en/test")
    docs = list(ds.docs_iter())
    groups = [d.doc_id.rsplit("/", 1)[0] for d in docs]
    assert len(groups) == len(set(groups))  # one language per description: disjoint group sets
    by_lang = {}
    for d in docs:
        by_lang[d.lang] = by_lang.get(d.lang, 0) + 1
    assert len(by_lang) == 14 and max(by_lang.values()) - min(by_lang.values()) <= 1  # same size
    ids = {d.doc_id for d in docs}
    qrels = list(ds.qrels_iter())
    queries = list(ds.queries_iter())
    assert len(qrels) == len(queries) > 0 and all(q.doc_id in ids for q in qrels)
    assert {q.lang for q in queries} == {"en"}
    # the same documents as the pooled bed (texts unchanged): embeddings can be reused by id
    pooled = {d.doc_id: d.text for d in ir_datasets.load("mlirkit/ddtp/en").docs_iter()}
    assert all(pooled[d.doc_id] == d.text for d in docs)
