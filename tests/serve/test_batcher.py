"""Concurrent requests share encoder calls and get the answers they get one by one."""
from __future__ import annotations

import threading

from mlirkit.serve import SearchService
from mlirkit.serve.batcher import MicroBatcher

TEXTS = ["Die Fähre fährt über den Fluss.", "Le fichier est ici.", "the river garden", "engine", "der Brief",
         "la fenêtre", "the package", "Garten und Fluss"] * 3


class CountingEncoder:
    """The tiny encoder, counting its query-encoding calls."""

    def __init__(self, encoder) -> None:
        self._encoder, self.calls = encoder, 0

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def encode_queries(self, *args, **kwargs):
        self.calls += 1
        return self._encoder.encode_queries(*args, **kwargs)


def _concurrently(fn, items):
    out, barrier = [None] * len(items), threading.Barrier(len(items))

    def one(i):
        barrier.wait()
        out[i] = fn(items[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(items))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_concurrent_requests_share_encoder_calls(served, tiny_encoder):
    _, index, shift, corpus = served
    counting = CountingEncoder(tiny_encoder)
    service = SearchService(index, transform=shift, corpus=str(corpus), encoder=counting, max_wait=0.2)
    try:
        requests = [{"query": t, "k": 9, "shift": i % 2 == 0} for i, t in enumerate(TEXTS)]
        one_by_one = [service.search(r) for r in requests]
        calls_alone = counting.calls
        together = _concurrently(service.search, requests)
        calls_together = counting.calls - calls_alone
    finally:
        service.close()
    assert calls_alone == len(requests)
    assert calls_together < len(requests) / 2, calls_together
    strip = [[(h["doc_id"], round(h["score"], 5)) for h in r["hits"]] for r in together]
    assert strip == [[(h["doc_id"], round(h["score"], 5)) for h in r["hits"]] for r in one_by_one]
    assert [r["language"] for r in together] == [r["language"] for r in one_by_one]


def test_batcher_bounds_the_batch_and_passes_errors():
    seen = []

    def double(items):
        seen.append(len(items))
        if "boom" in items:
            raise ValueError("boom")
        return [2 * x for x in items]

    batcher = MicroBatcher(double, max_items=4, max_wait=0.2)
    try:
        assert _concurrently(lambda x: batcher.run([x])[0], list(range(10))) == [2 * x for x in range(10)]
        assert max(seen) == 4 and sum(seen) == 10 and batcher.batches == len(seen)
        try:
            batcher.run(["boom"])
        except ValueError as e:
            assert str(e) == "boom"
        else:
            raise AssertionError("the batch function's error must reach the caller")
        assert batcher.run([5]) == [10]  # the worker survives an error
    finally:
        batcher.close()
