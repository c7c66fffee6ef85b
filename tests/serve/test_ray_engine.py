"""The Ray Serve engine on a local 2-CPU Ray: two replicas behind Ray's HTTP proxy on 127.0.0.1 answer every
request (single, batch, plain, shifted, given and detected languages, bad ones) exactly as the single process."""
from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import in_ray_child
from tests.serve.test_mcp import from_meta  # noqa: F401  (module fixture: an index that records its encoder)

pytestmark = pytest.mark.slow


GERMAN = "Die Fähre fährt jeden Morgen über den breiten Fluss zum anderen Ufer."
FRENCH = "Le bateau traverse la rivière chaque matin pour rejoindre l'autre rive."
REQUESTS = [{"query": q, "k": 7, "lang": lang, "shift": shift}
            for q, lang in ((GERMAN, None), (FRENCH, None), ("the river garden", "de"), ("ferry here", "en"))
            for shift in (True, False)]
BAD = [{"query": "", "k": 3}, {"query": GERMAN, "k": 0}, {"query": GERMAN, "lang": "deu"}]


def _post(port: int, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _rounded(answer):
    """The answer with floats to 5 decimals (a batch's composition moves float32 scores in the 7th digit)."""
    if isinstance(answer, float):
        return round(answer, 5)
    if isinstance(answer, dict):
        return {k: _rounded(v) for k, v in answer.items()}
    if isinstance(answer, list):
        return [_rounded(v) for v in answer]
    return answer


@pytest.fixture(scope="module")
def ray_port(from_meta):  # noqa: F811
    ray = pytest.importorskip("ray")
    from ray import serve

    from mlirkit.serve.ray_engine import APP_NAME, ray_search_app

    _, index, shift, corpus = from_meta
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}})
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        options = {"index_dir": str(index), "transform": str(shift), "corpus": str(corpus)}
        serve.run(ray_search_app(options, num_workers=2, num_cpus_per_worker=0.5), name=APP_NAME, route_prefix="/")
        deployment = serve.status().applications[APP_NAME].deployments["SearchService"]
        assert deployment.replica_states.get("RUNNING") == 2, deployment.replica_states
        yield port
    finally:
        serve.shutdown()
        ray.shutdown()


@in_ray_child
def test_two_replicas_answer_as_the_single_process(ray_port, from_meta):  # noqa: F811
    from fastapi.testclient import TestClient

    from mlirkit.serve.rest import create_app

    single = TestClient(create_app(from_meta[0]))
    calls = [("/v1/search", r) for r in REQUESTS] * 3 + [("/v1/search/batch", {"queries": [
        {"query": r["query"], "lang": r["lang"]} for r in REQUESTS[::2]], "k": 5, "shift": True})]
    calls += [("/v1/search", b) for b in BAD]
    with ThreadPoolExecutor(8) as pool:  # concurrent: Ray batches them and spreads them over the replicas
        got = list(pool.map(lambda c: _post(ray_port, *c), calls))
    for (path, body), (status, answer) in zip(calls, got):
        want = single.post(path, json=body)
        assert status == want.status_code, (body, answer)
        if status == 200:
            assert _rounded(answer) == _rounded(want.json())
        else:
            assert answer == want.json() and 400 <= status < 500
    # teeth: the shifted and plain answers differ, and so do the languages detected
    shifted, plain = got[0][1], got[1][1]
    assert [h["doc_id"] for h in shifted["hits"]] != [h["doc_id"] for h in plain["hits"]]
    assert (shifted["language"]["lang"], shifted["language"]["how"]) == ("de", "detected")


@in_ray_child
def test_document_and_health_through_ray(ray_port, from_meta):  # noqa: F811
    service = from_meta[0]
    doc_id = service.search({"query": GERMAN, "k": 1})["hits"][0]["doc_id"]
    with urllib.request.urlopen(f"http://127.0.0.1:{ray_port}/v1/documents/{doc_id}", timeout=60) as r:
        assert json.loads(r.read()) == service.document(doc_id)
    with urllib.request.urlopen(f"http://127.0.0.1:{ray_port}/health", timeout=60) as r:
        assert json.loads(r.read()) == service.health()
