"""The lexical-fusion measurement: per-language means, the parallel pairs it fits SHIFT on, its tables."""
from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def lf():
    from experiments import lexical_fusion

    return lexical_fusion


def test_mean_is_over_query_languages_not_queries(lf):
    from mlirkit.io.records import Query

    queries = [Query("a1", "x", "de"), Query("b1", "x", "fr"), Query("b2", "x", "fr"), Query("b3", "x", "fr")]
    qrels = {q.query_id: {f"d-{q.query_id}": 1} for q in queries}
    doc_langs = {f"d-{q.query_id}": "en" for q in queries} | {"other": "de"}
    # the German query finds its document first, the French ones find none
    run = {"a1": {"d-a1": 2.0, "other": 1.0}, "b1": {"other": 1.0}, "b2": {"other": 1.0}, "b3": {"other": 1.0}}
    scores = lf.per_language(qrels, {"s": run}, queries, doc_langs)["s"]
    assert scores["ndcg@20"] == {"de": pytest.approx(1.0), "fr": 0.0, "mean": pytest.approx(0.5)}  # not 0.25
    assert scores["samelang@20"]["de"] == pytest.approx(0.5)  # "other" (German) beside an English document
    assert scores["tlr@20"]["de"] == pytest.approx(1.0)


def test_pairs_file_takes_english_and_the_language_of_the_first_groups(lf, tmp_path):
    path = lf.pairs_file("mlirkit/parallel/tatoeba", ["en", "de", "ja"], 5, tmp_path / "pairs.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    groups: dict[str, set[str]] = {}
    for r in rows:
        groups.setdefault(r["id"], set()).add(r["lang"])
    assert sorted(groups.values(), key=sorted) == [{"de", "en"}] * 5 + [{"en", "ja"}] * 5
    with pytest.raises(SystemExit, match="no pairs for xx"):
        lf.pairs_file("mlirkit/parallel/tatoeba", ["en", "xx"], 5, tmp_path / "none.jsonl")


def _test(metric: str, run_b: str, mean_b: float, p: float) -> dict:
    return {"metric": metric, "run_a": "base", "run_b": run_b, "mean_a": 0.5, "mean_b": mean_b, "p_corrected": p,
            "permutations": 1000}


def test_markdown_places_every_figure_and_test(lf):
    systems = {s: {m: {"de": 0.1 * i, "mean": 0.1 * i + 0.01} for m in lf.METRICS} for i, s in enumerate(lf.SYSTEMS)}
    tests = {"unit": {"units": 3, "queries": 6},
             "tests": [_test(m, "other", 0.25, 0.0004 if m == "ndcg@20" else 0.2) for m in lf.METRICS]}
    tests["tests"].append(_test("ndcg@20", "bm25", 0.1, 0.01))
    bed = {"bed": "toy", "corpus": "c", "documents": 9, "queries": 6, "query_langs": {"de": 6},
           "chosen": {"alpha": 0.6, "weights": {"dense": [0.8, 0.2], "dense+shift": [0.9, 0.1]},
                      "best_plain": "wsum(dense+shift)"},
           "scores": systems, "vs_dense_shift": tests, "vs_best_plain": tests,
           "bm25_statistics": {"language": systems["bm25"], "pooled": systems["dense"]}, "bm25_statistics_test": tests,
           "ndcg20_minus_best_plain": {"slots-wsum": {"difference": -0.0007, "ci95": [-0.0033, 0.0019],
                                                      "replicates": 2000}}}
    text = lf.markdown({"beds": [bed]})
    header = "| lang | " + " | ".join(lf.SYSTEMS) + " |"
    assert text.count(header) == len(lf.METRICS)
    de_row = "| de | " + " | ".join(f"{0.1 * i:.3f}" for i in range(len(lf.SYSTEMS))) + " |"
    assert text.count(de_row) == len(lf.METRICS)
    assert "| other | 0.250 vs 0.500, p < 0.001 | 0.250 vs 0.500, p 0.200 |" in text
    assert "| pooled | " + " | ".join(["0.110"] * len(lf.METRICS)) + " |" in text
    assert "| bm25 | 0.010* | 0.010 | 0.010 | 0.010 |" in text  # the summary marks the significant difference
    assert "| dense | 0.110 | 0.110 |" in text
    assert "slots-wsum minus wsum(dense+shift): -0.0007 (mean over query languages), 95 % interval [-0.0033, +0.0019]" \
        in text
