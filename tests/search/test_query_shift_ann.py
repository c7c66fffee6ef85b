"""The query-time shift on IVF-PQ, HNSW and sharded indexes: candidates from the index, re-scored exactly.

- IVF-PQ (lossy codes): the hits are the brute-force top k *of the index's candidates*, scored with the
  exact re-based vectors (not the PQ approximations);
- sharded == unsharded: shards searched as one give the single index's ranking and scores (flat:
  exhaustive; HNSW / IVF-PQ shards: exact re-scoring of the shards' merged candidates).
"""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.vectors import l2_normalize
from mlirkit.encode import Indexer
from mlirkit.index import DenseIndex
from mlirkit.index.types import IndexSpec
from mlirkit.io.records import Doc, Query
from mlirkit.search import Searcher
from mlirkit.search.query_shift import TIE_SLACK
from mlirkit.search.sharded import open_index
from mlirkit.testing.fake_encoder import FakeEncoder
from mlirkit.transforms.shift_transform import ShiftTransform, derive_source

pytestmark = pytest.mark.usefixtures("one_faiss_thread")

WORDS = "ferry harbour island winter wind morning boat pier ticket storm lighthouse bridge river".split()
DOC_LANGS = ["en", "de", "fr", "und", "ja"]  # und: unknown, ja: no vector
QUERY_LANGS = ["en", "de", "fr", "ja", None]
ALPHA = 0.7
IVFPQ = IndexSpec.create("ivf-pq", {"nlist": 8, "m": 4, "nbits": 4, "nprobe": 2})
K = 10


def make_docs(n: int = 240) -> list[Doc]:
    rng = np.random.default_rng(0)
    return [Doc(f"d{i:03d}", " ".join(rng.choice(WORDS, size=rng.integers(2, 7))), DOC_LANGS[i % len(DOC_LANGS)])
            for i in range(n)]


def make_queries(n: int = 25) -> list[Query]:
    rng = np.random.default_rng(5)
    return [Query(f"q{i}", " ".join(rng.choice(WORDS, size=3)), QUERY_LANGS[i % len(QUERY_LANGS)] or "und")
            for i in range(n)]


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    from mlirkit.transforms import save_transform

    d = tmp_path_factory.mktemp("qshift-ann")
    enc = FakeEncoder()
    rng = np.random.default_rng(3)
    t = ShiftTransform.from_tensors({la: rng.normal(scale=0.4, size=enc.dim) for la in ("de", "fr")},
                       encoder=enc.fingerprint, source_lang="en")
    save_transform(t, d / "shift.safetensors")
    docs = make_docs()

    def build(path, subset, kind=None):
        Indexer(path, enc, transform=d / "shift.safetensors", alpha=ALPHA, save_embeddings=True, show_progress=False,
                index_type=kind, chunk_size=37, missing="keep").index(subset)
        return path

    paths = {kind: build(d / kind, docs, spec) for kind, spec in (("flat", None), ("hnsw", "hnsw"), ("ivf-pq", IVFPQ))}
    for kind, spec in (("flat", None), ("hnsw", "hnsw"), ("ivf-pq", IVFPQ)):
        paths[f"{kind}-shards"] = [build(d / f"{kind}-s{i}", docs[i::3], spec) for i in range(3)]
    return enc, t, paths


def brute_force_on(t, index, vectors, queries, rows):
    """Each query's top K among ``rows`` (its candidates), scored in the index re-based for its language."""
    from mlirkit.base.langs import canonical

    raw, langs, docids = np.asarray(index_embeddings(index)), index.langs, index.docids
    out = []
    for q, v, cand in zip(queries, vectors, rows):
        s = canonical(q.lang)
        ts = derive_source(t, s) if s in t.params_ else t
        x = l2_normalize(ts.transform(raw, langs, "doc", ALPHA))
        cand = cand[cand >= 0]
        hits = sorted(((docids[i], float(x[i] @ v)) for i in cand), key=lambda h: (-h[1], h[0]))
        out.append(hits[:K])
    return out


def index_embeddings(index):
    from mlirkit.search.query_shift import index_embeddings as emb

    return emb(index)


def as_pairs(hits):
    return [[(h.doc_id, h.score) for h in row] for row in hits]


def assert_same(got, want, atol=1e-5):
    assert [[d for d, _ in r] for r in got] == [[d for d, _ in r] for r in want]
    for a, b in zip(got, want):
        np.testing.assert_allclose([s for _, s in a], [s for _, s in b], atol=atol)


@pytest.mark.parametrize("kind", ["ivf-pq", "ivf-pq-shards", "hnsw", "hnsw-shards"])
@pytest.mark.parametrize("candidates", [30, 60])
def test_candidates_rescored_equal_brute_force_on_the_candidates(bed, kind, candidates):
    enc, t, paths = bed
    index = open_index(paths[kind])
    queries = make_queries()
    searcher = Searcher(index, enc, query_shift="cosine", candidates=candidates, missing="keep")
    vectors = searcher.encode_queries(queries)
    got = as_pairs(searcher.search_vectors(vectors, K, [q.lang for q in queries]))
    fetch = max(candidates, K + TIE_SLACK)
    _, rows = index.faiss_index.search(np.ascontiguousarray(vectors), fetch)
    assert_same(got, brute_force_on(t, index, vectors, queries, rows))
    if kind.startswith("ivf-pq"):  # the candidate set is really approximate here (2 of 8 cells visited)
        exhaustive = as_pairs(Searcher(index, enc, query_shift="cosine", candidates=0, missing="keep").search_vectors(
            vectors, K, [q.lang for q in queries]))
        assert [[d for d, _ in r] for r in got] != [[d for d, _ in r] for r in exhaustive]
    if kind.startswith("ivf-pq"):  # the scores are the exact ones, not the PQ codes' approximations
        plain = Searcher(index, enc).search_vectors(vectors, K)
        assert max(abs(a.score - b.score) for r1, r2 in zip(plain, searcher.search_vectors(vectors, K, ["en"] * len(queries)))
                   for a, b in zip(r1, r2)) > 1e-4


@pytest.mark.parametrize("metric", ["cosine", "ip"])
@pytest.mark.parametrize("alpha", [ALPHA, {"*": 0.4, "de": 1.2}])
def test_sharded_flat_equals_unsharded(bed, metric, alpha):
    enc, _, paths = bed
    queries = make_queries()
    one = Searcher(open_index(paths["flat"]), enc, query_shift=metric, alpha=alpha).search(queries, k=K)
    sharded_index = open_index(paths["flat-shards"])
    assert len(sharded_index.shards) == 3
    sharded = Searcher(sharded_index, enc, query_shift=metric, alpha=alpha).search(queries, k=K)
    for q in queries:
        assert [h.doc_id for h in sharded[q.query_id]] == [h.doc_id for h in one[q.query_id]]
        np.testing.assert_allclose([h.score for h in sharded[q.query_id]], [h.score for h in one[q.query_id]], atol=1e-6)


@pytest.mark.parametrize("kind", ["hnsw-shards", "ivf-pq-shards", "ivf-pq"])
def test_every_document_a_candidate_is_the_exact_ranking(bed, kind):
    enc, _, paths = bed
    queries = make_queries()
    exact = Searcher(open_index(paths["flat"]), enc, query_shift="cosine").search(queries, k=K)
    n = len(DenseIndex(paths["flat"]).docids)
    # every IVF cell visited / an HNSW candidate list of every document: every document is a candidate
    index = open_index(paths[kind], nprobe=IVFPQ.params["nlist"], ef_search=n)
    got = Searcher(index, enc, query_shift="cosine", candidates=n).search(queries, k=K)
    for q in queries:
        assert [h.doc_id for h in got[q.query_id]] == [h.doc_id for h in exact[q.query_id]]
        np.testing.assert_allclose([h.score for h in got[q.query_id]], [h.score for h in exact[q.query_id]], atol=1e-6)
