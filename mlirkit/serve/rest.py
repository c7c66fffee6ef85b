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
from fastapi.staticfiles import StaticFiles

from mlirkit.base.errors import MlirkitError
from mlirkit.serve.schemas import BatchRequest, BatchResponse, DocumentOut, HealthOut, SearchRequest, SearchResponse
from mlirkit.serve.service import RequestError, SearchService, UnknownDocument

__all__ = ["create_app"]

logger = logging.getLogger(__name__)


def _field(loc) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def _error(status: int, field: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"detail": f"{field}: {message}", "field": field})


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
    return app
