"""Index directory and search: FAISS equals numpy brute force, atomic writes, deterministic ties."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.encode import Indexer
from mlirkit.base.errors import MlirkitError
from mlirkit.index import DenseIndex, IndexWriter
from mlirkit.base.vectors import l2_normalize
from mlirkit.io.records import Doc, Query
from mlirkit.search import Searcher, SearchResults
from mlirkit.testing.fake_encoder import FakeEncoder

WORDS = "ferry harbour island winter wind morning boat pier ticket storm lighthouse bridge river".split()
LANGS = ["en", "de", "fr"]


def make_docs(n: int, seed: int = 0) -> list[Doc]:
    rng = np.random.default_rng(seed)
    return [Doc(f"d{i:03d}", " ".join(rng.choice(WORDS, size=rng.integers(2, 8))), LANGS[i % 3]) for i in range(n)]


def make_queries(n: int, seed: int = 1) -> list[Query]:
    rng = np.random.default_rng(seed)
    return [Query(f"q{i}", " ".join(rng.choice(WORDS, size=3)), "en") for i in range(n)]


@pytest.fixture
def fake_index(tmp_path):
    encoder = FakeEncoder()
    docs = make_docs(120)
    Indexer(tmp_path / "idx", encoder, save_embeddings=True, chunk_size=25, show_progress=False).index(docs)
    return encoder, docs, tmp_path / "idx"


def test_index_layout_and_meta(fake_index):
    encoder, docs, path = fake_index
    assert sorted(p.name for p in path.iterdir()) == ["docid", "embeddings.npy", "index", "langs", "meta.json"]
    index = DenseIndex(path)
    assert index.docids == [d.doc_id for d in docs]
    assert index.langs == [d.lang for d in docs]
    meta = json.loads((path / "meta.json").read_text())
    assert meta["encoder"] == encoder.fingerprint and meta["dim"] == 16 and meta["count"] == 120
    assert meta["lang_counts"] == {"de": 40, "en": 40, "fr": 40} and meta["normalized"] is True
    raw = encoder.encode_docs([d.text for d in docs], [d.lang for d in docs])
    np.testing.assert_array_equal(index.embeddings(), raw)
    np.testing.assert_allclose(index.indexed_vectors(), l2_normalize(raw), atol=1e-6)
    assert not list(path.parent.glob(".idx.tmp-*"))


def test_search_equals_numpy_brute_force(fake_index):
    encoder, docs, path = fake_index
    queries = make_queries(20)
    results = Searcher(path, encoder).search(queries, k=10, batch_size=7)
    doc_vecs = l2_normalize(encoder.encode_docs([d.text for d in docs], [d.lang for d in docs]))
    q_vecs = l2_normalize(encoder.encode_queries([q.text for q in queries], [q.lang for q in queries]))
    scores = q_vecs @ doc_vecs.T
    for qi, query in enumerate(queries):
        expected = sorted(range(len(docs)), key=lambda j: (-round(float(scores[qi, j]), 5), docs[j].doc_id))[:10]
        got = results[query.query_id]
        assert [h.doc_id for h in got] == [docs[j].doc_id for j in expected]
        np.testing.assert_allclose([h.score for h in got], scores[qi, expected], atol=1e-5)


def test_ties_broken_by_doc_id(tmp_path):
    encoder = FakeEncoder(lang_strength=0.0)
    docs = [Doc(f"z{i}", "same words here", "en") for i in range(5)] + [Doc("a9", "same words here", "en")]
    Indexer(tmp_path / "i", encoder, show_progress=False).index(docs)
    hits = Searcher(tmp_path / "i", encoder).search([Query("q", "same words here", "en")], k=3)["q"]
    assert [h.doc_id for h in hits] == ["a9", "z0", "z1"]


def test_refuses_other_encoder_and_dimension(fake_index):
    _, _, path = fake_index
    with pytest.raises(MlirkitError, match="made with another encoder.*lang_strength"):
        Searcher(path, FakeEncoder(lang_strength=0.1))
    with pytest.raises(MlirkitError, match="dimension 8 != index dimension 16"):
        Searcher(path, FakeEncoder(dim=8))
    Searcher(path, FakeEncoder(lang_strength=0.1), force=True)  # warned, allowed


def test_failure_leaves_nothing(tmp_path):
    def docs():
        yield Doc("a", "one", "en")
        raise MlirkitError("corpus.jsonl:2: invalid JSON")

    with pytest.raises(MlirkitError):
        Indexer(tmp_path / "idx", FakeEncoder(), chunk_size=1, show_progress=False).index(docs())
    assert list(tmp_path.iterdir()) == []


def test_overwrite_rules(fake_index):
    encoder, docs, path = fake_index
    with pytest.raises(MlirkitError, match="already exists"):
        Indexer(path, encoder, show_progress=False).index(docs[:3])
    Indexer(path, encoder, overwrite=True, show_progress=False).index(docs[:3])
    assert DenseIndex(path).docids == ["d000", "d001", "d002"]


def test_writer_refuses_duplicates_and_empty(tmp_path):
    with pytest.raises(MlirkitError, match="duplicate document id 'x'"):
        with IndexWriter(tmp_path / "i", dim=2, encoder={}, normalized=True) as w:
            w.add(["x", "x"], ["en", "en"], np.eye(2, dtype=np.float32))
    with pytest.raises(MlirkitError, match="no documents"):
        with IndexWriter(tmp_path / "j", dim=2, encoder={}, normalized=True):
            pass
    assert list(tmp_path.iterdir()) == []


def test_results_convert_to_a_run_a_ranx_run_and_a_trec_file(fake_index, tmp_path):
    from mlirkit.io.trec import read_run_with_tag

    encoder, _, path = fake_index
    results = Searcher(path, encoder).search(make_queries(3), k=5)
    assert isinstance(results, SearchResults) and isinstance(results, dict)
    run = results.to_run()
    assert set(run) == {"q0", "q1", "q2"} and all(len(v) == 5 for v in run.values())
    assert run == {q: {h.doc_id: h.score for h in hits} for q, hits in results.items()}
    assert results.to_ranx(name="base").to_dict() == run and results.to_ranx(name="base").name == "base"
    results.write_trec(tmp_path / "runs" / "base.trec")
    assert read_run_with_tag(tmp_path / "runs" / "base.trec") == (run, "base")  # scores round-trip exactly
    with pytest.raises(MlirkitError, match="exists"):
        results.write_trec(tmp_path / "runs" / "base.trec")


def test_results_go_straight_into_evaluate(fake_index):
    from mlirkit.eval import evaluate

    encoder, docs, path = fake_index
    queries = make_queries(6)
    results = Searcher(path, encoder).search(queries, k=20)
    qrels = {q.query_id: {docs[i].doc_id: 1 for i in range(int(q.query_id[1:]), 120, 7)} for q in queries}
    doc_langs = {d.doc_id: d.lang for d in docs}
    metrics = ["ndcg@10", "recall@20", "tlr@20"]
    as_dicts = evaluate(qrels, {"run": results.to_run()}, metrics, doc_langs=doc_langs, query_langs="en")
    for given in (results, {"run": results}, [results.to_ranx(name="run")]):
        res = evaluate(qrels, given, metrics, doc_langs=doc_langs, query_langs="en")
        assert res.runs == ["run"] and res.table.equals(as_dicts.table)
    res = evaluate(qrels, results, metrics, doc_langs=path, query_langs="en")  # languages from the index
    assert res.table.equals(as_dicts.table)
