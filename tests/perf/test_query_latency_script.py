"""perf/query_latency.py: on a fake encoder and a toy index, the result has the shape the docs table reads."""
from __future__ import annotations

from perf import query_latency


class _CountingSearcher:
    """Wraps a real Searcher and counts the queries each call sends."""

    def __init__(self, searcher):
        self.inner, self.calls = searcher, []
        self.encoder, self.query_transform, self.alpha = searcher.encoder, searcher.query_transform, searcher.alpha

    def search_text(self, texts, k, *, langs=None):
        self.calls.append(1 if isinstance(texts, str) else len(texts))
        return self.inner.search_text(texts, k, langs=langs)

    def search_vectors(self, vectors, k):
        return self.inner.search_vectors(vectors, k)


def test_measure_times_singles_and_batches_alternately(tmp_path):
    from mlirkit.search.searcher import Searcher
    from mlirkit.testing.fake_encoder import FakeEncoder

    encoder = FakeEncoder(dim=8)
    query_latency.build_index(tmp_path / "index", encoder, 50, seed=0)
    searcher = _CountingSearcher(Searcher(tmp_path / "index", encoder=encoder))
    queries = [(f"question number {i}", "en" if i % 2 else "de") for i in range(7)]
    result = query_latency.measure(searcher, queries, singles=5, batches=2, batch_size=12, rounds=2, warmup=1, k=3)
    # warm-up, then per round: its singles, then its batches (5 = 3 + 2 singles, 2 = 1 + 1 batches)
    assert searcher.calls == [1, 1, 1, 1, 12, 1, 1, 12]
    single, batch = result["single"], result["batch"]
    assert single["n"] == single["encode"]["n"] == single["search"]["n"] == 5
    assert batch["n"] == len(batch["call_ms"]) == 2 and batch["batch_size"] == 12
    for r in (single, single["encode"], single["search"], batch):
        assert 0 <= r["p50_ms"] <= r["p90_ms"] <= r["p99_ms"]
    assert result["ratio_single_to_batch"] > 0
    table = query_latency.markdown(result)
    assert table.count("\n") == 6 and "| batch of 12 (per query) | 2 |" in table


def test_percentiles_of_known_values():
    r = query_latency.percentiles([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (r["p50_ms"], r["mean_ms"], r["n"]) == (3.0, 3.0, 5) and r["p99_ms"] == 4.96
