"""A bounded-wait micro-batcher: concurrent callers share one call of a batch function.

The first waiting item opens a batch; the batch closes ``max_wait`` seconds later or when it holds
``max_items`` items, and ``fn`` runs once on all of them (one encoder call for every query that arrived
meanwhile). A caller waits at most ``max_wait`` plus the batch's own time.
"""
from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Generic, Sequence, TypeVar

__all__ = ["MicroBatcher"]

T = TypeVar("T")
R = TypeVar("R")


class MicroBatcher(Generic[T, R]):
    """``MicroBatcher(fn, max_items, max_wait).run(items)`` -> ``fn``'s results of ``items``, computed together
    with other threads' items that arrive within ``max_wait`` seconds; ``batches`` counts the calls of ``fn``."""

    def __init__(self, fn: Callable[[list[T]], Sequence[R]], max_items: int = 64, max_wait: float = 0.005) -> None:
        self.fn, self.max_items, self.max_wait = fn, max_items, max_wait
        self.batches = 0
        self._queue: queue.Queue[tuple[T, Future] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="mlirkit-serve-batcher", daemon=True)
        self._thread.start()

    def run(self, items: Sequence[T]) -> list[R]:
        """The results of ``items``, in order (an exception of ``fn`` is raised here)."""
        futures = []
        for item in items:
            future: Future = Future()
            self._queue.put((item, future))
            futures.append(future)
        return [f.result() for f in futures]

    def close(self) -> None:
        """Stop the worker thread (items already queued are answered first)."""
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.max_wait
            stop = False
            while len(batch) < self.max_items:
                remaining = deadline - time.monotonic()
                try:
                    nxt = self._queue.get(timeout=max(remaining, 0)) if remaining > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            self._answer(batch)
            if stop:
                return

    def _answer(self, batch: list[tuple[Any, Future]]) -> None:
        self.batches += 1
        try:
            results = self.fn([item for item, _ in batch])
        except BaseException as e:  # every caller of this batch gets the error
            for _, future in batch:
                future.set_exception(e)
            return
        for (_, future), result in zip(batch, results):
            future.set_result(result)
