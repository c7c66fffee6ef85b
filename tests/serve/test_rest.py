"""Every endpoint through FastAPI's TestClient; the server's answers equal ``Searcher.search_text``'s; every bad
request is a 4xx JSON body naming its field."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from mlirkit.search import Searcher
from mlirkit.serve.rest import create_app
from mlirkit.serve.schemas import MAX_BATCH, MAX_K, MAX_QUERY_CHARS

GERMAN = "Die Fähre fährt jeden Morgen über den breiten Fluss zum anderen Ufer."
FRENCH = "Le bateau traverse la rivière chaque matin pour rejoindre l'autre rive."


@pytest.fixture(scope="module")
def client(served):
    with TestClient(create_app(served[0]), raise_server_exceptions=False) as c:
        yield c


def _pairs(hits):
    return [(h["doc_id"], round(h["score"], 5)) for h in hits]


def _want(result):
    return [(h.doc_id, round(h.score, 5)) for h in result.hits]


def test_search_equals_search_text_plain_and_shifted(client, served, tiny_encoder):
    _, index, shift, _ = served
    plain = Searcher(index, tiny_encoder)
    shifted = Searcher(index, tiny_encoder, query_shift="cosine", transform=shift)
    for text, lang in ((GERMAN, None), (FRENCH, None), ("the river garden", "de")):
        for use_shift, searcher in ((False, plain), (True, shifted)):
            r = client.post("/v1/search", json={"query": text, "k": 12, "lang": lang, "shift": use_shift})
            assert r.status_code == 200, r.text
            body = r.json()
            want = searcher.search_text(text, k=12, langs=lang)
            assert _pairs(body["hits"]) == _want(want)
            assert body["language"] == want.language.to_json() and body["shift"] is use_shift
    # the shift changes the ranking of a German query (teeth for the comparison above)
    both = [client.post("/v1/search", json={"query": GERMAN, "k": 12, "shift": s}).json() for s in (False, True)]
    assert _pairs(both[0]["hits"]) != _pairs(both[1]["hits"])
    assert both[1]["language"]["lang"] == "de" and both[1]["language"]["how"] == "detected"


def test_hits_carry_language_and_snippet(client, served):
    service = served[0]
    body = client.post("/v1/search", json={"query": "der Garten", "k": 40}).json()
    assert len(body["hits"]) == 40
    for h in body["hits"]:
        word, lang = h["doc_id"].rsplit("-", 1)
        assert h["lang"] == lang and word in h["snippet"]
        assert h["lang"] == service.index.langs[service.index.docids.index(h["doc_id"])]


def test_alpha_per_request_equals_a_searcher_built_with_it(client, served, tiny_encoder):
    _, index, shift, _ = served
    want = Searcher(index, tiny_encoder, query_shift="cosine", transform=shift, alpha=0.3).search_text(GERMAN, k=12)
    body = client.post("/v1/search", json={"query": GERMAN, "k": 12, "alpha": 0.3}).json()
    assert body["alpha"] == 0.3 and _pairs(body["hits"]) == _want(want)


def test_batch_equals_one_by_one(client):
    queries = [{"query": GERMAN}, {"query": FRENCH, "lang": "fr"}, {"query": "engine", "lang": "en"}]
    batch = client.post("/v1/search/batch", json={"queries": queries, "k": 7}).json()["results"]
    single = [client.post("/v1/search", json={**q, "k": 7}).json() for q in queries]
    assert [_pairs(b["hits"]) for b in batch] == [_pairs(s["hits"]) for s in single]
    assert [b["language"] for b in batch] == [s["language"] for s in single]


def test_document_health_ready_openapi_page(client):
    doc = client.get("/v1/documents/river-de").json()
    assert doc == {"doc_id": "river-de", "lang": "de", "text": "der river ist hier"}
    health = client.get("/health").json()
    assert health == {"status": "ok", "index": "pivot", "documents": 40, "shift": True, "lexical": False, "texts": True}
    assert client.get("/ready").json() == {"ready": True}
    spec = client.get("/openapi.json").json()
    assert {"/v1/search", "/v1/search/batch", "/v1/documents/{doc_id}", "/health", "/ready"} <= set(spec["paths"])
    assert client.get("/docs").status_code == 404  # FastAPI's viewer loads from a CDN: off
    page = client.get("/")
    assert page.status_code == 200 and 'id="query"' in page.text and "http" not in page.text.replace("http-equiv", "")
    for asset in ("app.js", "style.css"):
        r = client.get(f"/static/{asset}")
        assert r.status_code == 200 and "https://" not in r.text  # no CDN


BAD = [  # (path, body, status, field, words in the message)
    ("/v1/search", {"query": ""}, 422, "query", "at least 1"),
    ("/v1/search", {"query": "x" * (MAX_QUERY_CHARS + 1)}, 422, "query", f"at most {MAX_QUERY_CHARS}"),
    ("/v1/search", {"query": "a", "k": 0}, 422, "k", "greater than or equal to 1"),
    ("/v1/search", {"query": "a", "k": -3}, 422, "k", "greater than or equal to 1"),
    ("/v1/search", {"query": "a", "k": MAX_K + 1}, 422, "k", f"less than or equal to {MAX_K}"),
    ("/v1/search", {"query": "a", "k": "ten"}, 422, "k", "integer"),
    ("/v1/search", {"query": "a", "lang": "dx"}, 422, "lang", "did you mean: de"),
    ("/v1/search", {"query": "a", "alpha": 1.5}, 422, "alpha", "less than or equal to 1"),
    ("/v1/search", {"query": "a", "alpha": -0.1}, 422, "alpha", "greater than or equal to 0"),
    ("/v1/search", {"query": "a", "alpha": 0.5, "shift": False}, 422, "alpha", "query-time shift"),
    ("/v1/search", {"query": "a", "fusion": True}, 422, "fusion", "--lexical"),
    ("/v1/search", {"query": "a", "index": "/etc"}, 422, "index", "not permitted"),
    ("/v1/search", {"k": 3}, 422, "query", "required"),
    ("/v1/search", [1, 2], 422, "body", "valid dictionary"),
    ("/v1/search/batch", {"queries": []}, 422, "queries", "at least 1"),
    ("/v1/search/batch", {"queries": [{"query": "a"}] * (MAX_BATCH + 1)}, 422, "queries", f"at most {MAX_BATCH}"),
    ("/v1/search/batch", {"queries": [{"query": "a"}, {"query": ""}]}, 422, "queries.1.query", "at least 1"),
    ("/v1/search/batch", {"queries": [{"query": "a"}, {"query": "b", "lang": "fx"}]}, 422, "queries[1].lang",
     "did you mean: fr"),
    # a query of no visible text was searched (200) before; a boolean k was read as 1
    ("/v1/search", {"query": "   "}, 422, "query", "no text"),
    ("/v1/search", {"query": "\u200b\u200b\u202e"}, 422, "query", "no text"),
    ("/v1/search/batch", {"queries": [{"query": "a"}, {"query": " \t"}]}, 422, "queries[1].query", "no text"),
    ("/v1/search", {"query": "a", "k": True}, 422, "k", "integer"),
    ("/v1/search", {"query": "a", "lang": "de\u0000"}, 422, "lang", "unknown language"),
]


@pytest.mark.parametrize("path, body, status, field, words", BAD, ids=[f"{b[3]}-{i}" for i, b in enumerate(BAD)])
def test_bad_requests_are_4xx_json_naming_the_field(client, path, body, status, field, words):
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    got = r.json()
    assert got["field"] == field and got["detail"].startswith(f"{field}: ") and words in got["detail"], got
    assert "Traceback" not in r.text


@pytest.mark.parametrize("lang", ["DE", "de-CH", "deu"])
def test_a_language_tag_is_taken_in_its_bcp47_case_and_meets_the_service_languages(client, lang):
    """'DE' and 'deu' were unknown languages (422) although every CLI reads them as de; de-CH meets de by lookup."""
    r = client.post("/v1/search", json={"query": "der Garten", "k": 3, "lang": lang})
    assert r.status_code == 200, r.text
    assert r.json()["language"]["how"] == "given"


def test_a_body_larger_than_any_request_is_413_before_it_is_read_whole(client):
    """A 20 MB body (whitespace padding, or an unknown field) was read whole and answered 200 / 422."""
    from mlirkit.serve.rest import MAX_BODY_BYTES

    for body in (b'{"query": "ferry"' + b" " * (MAX_BODY_BYTES + 1) + b"}",
                 b'{"query": "ferry", "x": "' + b"a" * (20 * 2**20) + b'"}'):
        r = client.post("/v1/search", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json() == {"detail": "body: larger than 1 MiB (no request needs that much)",
                                                     "field": "body"}

    def chunks():  # no Content-Length: counted as it streams
        for _ in range(3):
            yield b" " * (MAX_BODY_BYTES // 2)
    r = client.post("/v1/search", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["field"] == "body"
    biggest = {"queries": [{"query": "\U0001F6A2" * MAX_QUERY_CHARS}] * MAX_BATCH}  # the largest valid request
    assert len(json.dumps(biggest).encode()) < MAX_BODY_BYTES


def test_unknown_paths_and_methods_name_their_field(client):
    r = client.get("/v1/documents/..%2F..%2Fetc%2Fpasswd")
    assert r.status_code == 404 and r.json()["field"] == "path" and "no endpoint" in r.json()["detail"]
    r = client.get("/v1/search")
    assert r.status_code == 405 and r.json() == {"detail": "method: Method Not Allowed", "field": "method"}


def test_malformed_json_and_unknown_document(client):
    r = client.post("/v1/search", content=b'{"query": "a", ', headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["field"] == "body" and "malformed JSON" in r.json()["detail"]
    r = client.get("/v1/documents/no-such-doc")
    assert r.status_code == 404 and r.json() == {"detail": "doc_id: unknown document id 'no-such-doc'",
                                                 "field": "doc_id"}
