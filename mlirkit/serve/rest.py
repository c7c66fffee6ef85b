"""The REST API and the page (FastAPI): ``create_app(service)``; shapes in :mod:`mlirkit.serve.schemas`.

``POST /v1/search``, ``POST /v1/search/batch``, ``GET /v1/documents/{doc_id}``, ``GET /health``, ``GET /ready``,
``GET /openapi.json`` (no viewer: FastAPI's load from a CDN), ``GET /`` (the page, static files of this package). A bad request is a 4xx JSON body
``{"detail": "<field>: <message>", "field": "<field>"}``, never a traceback.
"""
from __future__ import annotations

import logging
from importlib import resources

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from starlette.exceptions import HTTPException
from fastapi.staticfiles import StaticFiles

from mlirkit.base.errors import MlirkitError
from mlirkit.serve.schemas import BatchRequest, BatchResponse, DocumentOut, HealthOut, SearchRequest, SearchResponse
from mlirkit.serve.service import RequestError, SearchService, UnknownDocument

__all__ = ["MAX_BODY_BYTES", "create_app"]

logger = logging.getLogger(__name__)


def _field(loc) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def _error(status: int, field: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"detail": f"{field}: {message}", "field": field})


#: the largest request body read: a batch of ``MAX_BATCH`` queries of ``MAX_QUERY_CHARS`` characters, each written
#: as an escaped surrogate pair (12 bytes), is about 770 kB; a bigger body is answered 413 before it is read whole
MAX_BODY_BYTES = 2**20

#: the field a bad request of each HTTP status names (docs/serve.md: every 4xx names one)
_STATUS_FIELD = {400: "body", 404: "path", 405: "method", 413: "body"}


class _BodyLimit:
    """ASGI middleware: a request body over :data:`MAX_BODY_BYTES` (declared or streamed) is refused with 413."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            return await _too_large()(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:
                raise HTTPException(413, _TOO_LARGE)
            return message

        await self.app(scope, limited, send)


_TOO_LARGE = f"larger than {MAX_BODY_BYTES // 2**20} MiB (no request needs that much)"


def _too_large() -> JSONResponse:
    return _error(413, "body", _TOO_LARGE)


def create_app(service: SearchService) -> FastAPI:
    """The FastAPI app that answers with ``service``."""
    from mlirkit import __version__

    app = FastAPI(title="mlirkit search", version=__version__,
                  description="Multilingual dense search, with the query-time SHIFT of each query's language.",
                  docs_url=None, redoc_url=None)  # their viewers load from a CDN: the OpenAPI document only
    static = resources.files("mlirkit.serve") / "static"

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        err = exc.errors()[0]
        if err.get("type") == "json_invalid":
            return _error(400, "body", f"malformed JSON ({err.get('ctx', {}).get('error', 'cannot parse')})")
        return _error(422, _field(err.get("loc", ())), str(err.get("msg", "invalid")))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:  # routing, body size, parsing
        field = _STATUS_FIELD.get(exc.status_code, "request")
        detail = exc.detail if exc.status_code != 404 or field != "path" else f"no endpoint {request.url.path}"
        return _error(exc.status_code, field, str(detail))

    @app.exception_handler(UnknownDocument)
    async def unknown(request: Request, exc: UnknownDocument) -> JSONResponse:
        return _error(404, exc.field, str(exc).split(": ", 1)[-1])

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> JSONResponse:
        return _error(422, exc.field, str(exc).split(": ", 1)[-1])

    @app.exception_handler(MlirkitError)
    async def mlirkit_error(request: Request, exc: MlirkitError) -> JSONResponse:
        return _error(400, "body", str(exc))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:  # logged here, never sent
        logger.exception("internal error answering %s", request.url.path)
        return JSONResponse(status_code=500, content={"detail": "internal error (see the server's log)"})

    @app.post("/v1/search", response_model=SearchResponse)
    def search(body: SearchRequest) -> dict:
        return service.search(body)

    @app.post("/v1/search/batch", response_model=BatchResponse)
    def search_batch(body: BatchRequest) -> dict:
        shared = body.model_dump(exclude={"queries"})
        return {"results": service.search([SearchRequest(**q.model_dump(), **shared) for q in body.queries])}

    @app.get("/v1/documents/{doc_id}", response_model=DocumentOut)
    def document(doc_id: str) -> dict:
        return service.document(doc_id)

    @app.get("/health", response_model=HealthOut)
    def health() -> dict:
        return service.health()

    @app.get("/ready")
    def ready() -> JSONResponse:
        ok = service.ready()
        return JSONResponse(status_code=200 if ok else 503, content={"ready": ok})

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(static / "index.html"))

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.add_middleware(_BodyLimit)
    return app
