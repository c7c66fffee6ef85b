"""``"fusion": true``: reciprocal rank fusion of the dense top k and BM25's (mlirkit.lexical; JVM)."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.jvm]


def test_fusion_is_reciprocal_rank_fusion_of_dense_and_bm25(served, tiny_encoder, tmp_path):
    from mlirkit.io.records import Query
    from mlirkit.lexical.indexer import build_bm25_index
    from mlirkit.lexical.searcher import Bm25Searcher
    from mlirkit.serve import SearchService
    from mlirkit.serve.service import RRF_K

    _, index, shift, corpus = served
    build_bm25_index(corpus, tmp_path / "bm25", fallback_analyzer="standard")
    service = SearchService(index, transform=shift, lexical=tmp_path / "bm25", corpus=str(corpus), encoder=tiny_encoder)
    try:
        assert service.health()["lexical"] is True
        request = {"query": "der river ist hier", "lang": "de", "k": 10}
        dense = [h["doc_id"] for h in service.search(request)["hits"]]
        fused = service.search({**request, "fusion": True})
    finally:
        service.close()
    bm25 = Bm25Searcher(tmp_path / "bm25").search([Query("q", request["query"], "de")], k=10)["q"]
    bm25_ranked = sorted(bm25, key=lambda d: (-bm25[d], d))
    want: dict[str, float] = {}
    for ranked in (dense, bm25_ranked):
        for rank, doc_id in enumerate(ranked, 1):
            want[doc_id] = want.get(doc_id, 0.0) + 1.0 / (RRF_K + rank)
    want_top = sorted(want.items(), key=lambda p: (-p[1], p[0]))[:10]
    got = [(h["doc_id"], round(h["score"], 6)) for h in fused["hits"]]
    assert got == [(d, round(s, 6)) for d, s in want_top]
    assert fused["fusion"] is True and got[0][0] == "river-de"  # the only document with all four terms
    assert [d for d, _ in got] != dense  # fusion changed the ranking
