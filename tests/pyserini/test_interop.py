"""An index written by ``mlirkit.encode`` opens in Pyserini's ``FaissSearcher`` (issue 2's interop test).

Starts the JVM of the pytest process (shared with the other JVM tests; :func:`boot_jvm` is idempotent).
"""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.pyserini.testing import write_toy_collection

pytestmark = [pytest.mark.slow, pytest.mark.jvm]

K = 10


@pytest.fixture(scope="module")
def mlirkit_index(tmp_path_factory, tiny_model_dir):
    """(toy collection, index directory written by ``python -m mlirkit.encode``'s main)."""
    from mlirkit.encode.cli import main

    toy = write_toy_collection(tmp_path_factory.mktemp("toy"))
    index = tmp_path_factory.mktemp("mlirkit") / "index"
    assert main(["--corpus", str(toy.corpus), "--output", str(index), "--encoder", str(tiny_model_dir),
                 "--encoder-class", "hf", "--encoder-option", "max_length=64", "--quiet"]) == 0
    return toy, index


@pytest.fixture(scope="module")
def faiss_searcher_class():
    from mlirkit.pyserini import boot_jvm

    boot_jvm()
    from pyserini.search.faiss import FaissSearcher

    return FaissSearcher


def test_faiss_searcher_reads_an_mlirkit_index_with_the_same_top10(mlirkit_index, faiss_searcher_class, tiny_encoder):
    from mlirkit.index import DenseIndex
    from mlirkit.io.topics import read_topics
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.search.searcher import Searcher

    toy, index_dir = mlirkit_index
    queries = read_topics(toy.topics, default_lang="en")
    searcher = Searcher(index_dir, tiny_encoder)
    ours = searcher.search(queries, k=K)

    pyserini = faiss_searcher_class(str(index_dir), MlirkitQueryEncoder(encoder=tiny_encoder))
    assert pyserini.docids == DenseIndex(index_dir).docids
    assert pyserini.num_docs == 30 and pyserini.dimension == tiny_encoder.dim
    theirs = pyserini.batch_search([q.text for q in queries], [q.query_id for q in queries], k=K)
    for q in queries:
        assert [h.docid for h in theirs[q.query_id]] == [h.doc_id for h in ours[q.query_id]], q.query_id
        np.testing.assert_allclose([h.score for h in theirs[q.query_id]], [h.score for h in ours[q.query_id]],
                                   atol=1e-5)


def test_faiss_searcher_with_precomputed_vectors_matches_searcher(mlirkit_index, faiss_searcher_class, tiny_encoder):
    """Encoder-free interop: the same query vectors give the same hits through FAISS on both sides."""
    from mlirkit.io.topics import read_topics
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.search.searcher import Searcher

    toy, index_dir = mlirkit_index
    queries = read_topics(toy.topics, default_lang="en")
    searcher = Searcher(index_dir, tiny_encoder)
    vectors = searcher.encode_queries(queries)
    ours = searcher.search_vectors(vectors, K)
    pyserini = faiss_searcher_class(str(index_dir), MlirkitQueryEncoder(encoder=tiny_encoder))
    for q, v, hits in zip(queries, vectors, ours):
        theirs = pyserini.search(v[None, :], k=K)
        assert [h.docid for h in theirs] == [h.doc_id for h in hits], q.query_id
