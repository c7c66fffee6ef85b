"""The search service on a Qdrant shard of the service index: its REST answers equal ``QdrantSearcher.search_text``'s
(plain and with the query-time shift, languages given and detected, alpha per request) and the FAISS index's."""
from __future__ import annotations

import pytest

pytest.importorskip("qdrant_edge")

from fastapi.testclient import TestClient  # noqa: E402

from mlirkit.serve.rest import create_app  # noqa: E402

GERMAN = "Die Fähre fährt jeden Morgen über den breiten Fluss zum anderen Ufer."
FRENCH = "Le bateau traverse la rivière chaque matin pour rejoindre l'autre rive."
REQUESTS = ((GERMAN, None), (FRENCH, None), ("the river garden", "de"))


@pytest.fixture(scope="module")
def shard_service(serve_index, tiny_encoder, tmp_path_factory):
    """(service on the shard, shard dir, shift file)."""
    from mlirkit.index.qdrant_export import export_qdrant
    from mlirkit.serve import SearchService

    index, shift, corpus = serve_index
    shard = tmp_path_factory.mktemp("serve-qdrant") / "pivot.qdrant"
    export_qdrant(index, shard)
    service = SearchService(shard, transform=shift, corpus=str(corpus), encoder=tiny_encoder)
    yield service, shard, shift
    service.close()


@pytest.fixture(scope="module")
def client(shard_service):
    with TestClient(create_app(shard_service[0]), raise_server_exceptions=False) as c:
        yield c


def _pairs(hits):
    return [(h["doc_id"], round(h["score"], 5)) for h in hits]


def test_rest_on_a_shard_equals_qdrant_searcher(client, shard_service, tiny_encoder):
    from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard

    service, shard_dir, shift = shard_service
    assert isinstance(service.index, QdrantShard)
    shard = service.index  # a shard directory is opened once per process (Qdrant's WAL lock)
    plain = QdrantSearcher(shard, tiny_encoder)
    shifted = QdrantSearcher(shard, tiny_encoder, query_shift="cosine", transform=shift)
    for text, lang in REQUESTS:
        for use_shift, searcher in ((False, plain), (True, shifted)):
            r = client.post("/v1/search", json={"query": text, "k": 12, "lang": lang, "shift": use_shift})
            assert r.status_code == 200, r.text
            body = r.json()
            want = searcher.search_text(text, k=12, langs=lang)
            assert _pairs(body["hits"]) == [(h.doc_id, round(h.score, 5)) for h in want.hits]
            assert body["language"] == want.language.to_json() and body["shift"] is use_shift
            assert all(h["snippet"] for h in body["hits"])
    both = [client.post("/v1/search", json={"query": GERMAN, "k": 12, "shift": s}).json() for s in (False, True)]
    assert _pairs(both[0]["hits"]) != _pairs(both[1]["hits"])  # the shift changes the ranking (teeth)


def test_rest_on_a_shard_equals_the_faiss_index(client, served):
    faiss_service = served[0]
    for text, lang in REQUESTS:
        for use_shift in (False, True):
            request = {"query": text, "k": 12, "lang": lang, "shift": use_shift}
            got = client.post("/v1/search", json=request).json()
            want = faiss_service.search(request)
            assert [h["doc_id"] for h in got["hits"]] == [h["doc_id"] for h in want["hits"]]
            assert [h["score"] for h in got["hits"]] == pytest.approx([h["score"] for h in want["hits"]], abs=1e-5)


def test_alpha_per_request_on_a_shard(client, shard_service, tiny_encoder):
    from mlirkit.search.qdrant_searcher import QdrantSearcher

    service, _, shift = shard_service
    want = QdrantSearcher(service.index, tiny_encoder, query_shift="cosine", transform=shift,
                          alpha=0.3).search_text(GERMAN, k=12)
    body = client.post("/v1/search", json={"query": GERMAN, "k": 12, "shift": True, "alpha": 0.3}).json()
    assert _pairs(body["hits"]) == [(h.doc_id, round(h.score, 5)) for h in want.hits]
    default = client.post("/v1/search", json={"query": GERMAN, "k": 12, "shift": True}).json()
    assert _pairs(default["hits"]) != _pairs(body["hits"])


def test_health_on_a_shard(client):
    body = client.get("/health").json()
    assert body["documents"] == 40 and body["shift"] is True and body["index"] == "pivot.qdrant"


def test_ray_engine_refuses_a_shard_in_one_line(shard_service):
    from mlirkit.base.errors import MlirkitError
    from mlirkit.serve.cli import main

    _, shard_dir, _ = shard_service
    with pytest.raises(MlirkitError, match="opened by one process at a time") as e:
        main(["--index", str(shard_dir), "--engine", "ray", "--quiet"])
    assert "\n" not in str(e.value)
