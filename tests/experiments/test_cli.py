"""``python -m experiments.cli fit``: the knobs of the index-fitted vectors as the investigation ran them
(mined pairs, pair selection, topic projection), and ``select-alpha --guarded`` on their output."""
from __future__ import annotations

import json

import numpy as np

from experiments.corpus_variants import fit_corpus_shift
from mlirkit.transforms import load_transform
from experiments.mining_variants import fit_mined_shift
from experiments.topic_projection import remove_topic
from mlirkit.transforms.topic_subspace import topic_subspace
from tests.transforms.toy_corpora import even, skewed, topic_skewed

ENC = {"class": "test", "model": "toy"}


def test_cli_fit_mine_pairs_and_select_alpha_guarded(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.index import IndexWriter
    from experiments.cli import main

    embs, langs, offsets = skewed()
    idx = tmp_path / "idx"
    with IndexWriter(idx, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    out = tmp_path / "mined.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--mine-pairs", "--mine-k", "3",
                 "--mine-threshold", "0.99", "--mine-center", "--mine-min-pairs", "5", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    want = fit_mined_shift(embs, langs, "en", encoder=ENC, selection="mutual-margin", k=3, threshold=0.99, center=True, min_pairs=5)
    for lang in ("de", "fr"):
        np.testing.assert_allclose(t.params_[lang], want.params_[lang], atol=1e-6)
        assert printed["mining"]["languages"][lang]["pairs"] == t.meta["provenance"][lang]["pairs"] > 0
    assert t.meta["mining"]["k"] == 3 and t.meta["mining"]["origin"] == str(idx) and t.meta["mining"]["center"]
    assert t.meta["mining"]["languages"]["de"]["rounds"][0]["margin"]["min"] >= 0.99

    assert main(["select-alpha", "--index", str(idx), "--transform", str(out), "--k", "10", "--guarded",
                 "--retrievability-k", "3", "--grid", "0.5", "1.0", "1.5"]) == 0
    sel = json.loads(capsys.readouterr().out)
    g = sel["guarded"]
    assert set(g["per_language"]) == {"de", "fr"} and g["grid"] == [0.0, 0.5, 1.0, 1.5]
    assert g["k"] == 10 and g["retrievability_k"] == 3
    assert all(r["chosen"] >= r["alpha_0"] for r in g["retrievability"].values())

    # the index records the mining provenance of the transform applied
    from mlirkit.shift.cli import main as shift_main

    assert shift_main(["apply", "--index", str(idx), "--transform", str(out), "--alpha", *g["alpha_arg"].split(),
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


def test_cli_fit_mine_selection(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.index import IndexWriter
    from experiments.cli import main

    embs, langs, _ = even(2)
    idx = tmp_path / "idx"
    with IndexWriter(idx, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    out = tmp_path / "u.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--mine-pairs", "--mine-selection",
                 "union-knn", "--mine-k", "2", "--mine-center", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    want = fit_mined_shift(embs, langs, "en", encoder=ENC, k=2, center=True, selection="union-knn")
    for lang in ("de", "fr"):
        np.testing.assert_allclose(t.params_[lang], want.params_[lang], atol=1e-6)
    assert printed["mining"]["selection"] == "union-knn" and t.meta["mining"]["selection"] == "union-knn"
    for argv, msg in ((["--mine-pairs", "--mine-selection", "union"], "did you mean: union-knn"),
                      (["--mine-pairs", "--mine-selection", "union-knn", "--mine-threshold", "1.02"],
                       "--mine-threshold filters mutual-margin pairs"),
                      (["--mine-selection", "union-knn"], "need --mine-pairs")):
        assert run_cli(main, ["fit", "--from-index", str(idx), "--source-lang", "en", "--output",
                              str(tmp_path / "y.safetensors"), *argv]) == 2
        assert msg in capsys.readouterr().err
    assert not (tmp_path / "y.safetensors").exists()


def test_cli_fit_topic_rank_corpus_and_mined(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.index import IndexWriter
    from experiments.cli import main

    embs, langs, offsets, _ = topic_skewed(seed=5)
    idx = tmp_path / "idx"
    with IndexWriter(idx, dim=embs.shape[1], encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    stored = np.asarray(np.load(idx / "embeddings.npy"), dtype=np.float64) if (idx / "embeddings.npy").exists() else embs
    out = tmp_path / "corpus-tr.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--topic-rank", "auto",
                 "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    want = remove_topic(fit_corpus_shift(stored, langs, "en", encoder=ENC), topic_subspace(stored, langs))
    for lang in ("de", "fr"):
        np.testing.assert_allclose(t.params_[lang], want.params_[lang], atol=1e-5)
    assert printed["topic_robust"]["rank"] == t.meta["topic_robust"]["rank"] == 4

    out = tmp_path / "mined-tr.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--mine-pairs", "--mine-center",
                 "--topic-rank", "3", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    want = fit_mined_shift(stored, langs, "en", encoder=ENC, selection="mutual-margin", center=True, topic_rank=3)
    for lang in ("de", "fr"):
        np.testing.assert_allclose(t.params_[lang], want.params_[lang], atol=1e-5)
    assert t.meta["topic_robust"]["rank"] == 3 and t.meta["topic_robust"]["rule"] == "given"
    assert "every round" in t.meta["mining"]["formula"] and printed["topic_robust"]["rank"] == 3

    out = tmp_path / "corpus-trt.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--topic-rank", "auto", "--topic-test",
                 "0.01", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["topic_robust"]["skew_test"]["skewed"] is True and printed["topic_robust"]["applied"] is True
    for argv, msg in ((["--topic-rank", "x"], "--topic-rank"), (["--topic-test", "0.01"], "needs --topic-rank"),
                      (["--topic-rank", "2", "--topic-test", "2"], "in (0, 1)"),
                      (["--topic-rank", "2", "--relative-to-overall"], "drop --relative-to-overall")):
        assert run_cli(main, ["fit", "--from-index", str(idx), "--source-lang", "en", "--output",
                              str(tmp_path / "y.safetensors"), *argv]) == 2
        assert msg in capsys.readouterr().err
    assert run_cli(main, ["fit", "--topic-rank", "2", "--pairs", "x", "--source-lang", "en", "--output",
                          str(tmp_path / "y.safetensors")]) == 2
    assert "need --from-index" in capsys.readouterr().err
