"""The MCP server through the official SDK's own client: in process, over stdio (``python -m mlirkit.serve --mcp
stdio`` as a subprocess) and over streamable HTTP on 127.0.0.1; the tools' answers are the service's."""
from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

import pytest

from mlirkit.serve.mcp import MCP_PATH, create_mcp_server

GERMAN = "Die Fähre fährt jeden Morgen über den breiten Fluss zum anderen Ufer."


@pytest.fixture(scope="module")
def from_meta(served, tiny_model_dir, tiny_encoder, tmp_path_factory):
    """(service, index, shift, corpus): the served documents in an index that records its encoder, so a server in
    another process (a subprocess, a Ray replica) rebuilds the same encoder from ``meta.json``."""
    from mlirkit.encode import Indexer
    from mlirkit.io.corpus import read_corpus
    from mlirkit.serve import SearchService

    _, _, shift, corpus = served
    index = tmp_path_factory.mktemp("served") / "index"
    Indexer(index, tiny_encoder, transform=shift, alpha=0.7, save_embeddings=True, show_progress=False,
            encoder_name=str(tiny_model_dir), encoder_options={"encoder_class": "hf", "max_length": 64}
            ).index(read_corpus(str(corpus)))
    service = SearchService(index, transform=shift, corpus=str(corpus), encoder=tiny_encoder)
    yield service, index, shift, corpus
    service.close()


def _run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=240))


async def _session(target, checks):
    from mcp import Client

    async with Client(target) as client:
        return await checks(client)


async def _search_and_document(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    search = await client.call_tool("search", {"query": GERMAN, "k": 5})
    plain = await client.call_tool("search", {"query": GERMAN, "k": 5, "shift": False})
    first = search.structured_content["hits"][0]["doc_id"]
    document = await client.call_tool("get_document", {"doc_id": first})
    return tools, search, plain, document


def _check_answers(service, tools, search, plain, document):
    assert set(tools) == {"search", "get_document"}
    assert {"query", "k", "lang", "shift", "alpha", "fusion"} <= set(tools["search"].input_schema["properties"])
    assert tools["search"].input_schema["required"] == ["query"]
    assert not search.is_error and not plain.is_error and not document.is_error
    want = service.search({"query": GERMAN, "k": 5})
    want_plain = service.search({"query": GERMAN, "k": 5, "shift": False})
    got = search.structured_content
    assert [(h["doc_id"], round(h["score"], 5)) for h in got["hits"]] == \
        [(h["doc_id"], round(h["score"], 5)) for h in want["hits"]]
    assert len(got["hits"]) == 5 and got["shift"] is True
    assert got["language"]["lang"] == "de" and got["language"]["how"] == "detected"
    assert [h["doc_id"] for h in plain.structured_content["hits"]] == [h["doc_id"] for h in want_plain["hits"]]
    # teeth: the shift changes this query's ranking, so the two calls really took different paths
    assert [h["doc_id"] for h in want["hits"]] != [h["doc_id"] for h in want_plain["hits"]]
    doc = document.structured_content
    assert doc == service.document(got["hits"][0]["doc_id"]) and doc["text"]
    assert GERMAN in search.content[0].text  # the JSON text of the same answer, for clients without structure


def test_tools_in_process_answer_as_the_service(served):
    service = served[0]
    _check_answers(service, *_run(_session(create_mcp_server(service), _search_and_document)))


def test_bad_arguments_are_tool_errors_naming_the_field(served):
    async def bad(client):
        return [await client.call_tool("search", args) for args in (
            {"query": GERMAN, "k": 0}, {"query": ""}, {"query": GERMAN, "lang": "sw"}, {"query": GERMAN, "alpha": 7},
            {"k": 3})] + [await client.call_tool("get_document", {"doc_id": "no-such-doc"})]

    results = _run(_session(create_mcp_server(served[0]), bad))
    assert all(r.is_error for r in results)
    texts = [r.content[0].text for r in results]
    for text, field in zip(texts, ["k", "query", "lang", "alpha", "query", "doc_id"]):
        assert field in text, text
    assert "Traceback" not in "".join(texts)


def _env():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {**os.environ, "PYTHONPATH": root, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def test_stdio_subprocess(from_meta):
    from mcp import StdioServerParameters

    service, index, shift, corpus = from_meta
    params = StdioServerParameters(command=sys.executable, env=_env(), args=[
        "-m", "mlirkit.serve", "--index", str(index), "--transform", str(shift), "--corpus", str(corpus),
        "--mcp", "stdio", "--quiet"])
    _check_answers(service, *_run(_session(params, _search_and_document)))


def test_streamable_http_on_loopback(served):
    import uvicorn

    service = served[0]
    app = create_mcp_server(service).streamable_http_app(streamable_http_path=MCP_PATH)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the MCP HTTP server did not start"
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        _check_answers(service, *_run(_session(f"http://127.0.0.1:{port}{MCP_PATH}", _search_and_document)))
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_unknown_transport_is_refused(served):
    from mlirkit.base.errors import MlirkitError
    from mlirkit.serve.mcp import run_mcp

    with pytest.raises(MlirkitError, match="MCP transport 'sse'"):
        run_mcp(served[0], "sse")
