"""Attacks on the search service's REST API (``python -m mlirkit.serve``): hostile bodies, sizes and Unicode,
sent with FastAPI's test client to the app over the workspace's index and SHIFT file. Expected: a 4xx JSON body
``{"detail": "<field>: ...", "field": "<field>"}`` naming the field (docs/serve.md), never a 500 or a
traceback; odd but valid text is answered (200)."""
from __future__ import annotations

import json

from experiments.hostile.harness import Case, Outcome

__all__ = ["CASES"]

_CLIENT: dict = {}


def _client(ws):
    if "client" not in _CLIENT:
        from fastapi.testclient import TestClient

        from mlirkit.encoders import load_encoder
        from mlirkit.serve import SearchService
        from mlirkit.serve.rest import create_app

        encoder = load_encoder(str(ws["model"]), "hf", max_length=64)
        service = SearchService(ws["root"] / "index", transform=ws["root"] / "t.safetensors",
                                corpus=str(ws["root"] / "corpus.jsonl"), encoder=encoder)
        _CLIENT["client"] = TestClient(create_app(service), raise_server_exceptions=False)
    return _CLIENT["client"]


def _judge(r, status, field) -> Outcome:
    try:
        body = r.json()
    except ValueError:
        return Outcome(False, f"{r.status_code}: not JSON ({r.text[:80]!r})")
    shown = f"{r.status_code}: {json.dumps(body, ensure_ascii=False)[:150]}"
    if status == 200:
        return Outcome(r.status_code == 200 and "hits" in body or "results" in body, shown)
    ok = r.status_code in ((status,) if isinstance(status, int) else status) and (
        field is None or body.get("field") == field)
    return Outcome(ok, shown)


def rest_case(name, send, status, field=None, note=""):
    """``send(client)`` returns the response; ``status`` the expected code (or codes), ``field`` the field named."""
    def attack(ws):
        return _judge(send(_client(ws)), status, field)
    expected = "200, answered" if status == 200 else f"{status}, JSON naming field {field!r}"
    return Case("serve REST", name, attack, expected, note)


def post(body, path="/v1/search", **kw):
    return lambda c: c.post(path, json=body, **kw)


def raw(data: bytes, path="/v1/search", content_type="application/json"):
    return lambda c: c.post(path, content=data, headers={"Content-Type": content_type})


CASES = [
    rest_case("query of spaces only", post({"query": "   "}), 422, "query"),
    rest_case("query of zero-width spaces only", post({"query": "\u200b\u200b\u200b"}), 422, "query"),
    rest_case("query with NUL inside", post({"query": "ferry\u0000harbour"}), 200,
              note="a NUL is text to the tokenizer; answered"),
    rest_case("query a lone surrogate (JSON escape)", raw(b'{"query": "\\ud800 ferry"}'), 422, "query"),
    rest_case("1,000 emoji (4-byte UTF-8)", post({"query": "\U0001F6A2" * 1000}), 200),
    rest_case("1 letter and 999 combining accents", post({"query": "a" + "\u0301" * 999}), 200),
    rest_case("right-to-left override and Arabic", post({"query": "\u202e\u0627\u0644\u0639\u0628\u0651\u0627\u0631\u0629"}),
              200),
    rest_case("fullwidth Latin", post({"query": "ｆｅｒｒｙ ｈａｒｂｏｕｒ"}), 200),
    rest_case("1,001 characters", post({"query": "a" * 1001}), 422, "query"),
    rest_case("a 20 MB body (padding in whitespace)",
              raw(b'{"query": "ferry"' + b" " * (20 * 2**20) + b"}"), (413,), "body",
              note="no field of a request needs more than ~400 kB of JSON (64 queries x 1,000 characters x 6 bytes)"),
    rest_case("a 20 MB unknown field", raw(b'{"query": "ferry", "x": "' + b"a" * (20 * 2**20) + b'"}'), (413,), "body"),
    rest_case("a body of JSON nested 100,000 deep", raw(b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"), (400, 422)),
    rest_case("body not JSON", raw(b"query=ferry", content_type="application/x-www-form-urlencoded"), (400, 422)),
    rest_case("body 'null'", raw(b"null"), 422, "body"),
    rest_case("k = true", post({"query": "ferry", "k": True}), 422, "k",
              note="a boolean is not a count (pydantic's lax mode would read it as 1)"),
    rest_case("k = 2.5", post({"query": "ferry", "k": 2.5}), 422, "k"),
    rest_case("k = 10**30", post({"query": "ferry", "k": 10**30}), 422, "k"),
    rest_case("alpha NaN (JSON literal)", raw(b'{"query": "ferry", "alpha": NaN}'), (400, 422)),
    rest_case("alpha 1e309 (inf)", raw(b'{"query": "ferry", "alpha": 1e309}'), (400, 422)),
    rest_case("lang 'de' + NUL", post({"query": "ferry", "lang": "de\u0000"}), 422, "lang"),
    rest_case("lang 'DE' (canonical case de)", post({"query": "ferry", "lang": "DE"}), 200),
    rest_case("lang 'de-CH' (meets de by lookup)", post({"query": "ferry", "lang": "de-CH"}), 200),
    rest_case("lang 'zh-Hant-TW' (no such service language)", post({"query": "ferry", "lang": "zh-Hant-TW"}), 422, "lang"),
    rest_case("lang 36 characters", post({"query": "ferry", "lang": "a" * 36}), 422, "lang"),
    rest_case("lang a number", post({"query": "ferry", "lang": 7}), 422, "lang"),
    rest_case("query a number", post({"query": 12345}), 422, "query"),
    rest_case("batch: 64 queries of 1,000 characters", post({"queries": [{"query": "b" * 1000}] * 64},
                                                            path="/v1/search/batch"), 200),
    rest_case("batch: a query of spaces among good ones", post({"queries": [{"query": "ferry"}, {"query": " "}]},
                                                                path="/v1/search/batch"), 422, "queries[1].query"),
    rest_case("document id '../../etc/passwd'", lambda c: c.get("/v1/documents/..%2F..%2Fetc%2Fpasswd"), 404, "path",
              note="the path is no endpoint once decoded; no file is ever read for a request"),
    rest_case("document id of 10,000 characters", lambda c: c.get("/v1/documents/" + "d" * 10_000), 404, "doc_id"),
    rest_case("document id with NUL", lambda c: c.get("/v1/documents/d1%00"), 404, "doc_id"),
    rest_case("GET on /v1/search", lambda c: c.get("/v1/search"), 405, "method"),
]
