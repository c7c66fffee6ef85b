"""The statistics of index-fitted SHIFT vectors (``fit --from-index DIR --vectors corpus|mined``): each equals the
knob-level functions called with the recipe's choices and records them; the topic projection follows the data."""
from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.mining_variants import fit_mined_shift
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform, load_transform, save_transform
from mlirkit.transforms.mining import LANGUAGE_IN_TOPICS, MINED
from mlirkit.transforms.defaults import DEFAULT_INDEX_STATISTICS, STATISTICS
from tests.transforms.toy_corpora import topic_mixes, topic_skewed

ENC = {"class": "test", "model": "toy"}


def _same(a, b):
    assert a.languages == b.languages and a.source_lang == b.source_lang
    for lang in a.languages:
        np.testing.assert_array_equal(a.params_[lang], b.params_[lang])


def fit(embs, langs, vectors="mined", **recipe):
    return ShiftTransform("en", vectors=vectors, **recipe).fit(embs, langs)


def test_the_statistics_and_the_measured_choices():
    assert list(STATISTICS) == ["pairs", "corpus", "mined"] and DEFAULT_INDEX_STATISTICS == "mined"
    assert MINED == {"selection": "union-knn", "k": 4, "center": True, "topic_rank": "auto", "topic_test_level": 0.01}
    embs, langs, _, _ = topic_skewed(seed=1)
    with pytest.raises(MlirkitError, match="did you mean: mined"):  # stored as given, refused by fit
        ShiftTransform("en", vectors="mine").fit(embs, langs)
    with pytest.raises(MlirkitError, match="needs groups"):
        ShiftTransform("en").fit(embs, langs)
    with pytest.raises(MlirkitError, match="needs groups"):
        ShiftTransform("en").partial_fit(embs, langs)


def test_corpus_statistics_are_the_difference_of_means():
    embs, langs, _, _ = topic_skewed(seed=2)
    t = fit(embs, langs, "corpus", min_docs=5)
    la = np.array(langs)
    for lang in ("de", "fr"):
        np.testing.assert_allclose(t.params_[lang], embs[la == lang].mean(0) - embs[la == "en"].mean(0), atol=1e-5)
    assert t.meta["recipe"]["vectors"] == "corpus" and "mining" not in t.meta
    # streamed in blocks: the same vectors (the sums are float64)
    s = ShiftTransform("en", vectors="corpus", min_docs=5)
    s.fit_blocks((embs[a:a + 97], langs[a:a + 97], None) for a in range(0, len(langs), 97))
    np.testing.assert_allclose(s.params_["de"], t.params_["de"], atol=1e-12)


def test_mined_statistics_are_union_knn_centred_with_the_projection_where_topic_leaks():
    embs, langs, offsets, _ = topic_mixes(seed=0)  # shared topics in language-specific proportions
    t = fit(embs, langs)
    want = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="union-knn", k=4, center=True, topic_rank="auto",
                           topic_test_level=0.01)
    _same(t, want)
    recipe = t.meta["recipe"]
    assert recipe["vectors"] == "mined" and {k: recipe[k] for k in MINED} == MINED
    assert recipe["topic_projection"].startswith("on:")
    assert t.meta["mining"]["selection"] == "union-knn" and t.meta["mining"]["center"] is True
    # the skew test fires on the corpus vectors, the mined vectors lie outside the subspace: projected
    robust = t.meta["topic_robust"]
    assert robust["skew_test"]["skewed"] is True and robust["applied"] is True
    assert robust["mined_share"] < LANGUAGE_IN_TOPICS * robust["random_share"]
    corpus = fit(embs, langs, "corpus")
    plain = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="union-knn", k=4, center=True)
    for lang in ("de", "fr"):  # the recipe's vector is nearer the planted offset than the corpus mean and plain mining
        err = np.linalg.norm(t.params_[lang] - offsets[lang])
        assert err < 0.5 * np.linalg.norm(plain.params_[lang] - offsets[lang])
        assert err < 0.1 * np.linalg.norm(corpus.params_[lang] - offsets[lang])


def test_mined_statistics_do_not_project_where_the_language_lies_in_the_topic_subspace():
    """An encoder whose language offsets lie in its high-variance directions (USEM): the skew test fires on the
    corpus vectors, and projecting would remove language; the mined vectors themselves show it."""
    embs, langs, offsets, topics = topic_mixes(seed=0, offset_in_topics=0.5)
    t = fit(embs, langs)
    _same(t, fit_mined_shift(embs, langs, "en", encoder=ENC, selection="union-knn", k=4, center=True))
    robust = t.meta["topic_robust"]
    assert robust["applied"] is False and robust["mined_share"] >= LANGUAGE_IN_TOPICS * robust["random_share"]
    assert t.meta["recipe"]["topic_projection"].startswith("off: topic leaks into the corpus vectors")
    for lang in ("de", "fr"):  # the offsets kept their part inside the topic directions
        assert np.sum((topics.T @ t.params_[lang]) ** 2) / np.sum(t.params_[lang] ** 2) > 0.3
    # nothing leaks: the skew test keeps the vectors, no second mining
    embs, langs, _, _ = topic_skewed(seed=9, skew=0.0, n=400)
    t = fit(embs, langs)
    assert t.meta["topic_robust"]["applied"] is False and t.meta["recipe"]["topic_projection"].startswith("off: the skew")


def _index(tmp_path, embs, langs, encoder=ENC):
    from mlirkit.index import IndexWriter

    with IndexWriter(tmp_path / "idx", dim=embs.shape[1], encoder=encoder, normalized=False,
                     save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    return tmp_path / "idx"


def test_cli_fit_from_index_defaults_to_the_mined_recipe_and_apply_records_it(tmp_path, capsys):
    from mlirkit.shift.cli import main

    embs, langs, _, _ = topic_mixes(seed=1)
    idx = _index(tmp_path, embs, langs)
    stored = np.load(idx / "embeddings.npy")
    out = tmp_path / "mined.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    _same(t, fit(stored, langs))
    assert printed["recipe"] == t.meta["recipe"] and printed["recipe"]["vectors"] == "mined"
    assert set(printed["mining"]["languages"]) == {"de", "fr"} and printed["topic_robust"]["applied"] is True
    assert t.meta["mining"]["origin"] == str(idx) and t.meta["normalized"] is False and t.encoder == ENC
    assert main(["apply", "--index", str(idx), "--transform", str(out), "--output", str(tmp_path / "shifted")]) == 0
    err = capsys.readouterr().err  # apply says which alpha it used, and why, when none was given
    assert "alpha 1 for every language: the default, SHIFT's published strength" in err and "select-alpha" in err
    meta = json.loads((tmp_path / "shifted" / "meta.json").read_text())
    assert meta["transform"]["alpha"] == 1.0
    assert main(["apply", "--index", str(idx), "--transform", str(out), "--alpha", "1.1",
                 "--output", str(tmp_path / "shifted-1.1")]) == 0
    assert "the default" not in capsys.readouterr().err
    assert meta["transform"]["recipe"] == t.meta["recipe"]
    assert meta["transform"]["provenance"]["de"]["from"] == "mined-pairs"


def test_cli_hybrid_composes_with_either_recipe(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.shift.cli import main

    embs, langs, offsets, _ = topic_skewed(seed=5)
    idx = _index(tmp_path, embs, langs)
    pairs = ShiftTransform.from_tensors({"de": offsets["de"]}, encoder=ENC, source_lang="en", meta={"pairs": {"de": 9}})
    save_transform(pairs, tmp_path / "pairs.safetensors")
    for vectors, filled in (("mined", "mined-pairs"), ("corpus", "corpus")):
        out = tmp_path / f"hybrid-{vectors}.safetensors"
        assert main(["fit", "--from-index", str(idx), "--vectors", vectors, "--source-lang", "en", "--hybrid-with",
                     str(tmp_path / "pairs.safetensors"), "--output", str(out)]) == 0
        capsys.readouterr()
        h = load_transform(out)
        assert {l: p["from"] for l, p in h.meta["provenance"].items()} == {"de": "pairs", "fr": filled}
        np.testing.assert_array_equal(h.params_["de"], pairs.params_["de"])
        assert h.meta["recipe"]["vectors"] == vectors
    for argv in (["--vectors", "corpus"], ["--hybrid-with", "p.safetensors"]):
        assert run_cli(main, ["fit", "--pairs", "x", "--source-lang", "en", *argv, "--output",
                              str(tmp_path / "y.safetensors")]) == 2
        assert "need --from-index DIR" in capsys.readouterr().err
    assert not (tmp_path / "y.safetensors").exists()


def test_fit_has_about_half_its_former_options():
    """The research knobs left for ``python -m experiments.cli fit``; what is left composes."""
    from experiments.cli import build_parser as experiments_parser
    from mlirkit.shift.cli import build_parser

    def own(parser):
        fit = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices["fit"]
        from mlirkit.encoders.options import add_encoder_args
        import argparse

        enc = argparse.ArgumentParser(add_help=False)
        add_encoder_args(enc)
        shared = {o for a in enc._actions for o in a.option_strings}
        return {o for a in fit._actions for o in a.option_strings if o.startswith("--") and o not in shared} - {"--help"}

    product, research = own(build_parser()), own(experiments_parser())
    assert len(product) <= 16
    assert {"--mine-pairs", "--topic-rank", "--blend", "--heldout"} <= research - product
    assert product - research == {"--vectors", "--force"}  # the recipes and the .pt import are the product's
