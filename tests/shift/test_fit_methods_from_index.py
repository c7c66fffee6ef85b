"""``shift fit --method M --from-index DIR`` for the methods that need no translation pairs (LSAR, LEACE,
corpus-fitted SHIFT): the file is the estimator fitted on the index's own documents; the others are refused."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.shift.cli import main
from mlirkit.transforms import LEACETransform, LSARTransform, load_transform

ENC = {"class": "test", "model": "toy"}


@pytest.fixture
def index(tmp_path):
    from mlirkit.index import IndexWriter

    rng = np.random.default_rng(0)
    langs = [la for la in ("en", "de", "fr", "ja") for _ in range(30)]
    embs = (rng.normal(size=(120, 12)) + np.repeat(3 * rng.normal(size=(4, 12)), 30, axis=0)).astype(np.float32)
    with IndexWriter(tmp_path / "idx", dim=12, encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(120)], langs, embs)
    return tmp_path / "idx", embs, langs


@pytest.mark.parametrize("argv, estimator", [(["--method", "lsar"], LSARTransform("en")),
                                             (["--method", "lsar", "--rank", "2"], LSARTransform("en", rank=2)),
                                             (["--method", "leace"], LEACETransform("en"))])
def test_fit_from_index_is_the_estimator_on_the_index_documents(index, tmp_path, capsys, argv, estimator):
    idx, embs, langs = index
    out = tmp_path / "t.safetensors"
    assert main(["fit", "--from-index", str(idx), "--source-lang", "en", *argv, "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    t = load_transform(out)
    want = estimator.fit(embs, langs)
    assert printed["method"] == t.method == want.method and t.encoder == ENC and t.meta["source"] == str(idx)
    assert t.transform(embs, langs, "query").tobytes() == want.transform(embs, langs, "query").tobytes()
    assert main(["apply", "--index", str(idx), "--transform", str(out), "--output", str(tmp_path / "applied")]) == 0
    assert json.loads((tmp_path / "applied" / "meta.json").read_text())["transform"]["method"] == t.method


@pytest.mark.parametrize("argv, message", [
    (["--method", "centering"], "centering is fitted on translation pairs (--pairs)"),
    (["--method", "lir"], "lir is fitted on translation pairs"),
    (["--method", "lsar", "--vectors", "corpus"], "--vectors chooses the statistics of shift vectors"),
    (["--method", "leace", "--rank", "2"], "--rank is for lir and lsar"),
    (["--method", "leace", "--langs", "de"], "--langs: for shift vectors, not leace"),
    (["--method", "lsar", "--rank", "9"], "rank 9 is larger than the number of languages fitted on (4"),
])
def test_refusals(index, tmp_path, capsys, argv, message):
    idx, _, _ = index
    assert run_cli(main, ["fit", "--from-index", str(idx), "--source-lang", "en", *argv,
                          "--output", str(tmp_path / "x.safetensors")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "x.safetensors").exists()
