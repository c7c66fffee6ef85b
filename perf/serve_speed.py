"""The search service under loopback HTTP load: queries/s and p50/p99 latency at 1, 8 and 32 clients.

Three systems over the same FAISS index, served by subprocesses bound to 127.0.0.1 (all up at once) and loaded
by the same harness: ``--clients`` concurrent keep-alive HTTP clients (threads), each sending one query per request
and waiting for the answer. Each level is ``--repeats`` slices per system, the systems in turn and their order
reversed each time (so a drifting load on a shared machine hits them alike); a slice stops after ``--requests``
requests or ``--seconds``, whichever comes first:

- ``plain``: ``python -m mlirkit.serve`` (REST, ``POST /v1/search`` with ``"shift": false``);
- ``shift``: the same server, ``"shift": true`` (the query-time shift, the query's language detected);
- ``pyserini``: Pyserini's ``FaissSearcher`` (``FaissSearcher.search``, one query per call, with mlirkit's
  query encoder ``mlirkit.pyserini.encoders.MlirkitQueryEncoder``) behind a minimal FastAPI app with the same
  request and response shape (:func:`pyserini_app`). Pyserini's own REST server (``pyserini.server.rest``)
  needs the optional ``uniir_for_pyserini`` package and does not import here, hence this stand-in.

Queries: XQuAD-R questions of every language, in a fixed shuffled order, without their language (the
service detects it). The mlirkit server batches concurrent requests into one encoder call; the Pyserini
stand-in encodes and searches one request at a time (``FaissSearcher.search`` per request, under a lock: the
encoder's inference request is not thread-safe), so the difference between 1 and 32 clients shows what
batching buys.

    OMP_NUM_THREADS=1 python -m perf.serve_speed --index indexes/xquad-e5 --transform vectors/e5-tatoeba.shift \\
        --output perf/results/serve_speed.json

``--serve-pyserini`` runs the stand-in server alone (what the benchmark starts as a subprocess).
"""
from __future__ import annotations

import argparse
import http.client
import json
import logging
import os
import random
import shlex
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

logger = logging.getLogger("serve_speed")

SYSTEMS = ("plain", "shift", "pyserini")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--index", type=Path, required=True, help="an mlirkit.encode index directory")
    p.add_argument("--transform", type=Path, default=None, help="SHIFT transform file (the shift system)")
    p.add_argument("--topics", default="mlirkit/xquad-r/{lang}", help="topics id; {lang} runs over --langs")
    p.add_argument("--langs", nargs="+", default=["ar", "de", "en", "es", "hi", "ru", "vi", "zh"])
    p.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32], help="concurrent clients per level")
    p.add_argument("--requests", type=int, default=200, help="requests per slice of a level (at most)")
    p.add_argument("--seconds", type=float, default=15.0, help="wall time per slice of a level (at most)")
    p.add_argument("--repeats", type=int, default=2,
                   help="slices per system and level, the systems' order reversed each time (default 2)")
    p.add_argument("--warmup", type=int, default=8, help="requests sent before each system's levels")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    p.add_argument("--startup-seconds", type=float, default=300.0, help="wait at most this long for a server")
    p.add_argument("--output", type=Path, default=None, help="JSON result (default: stdout only)")
    p.add_argument("--serve-pyserini", action="store_true", help="run the Pyserini stand-in server and block")
    p.add_argument("--port", type=int, default=0, help="with --serve-pyserini")
    return p.parse_args(argv)


# ---------------------------------------------------------------- the Pyserini stand-in


class PyseriniSearchBody(BaseModel):
    query: str = Field(min_length=1)
    k: int = Field(10, ge=1, le=100)


def pyserini_app(index_dir: str | os.PathLike):
    """FastAPI app answering ``POST /v1/search`` ``{"query", "k"}`` with Pyserini's ``FaissSearcher``."""
    from fastapi import FastAPI

    from mlirkit.base.jvm import boot_jvm

    boot_jvm()
    from pyserini.search.faiss import FaissSearcher

    from mlirkit.index.reader import DenseIndex
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.search.searcher import encoder_for_index

    encoder = encoder_for_index(DenseIndex(index_dir))
    searcher = FaissSearcher(str(index_dir), MlirkitQueryEncoder(encoder=encoder))
    one_at_a_time = threading.Lock()  # the encoder's inference request is not thread-safe

    app = FastAPI(title="Pyserini FaissSearcher (benchmark stand-in)")

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok"}

    @app.post("/v1/search")
    def search(body: PyseriniSearchBody) -> dict:
        with one_at_a_time:
            hits = searcher.search(body.query, k=body.k)
        return {"query": body.query, "hits": [{"doc_id": h.docid, "score": float(h.score)} for h in hits]}

    return app


def serve_pyserini(index_dir: Path, port: int) -> None:
    import uvicorn

    uvicorn.run(pyserini_app(index_dir), host="127.0.0.1", port=port, log_level="warning")


# ---------------------------------------------------------------- servers and load


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(argv: list[str], port: int, timeout: float, log: Path) -> subprocess.Popen:
    """Start a server subprocess and wait until ``GET /health`` answers (or it exits, or ``timeout``)."""
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {shlex.join(argv)} (log: {log})")
        try:
            status, _ = request(port, "GET", "/health")
            if status == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.5)
    stop_server(proc)
    raise RuntimeError(f"server not healthy after {timeout:.0f} s: {shlex.join(argv)} (log: {log})")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def request(port: int, method: str, path: str, body: dict | None = None,
            conn: http.client.HTTPConnection | None = None) -> tuple[int, Any]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        payload = resp.read()
        try:
            return resp.status, json.loads(payload)
        except ValueError:
            return resp.status, payload[:200].decode(errors="replace")
    finally:
        if own:
            conn.close()


def load(port: int, bodies: list[dict], clients: int, max_requests: int, max_seconds: float) -> dict[str, Any]:
    """``clients`` threads send ``bodies`` round robin until ``max_requests`` answers or ``max_seconds``."""
    lock = threading.Lock()
    state = {"next": 0}
    latencies: list[float] = []
    errors: list[str] = []
    t0 = time.perf_counter()
    deadline = t0 + max_seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            while time.perf_counter() < deadline:
                with lock:
                    i = state["next"]
                    if i >= max_requests:
                        return
                    state["next"] = i + 1
                start = time.perf_counter()
                try:
                    status, payload = request(port, "POST", "/v1/search", bodies[i % len(bodies)], conn)
                except (OSError, http.client.HTTPException) as e:  # a new connection for the next request
                    status, payload = type(e).__name__, str(e)
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                took = time.perf_counter() - start
                with lock:
                    if status == 200 and isinstance(payload, dict) and payload.get("hits"):
                        latencies.append(took)
                    else:
                        errors.append(f"{status}: {str(payload)[:200]}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = np.asarray(latencies) * 1000
    return {
        "clients": clients, "answers": len(latencies), "errors": len(errors), "first_error": errors[:1],
        "seconds": round(wall, 3), "qps": round(len(latencies) / wall, 2),
        "p50_ms": round(float(np.percentile(lat, 50)), 2) if len(lat) else None,
        "p99_ms": round(float(np.percentile(lat, 99)), 2) if len(lat) else None,
        "latencies_ms": lat.tolist(),
    }


def merge_levels(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One level from the slices of :func:`load` (answers and seconds added, percentiles of all latencies)."""
    lat = np.concatenate([np.asarray(p["latencies_ms"]) for p in parts]) if parts else np.zeros(0)
    answers, seconds = sum(p["answers"] for p in parts), sum(p["seconds"] for p in parts)
    return {"clients": parts[0]["clients"], "slices": len(parts), "answers": answers,
            "errors": sum(p["errors"] for p in parts), "first_error": [e for p in parts for e in p["first_error"]][:1],
            "seconds": round(seconds, 3), "qps": round(answers / seconds, 2) if seconds else 0.0,
            "p50_ms": round(float(np.percentile(lat, 50)), 2) if len(lat) else None,
            "p99_ms": round(float(np.percentile(lat, 99)), 2) if len(lat) else None}


def read_bodies(topics: str, langs: list[str], k: int) -> list[str]:
    from mlirkit.io.topics import read_topics

    texts = [q.text for lang in langs for q in read_topics(topics.format(lang=lang))]
    random.Random(0).shuffle(texts)
    return texts


# ---------------------------------------------------------------- the run


def run(args: argparse.Namespace) -> dict[str, Any]:
    texts = read_bodies(args.topics, args.langs, args.k)
    log_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    results: dict[str, Any] = {
        "command": shlex.join([sys.executable, "-m", "perf.serve_speed", *sys.argv[1:]]),
        "load_average_before": os.getloadavg(), "cpus": os.cpu_count(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "queries": len(texts), "k": args.k,
        "pyserini": "FaissSearcher behind a FastAPI stand-in (pyserini.server.rest needs uniir_for_pyserini)",
        "systems": {},
    }
    servers: dict[str, list[str]] = {}
    if {"plain", "shift"} & set(args.systems):
        argv = [sys.executable, "-m", "mlirkit.serve", "--index", str(args.index), "--quiet"]
        if args.transform:
            argv += ["--transform", str(args.transform)]
        servers["mlirkit"] = argv
    if "pyserini" in args.systems:
        servers["pyserini"] = [sys.executable, "-m", "perf.serve_speed", "--serve-pyserini", "--index", str(args.index)]
    procs: dict[str, tuple[subprocess.Popen, int]] = {}
    try:
        for server, argv in servers.items():  # every server up at once, so the systems can be interleaved
            port = free_port()
            log = log_dir / f"serve_speed-{server}-{port}.log"
            procs[server] = start_server(argv + ["--port", str(port)], port, args.startup_seconds, log), port
        systems = [n for n in SYSTEMS if n in args.systems]
        bodies = {name: [{"query": t, "k": args.k} if name == "pyserini" else
                         {"query": t, "k": args.k, "shift": name == "shift"} for t in texts] for name in systems}
        port_of = {name: procs["pyserini" if name == "pyserini" else "mlirkit"][1] for name in systems}
        for name in systems:
            load(port_of[name], bodies[name], 1, args.warmup, args.seconds)
        for clients in args.clients:  # each level: the systems in turn, the order reversed each repeat (drift)
            parts: dict[str, list[dict[str, Any]]] = {name: [] for name in systems}
            for rep in range(args.repeats):
                for name in (systems if rep % 2 == 0 else systems[::-1]):
                    parts[name].append(load(port_of[name], bodies[name], clients, args.requests, args.seconds))
            for name in systems:
                level = merge_levels(parts[name])
                level["load_average"] = os.getloadavg()
                logger.info("%s %s", name, level)
                results["systems"].setdefault(name, []).append(level)
    finally:
        for proc, _ in procs.values():
            stop_server(proc)
    if "plain" in results["systems"] and "shift" in results["systems"]:
        results["shift_over_plain"] = [
            {"clients": p["clients"], "p50": _ratio(s["p50_ms"], p["p50_ms"]), "qps": _ratio(p["qps"], s["qps"])}
            for p, s in zip(results["systems"]["plain"], results["systems"]["shift"])]
    results["load_average_after"] = os.getloadavg()
    return results


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def markdown(results: dict[str, Any]) -> str:
    rows = ["| system | clients | answers | queries/s | p50 ms | p99 ms | load average (1 min) |",
            "|---|---|---|---|---|---|---|"]
    for name, levels in results["systems"].items():
        for lv in levels:
            rows.append(f"| {name} | {lv['clients']} | {lv['answers']} | {lv['qps']} | {lv['p50_ms']} | "
                        f"{lv['p99_ms']} | {lv['load_average'][0]:.1f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.serve_pyserini:
        serve_pyserini(args.index, args.port)
        return
    results = run(args)
    text = json.dumps(results, indent=2)
    print(markdown(results))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
        args.output.with_suffix(".md").write_text(markdown(results) + "\n")


if __name__ == "__main__":
    main()
