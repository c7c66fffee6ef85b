"""The search service: one index behind a REST API and a web page (``python -m mlirkit.serve``).

:class:`~mlirkit.serve.service.SearchService` is the one object every front end calls; the FastAPI app is
:func:`mlirkit.serve.rest.create_app`. See docs/serve.md.
"""
from __future__ import annotations

from mlirkit.serve.service import SearchService

__all__ = ["SearchService"]
