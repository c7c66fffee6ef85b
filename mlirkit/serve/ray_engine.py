"""The search service as a Ray Serve application: the same REST app in every replica, requests batched by Ray.

Each replica of the deployment opens its own :class:`~mlirkit.serve.service.SearchService` (one encoder, one
index) and serves :func:`mlirkit.serve.rest.create_app` over it, so the endpoints, limits and answers are the
single process's. Searches go through a ``@serve.batch`` method: requests arriving at a replica within
``batch_wait_s`` (up to ``max_batch_size``) share one ``SearchService.search`` call, i.e. one encoder call.
Ray's HTTP proxy spreads requests over the replicas (``--num-workers``, ``--num-cpus-per-worker`` CPUs reserved for
each).

    python -m mlirkit.serve --index DIR --transform FILE --engine ray --num-workers 2              # a local Ray
    python -m mlirkit.serve --index DIR --engine ray --address auto --num-workers 8   # a running cluster

Every node must see the index (and transform) at the same path (docs/scale.md).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Mapping, Sequence

from mlirkit.base.errors import MlirkitError

__all__ = ["DEFAULT_BATCH_WAIT_S", "DEFAULT_MAX_BATCH_SIZE", "APP_NAME", "ray_search_app", "run_ray"]

logger = logging.getLogger(__name__)

APP_NAME = "mlirkit"
DEFAULT_MAX_BATCH_SIZE = 32
DEFAULT_BATCH_WAIT_S = 0.01


def ray_search_app(service_options: Mapping[str, Any], *, num_workers: int = 1, num_cpus_per_worker: float = 1.0,
                   max_batch_size: int = DEFAULT_MAX_BATCH_SIZE, batch_wait_s: float = DEFAULT_BATCH_WAIT_S):
    """A bound Ray Serve application (``serve.run`` it): ``num_workers`` replicas, each a ``SearchService``
    opened with ``service_options`` behind the REST app, searches batched with ``@serve.batch``."""
    from ray import serve

    @serve.deployment(name="SearchService", num_replicas=num_workers,
                      ray_actor_options={"num_cpus": num_cpus_per_worker})
    @serve.ingress()
    class SearchDeployment:
        def __init__(self, options: Mapping[str, Any]) -> None:
            from mlirkit.serve.service import SearchService

            self.service = SearchService(**{"max_wait": 0.0, **options})  # Ray batches: no second wait
            self.loop = asyncio.get_running_loop()

        @serve.batch(max_batch_size=max_batch_size, batch_wait_timeout_s=batch_wait_s)
        async def search_batch(self, requests: list[Any]) -> list[Any]:
            try:
                return self.service.search(requests)
            except MlirkitError:  # one bad request: each its own answer or error, as without Ray
                return [_answer_or_error(self.service, r) for r in requests]

        def __serve_build_asgi_app__(self):
            from mlirkit.serve.rest import create_app

            return create_app(_RayBatchedService(self))

    return SearchDeployment.bind(dict(service_options))


class _RayBatchedService:
    """The replica's ``SearchService`` with ``search`` routed through the deployment's ``@serve.batch`` method.

    The REST app calls ``search`` from a worker thread; each request becomes one batch item on the replica's
    event loop, so requests from concurrent HTTP calls are batched together.
    """

    def __init__(self, deployment: Any) -> None:
        self._deployment = deployment

    def search(self, requests: Any) -> Any:
        """As ``SearchService.search``: one request (a dict or ``SearchRequest``) gives one answer, a list a list."""
        deployment = self._deployment
        single = isinstance(requests, Mapping) or not isinstance(requests, Sequence)
        items = [requests] if single else list(requests)

        async def each() -> list[Any]:
            return list(await asyncio.gather(*(deployment.search_batch(r) for r in items)))

        answers = asyncio.run_coroutine_threadsafe(each(), deployment.loop).result()
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        return answers[0] if single else answers

    def __getattr__(self, name: str) -> Any:  # document, health, ready, limits: the replica's service
        return getattr(self._deployment.service, name)


def _answer_or_error(service: Any, request: Any) -> Any:
    try:
        return service.search(request)
    except MlirkitError as e:
        return e


def run_ray(service_options: Mapping[str, Any], *, address: str | None = None, host: str = "127.0.0.1",
            port: int = 8000, num_workers: int = 1, num_cpus_per_worker: float = 1.0, max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
            batch_wait_s: float = DEFAULT_BATCH_WAIT_S) -> None:
    """Start a local Ray (or join the cluster at ``address``), run the application at ``http://host:port/``, block."""
    import ray
    from ray import serve

    ray.init(address=address, ignore_reinit_error=True)
    serve.start(http_options={"host": host, "port": port})
    serve.run(ray_search_app(service_options, num_workers=num_workers, num_cpus_per_worker=num_cpus_per_worker,
                             max_batch_size=max_batch_size, batch_wait_s=batch_wait_s),
              name=APP_NAME, route_prefix="/", blocking=True)
