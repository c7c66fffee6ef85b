"""The search service as an MCP server (the official ``mcp`` SDK's ``MCPServer``): stdio or streamable HTTP.

Two tools, shaped after Pyserini's MCP server (``pyserini.server.mcp``: ``search`` and ``get_document``), both
answered by the same :class:`~mlirkit.serve.service.SearchService` as the REST API:

- ``search(query, k, lang, shift, alpha, fusion)``: one free-text query in any language; the result is the
  REST answer of ``POST /v1/search`` (the query's language and how it was decided, hits with id, score,
  language and snippet), as structured content and as JSON text;
- ``get_document(doc_id)``: the document's language and text.

A bad argument is a tool error whose message names the field (never a crash report).

    python -m mlirkit.serve --index DIR --transform FILE --mcp stdio
    python -m mlirkit.serve --index DIR --transform FILE --mcp streamable-http --port 8000   # at /mcp
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from mlirkit.base.errors import MlirkitError
from mlirkit.serve.schemas import DocumentOut, SearchResponse  # the tools' output schemas (resolved by name)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from mlirkit.serve.service import SearchService

__all__ = ["MCP_PATH", "MCP_TRANSPORTS", "create_mcp_server", "run_mcp"]

MCP_TRANSPORTS = ("stdio", "streamable-http")
MCP_PATH = "/mcp"

INSTRUCTIONS = (
    "Multilingual search without language bias: a query in any language finds relevant documents in every "
    "language of the index. With shift=true (the default) the query-time SHIFT correction is applied for the "
    "query's language (given in lang, or detected); each result says which language was used and how."
)


def create_mcp_server(service: SearchService) -> MCPServer:
    """An ``MCPServer`` with the ``search`` and ``get_document`` tools over ``service``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("mlirkit", instructions=INSTRUCTIONS)

    @server.tool()
    def search(query: str, k: int = 10, lang: str | None = None, shift: bool = True, alpha: float | None = None,
               fusion: bool = False) -> SearchResponse:
        """Search the index with one free-text query in any language; the top k hits, best first.

        Args:
            query: the query text, in any language.
            k: number of hits to return.
            lang: the query's language (a code such as "de"); omit it to have it identified from the text.
            shift: apply the query-time SHIFT correction for the query's language (fewer same-language hits).
            alpha: the correction's strength (omit for the server's default).
            fusion: fuse with the BM25 index (only when the server has one).

        Returns:
            The query's language and how it was decided, and the hits: doc_id, score, lang, snippet.
        """
        request = {"query": query, "k": k, "lang": lang, "shift": shift, "alpha": alpha, "fusion": fusion}
        try:
            return SearchResponse.model_validate(service.search(request))
        except MlirkitError as e:  # a bad argument: its message names the field
            raise ToolError(str(e)) from None

    @server.tool()
    def get_document(doc_id: str) -> DocumentOut:
        """The language and full text of one document, by the doc_id a search returned.

        Args:
            doc_id: the document's id.
        """
        try:
            return DocumentOut.model_validate(service.document(doc_id))
        except MlirkitError as e:
            raise ToolError(str(e)) from None

    return server


def run_mcp(service: SearchService, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``service`` over MCP until interrupted: ``stdio``, or ``streamable-http`` at ``http://host:port/mcp``."""
    if transport not in MCP_TRANSPORTS:
        raise MlirkitError(f"MCP transport {transport!r}: expected one of {', '.join(MCP_TRANSPORTS)}")
    server = create_mcp_server(service)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port, streamable_http_path=MCP_PATH)
