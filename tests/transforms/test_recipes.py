"""The named recipes of index-fitted SHIFT vectors (``fit --from-index DIR --vectors corpus|mined``): each equals
the knob-level functions called with the recipe's choices, records them, and makes the encoder-dependent one."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform, fit_corpus_shift, load_transform, save_transform
from mlirkit.transforms.mining import fit_mined_shift
from mlirkit.transforms.recipes import MINED, SKEW_TEST_INVALID, VECTOR_RECIPES, fit_recipe
from tests.transforms.toy_corpora import topic_skewed

ENC = {"class": "test", "model": "toy"}
USEM = {"class": "usem", "model": "toy-usem"}


def _same(a, b):
    assert a.languages == b.languages and a.source_lang == b.source_lang
    for lang in a.languages:
        np.testing.assert_array_equal(a.params[lang], b.params[lang])


def test_the_registry_and_the_measured_choices():
    assert VECTOR_RECIPES.names() == ["corpus", "mined"]
    assert MINED == {"selection": "union-knn", "k": 4, "center": True, "topic_rank": "auto", "topic_test_level": 0.01}
    assert "usem" in SKEW_TEST_INVALID
    embs, langs, _, _ = topic_skewed(seed=1)
    with pytest.raises(MlirkitError, match="did you mean: mined"):
        fit_recipe(embs, langs, "en", vectors="mine", encoder=ENC)


def test_corpus_recipe_is_the_difference_of_means():
    embs, langs, _, _ = topic_skewed(seed=2)
    t = fit_recipe(embs, langs, "en", vectors="corpus", encoder=ENC, min_docs=5)
    _same(t, fit_corpus_shift(embs, langs, "en", encoder=ENC, min_docs=5))
    assert t.meta["recipe"]["vectors"] == "corpus" and "mining" not in t.meta


def test_mined_recipe_is_union_knn_centred_with_the_skew_tested_projection():
    embs, langs, offsets, _ = topic_skewed(seed=5)
    t = fit_recipe(embs, langs, "en", encoder=ENC)  # the default recipe
    want = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="union-knn", k=4, center=True, topic_rank="auto",
                           topic_test_level=0.01)
    _same(t, want)
    recipe = t.meta["recipe"]
    assert recipe["vectors"] == "mined" and {k: recipe[k] for k in MINED} == MINED
    assert t.meta["mining"]["selection"] == "union-knn" and t.meta["mining"]["center"] is True
    # topics differ by language here: the skew test fires and the projection is applied
    assert t.meta["topic_robust"]["skew_test"]["skewed"] is True and t.meta["topic_robust"]["applied"] is True
    corpus = fit_corpus_shift(embs, langs, "en", encoder=ENC)
    for lang in ("de", "fr"):  # and the recipe's vector is nearer the planted language offset than the corpus mean
        assert np.linalg.norm(t.params[lang] - offsets[lang]) < np.linalg.norm(corpus.params[lang] - offsets[lang])


def test_mined_recipe_does_not_project_for_an_encoder_whose_skew_test_null_fails():
    embs, langs, _, _ = topic_skewed(seed=5)
    t = fit_recipe(embs, langs, "en", encoder=USEM)
    _same(t, fit_mined_shift(embs, langs, "en", encoder=USEM, selection="union-knn", k=4, center=True))
    assert "topic_robust" not in t.meta
    recipe = t.meta["recipe"]
    assert recipe["topic_rank"] is None and recipe["topic_test_level"] is None
    assert recipe["topic_projection"].startswith("off for encoder class 'usem': ")


def _index(tmp_path, embs, langs, encoder=ENC):
    from mlirkit.index import IndexWriter

    with IndexWriter(tmp_path / "idx", dim=embs.shape[1], encoder=encoder, normalized=False,
                     save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    return tmp_path / "idx"


def test_cli_fit_from_index_defaults_to_the_mined_recipe_and_apply_records_it(tmp_path, capsys):
    from mlirkit.shift.cli import main

    embs, langs, _, _ = topic_skewed(seed=5)
    idx = _index(tmp_path, embs, langs)
    stored = np.load(idx / "embeddings.npy")
    out = tmp_path / "mined.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    _same(t, fit_recipe(stored, langs, "en", encoder=ENC))
    assert printed["recipe"] == t.meta["recipe"] and printed["recipe"]["vectors"] == "mined"
    assert set(printed["mining"]["languages"]) == {"de", "fr"} and printed["topic_robust"]["applied"] is True
    assert t.meta["mining"]["origin"] == str(idx) and t.meta["normalized"] is False
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
    pairs = ShiftTransform({"de": offsets["de"]}, encoder=ENC, source_lang="en", meta={"pairs": {"de": 9}})
    save_transform(pairs, tmp_path / "pairs.safetensors")
    for vectors, filled in (("mined", "mined-pairs"), ("corpus", "corpus")):
        out = tmp_path / f"hybrid-{vectors}.safetensors"
        assert main(["fit", "--from-index", str(idx), "--vectors", vectors, "--source-lang", "en", "--hybrid-with",
                     str(tmp_path / "pairs.safetensors"), "--output", str(out)]) == 0
        capsys.readouterr()
        h = load_transform(out)
        assert {l: p["from"] for l, p in h.meta["provenance"].items()} == {"de": "pairs", "fr": filled}
        np.testing.assert_array_equal(h.params["de"], pairs.params["de"])
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
    assert product - research == {"--vectors"}
