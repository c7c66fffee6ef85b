"""perf/serve_speed.py: the load harness stops by itself at its bounds and counts what the server answered."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perf import serve_speed


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str] = []

    def do_POST(self):  # noqa: N802 (the stdlib's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(body["query"])
        status, payload = (200, {"hits": [{"doc_id": "d", "score": 1.0}]}) if body["query"] != "bad" else (422, {})
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_a_level_stops_at_its_request_bound_and_counts_answers_and_errors(server):
    bodies = [{"query": q} for q in ("a", "b", "bad", "c")]
    level = serve_speed.load(server, bodies, clients=3, max_requests=10, max_seconds=60)
    assert level["answers"] + level["errors"] == 10 == len(_Handler.seen)
    assert level["errors"] == 2 and level["first_error"][0].startswith("422")  # requests 2 and 6 are "bad"
    assert sorted(_Handler.seen) == sorted(b["query"] for b in (bodies * 3)[:10])
    assert 0 < level["p50_ms"] <= level["p99_ms"]


def test_a_level_stops_at_its_time_bound(server):
    level = serve_speed.load(server, [{"query": "a"}], clients=2, max_requests=10**9, max_seconds=0.3)
    assert 0 < level["answers"] < 10**9 and level["seconds"] < 5


def test_markdown_has_one_row_per_system_and_level():
    lv = {"clients": 1, "answers": 3, "qps": 2.0, "p50_ms": 1.0, "p99_ms": 2.0, "load_average": (1.5, 1, 1)}
    text = serve_speed.markdown({"systems": {"plain": [lv, {**lv, "clients": 8}], "shift": [lv]}})
    assert text.count("\n") == 4 and "| plain | 8 | 3 | 2.0 | 1.0 | 2.0 | 1.5 |" in text


def test_slices_merge_into_one_level():
    a = {"clients": 8, "answers": 2, "errors": 0, "first_error": [], "seconds": 1.0, "latencies_ms": [1.0, 3.0]}
    b = {"clients": 8, "answers": 2, "errors": 1, "first_error": ["500: x"], "seconds": 3.0, "latencies_ms": [2.0, 4.0]}
    level = serve_speed.merge_levels([a, b])
    assert (level["answers"], level["errors"], level["seconds"], level["qps"]) == (4, 1, 4.0, 1.0)
    assert level["p50_ms"] == 2.5 and level["first_error"] == ["500: x"] and level["slices"] == 2
