"""``python -m mlirkit.serve`` refuses a missing, truncated or foreign index in one line, exit 2; help has an example."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mlirkit.serve.cli import build_parser


def _serve(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run([sys.executable, "-m", "mlirkit.serve", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_help_has_an_example_and_binds_loopback_by_default():
    assert "example:\n  python -m mlirkit.serve --index" in build_parser().format_help()
    args = build_parser().parse_args(["--index", "x"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)


@pytest.mark.parametrize("kind", ["missing", "truncated", "foreign"])
def test_a_bad_index_refuses_to_start_in_one_line(kind, shift_index, tmp_path):
    import shutil

    src = shift_index[0] / "pivot"
    index = tmp_path / "index"
    if kind == "truncated":
        shutil.copytree(src, index)
        data = (index / "index").read_bytes()
        (index / "index").write_bytes(data[: len(data) // 2])
    elif kind == "foreign":
        index.mkdir()
        (index / "index").write_text("not a FAISS index\n")
        (index / "docid").write_text("a\nb\n")
    r = _serve("--index", str(index), "--port", "0")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and str(index) in lines[0], r.stderr


def test_the_command_serves_until_stopped(served, tiny_model_dir):
    """The command as its example gives it (another index): it answers on 127.0.0.1 and stops on SIGTERM."""
    import json
    import signal
    import socket
    import time
    import urllib.request

    _, index, shift, corpus = served
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-m", "mlirkit.serve", "--index", str(index), "--transform", str(shift),
                             "--corpus", str(corpus), "--port", str(port), "--quiet", "--encoder", str(tiny_model_dir),
                             "--encoder-class", "hf", "--encoder-option", "max_length=64"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, body = time.monotonic() + 120, None
        while body is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/search", method="POST",
                                                 data=json.dumps({"query": "der Fluss", "k": 3}).encode(),
                                                 headers={"Content-Type": "application/json"})
                body = json.loads(urllib.request.urlopen(request, timeout=10).read())
            except OSError:
                time.sleep(0.5)
        assert body is not None, proc.stderr.read() if proc.poll() is not None else "no answer in 120 s"
        assert len(body["hits"]) == 3 and body["shift"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
