"""``fit --from-index`` reads the index's embeddings once: the product's recipes (``--vectors mined|corpus``),
and the experiments' ``--topic-rank`` (for the corpus vectors and the topic subspace both), which writes the
transform the library functions give when each reads them itself."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.transforms import load_transform, save_transform
from experiments.cli import main
from mlirkit.shift.cli import main as shift_main

ENC = {"class": "test", "model": "toy"}


@pytest.fixture
def index(tmp_path):
    from mlirkit.index import IndexWriter

    rng = np.random.default_rng(3)
    d, n, r = 24, 80, 3
    topics = np.linalg.qr(rng.normal(size=(d, d)))[0][:, :r]
    rows, langs = [], []
    for i, lang in enumerate(("en", "de", "fr", "ja")):
        coef = 3.0 * (rng.normal(size=r) + rng.normal(size=(n, r)))  # each language its own topic mix
        rows.append(coef @ topics.T + (i > 0) * rng.normal(size=d) + 0.3 * rng.normal(size=(n, d)))
        langs += [lang] * n
    embs = np.concatenate(rows).astype(np.float32)
    with IndexWriter(tmp_path / "idx", dim=d, encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(embs))], langs, embs)
    return tmp_path / "idx"


def _reference(idx, rank, test_level, langs=None):
    """What the CLI computed before: the corpus fit and the topic subspace each reading the index."""
    from experiments.corpus_variants import fit_corpus_shift
    from experiments.topic_projection import parse_topic_rank, remove_topic
    from mlirkit.shift.from_index import index_document_embeddings
    from mlirkit.transforms.topic_subspace import topic_subspace

    embs, doc_langs, encoder = index_document_embeddings(idx)
    t = fit_corpus_shift(embs, doc_langs, "en", encoder=encoder, only_langs=langs, origin=str(idx),
                         meta={"normalized": False})
    embs, doc_langs, _ = index_document_embeddings(idx)
    return remove_topic(t, topic_subspace(embs, doc_langs, parse_topic_rank(rank)), test_level=test_level)


@pytest.mark.parametrize("argv, rank, level, langs", [
    (["--topic-rank", "auto"], "auto", None, None),
    (["--topic-rank", "2", "--langs", "de,fr"], "2", None, ["de", "fr"]),
    (["--topic-rank", "auto", "--topic-test", "0.01"], "auto", 0.01, None),
])
def test_the_written_transform_is_the_two_read_one_and_the_index_is_read_once(index, tmp_path, capsys, monkeypatch,
                                                                              argv, rank, level, langs):
    import mlirkit.shift.from_index as from_index

    ref = tmp_path / "ref.safetensors"
    save_transform(_reference(index, rank, level, langs), ref)
    reads = []
    real = from_index.index_document_embeddings
    monkeypatch.setattr(from_index, "index_document_embeddings", lambda d: reads.append(d) or real(d))
    out = tmp_path / "cli.safetensors"
    assert main(["fit", "--from-index", str(index), "--source-lang", "en", *argv, "--output", str(out)]) == 0
    capsys.readouterr()
    assert reads == [str(index)]  # one read for both the corpus vectors and the topic subspace
    got, want = load_transform(out), load_transform(ref)
    assert got.method == want.method and got.languages == want.languages and got.source_lang == want.source_lang
    for lang in want.languages:
        np.testing.assert_array_equal(got.params_[lang], want.params_[lang])  # bit-identical vectors
    assert got.meta["topic_robust"]["rank"] >= 1 and got.meta["provenance"] == want.meta["provenance"]
    assert {k: v for k, v in got.meta.items() if k != "created"} == {k: v for k, v in want.meta.items() if k != "created"}
    assert got.encoder == want.encoder


def test_without_topic_rank_the_index_is_read_once_too(index, tmp_path, capsys, monkeypatch):
    import mlirkit.shift.from_index as from_index

    reads = []
    real = from_index.index_document_embeddings
    monkeypatch.setattr(from_index, "index_document_embeddings", lambda d: reads.append(d) or real(d))
    for i, (cli, extra) in enumerate(((main, []), (main, ["--mine-pairs", "--topic-rank", "2"]), (shift_main, []),
                                      (shift_main, ["--vectors", "corpus"]), (shift_main, ["--vectors", "mined"]))):
        reads.clear()
        assert cli(["fit", "--from-index", str(index), "--source-lang", "en", *extra,
                    "--output", str(tmp_path / f"t{i}.safetensors")]) == 0
        assert len(reads) == 1
    capsys.readouterr()
