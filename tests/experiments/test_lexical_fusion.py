"""The lexical-fusion measurement: per-language means, the parallel pairs it fits SHIFT on, its tables."""
from __future__ import annotations

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def lf():
    from experiments import lexical_fusion

    return lexical_fusion


def test_mean_is_over_query_languages_not_queries(lf):
    from mlirkit.io.records import Query

    queries = [Query("a1", "x", "de"), Query("b1", "x", "fr"), Query("b2", "x", "fr"), Query("b3", "x", "fr")]
    qrels = {q.query_id: {f"d-{q.query_id}": 1} for q in queries}
    doc_langs = {f"d-{q.query_id}": "en" for q in queries} | {"other": "de", "unseen": "fr"}  # fr: a language the collection has
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
    for s in ("slots-rrf", "slots-wsum"):
        del systems[s][lf.MRC]  # no MRC: shown as a dash
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
    assert text.count(de_row) == len(lf.METRICS) - 1
    mrc_row = "| de | " + " | ".join(f"{0.1 * i:.1f}" for i in range(len(lf.SYSTEMS) - 2)) + " | — | — |"
    assert text.count(mrc_row) == 1
    assert "| slots-wsum | 0.810 | 0.810 | 0.810 | 0.810 | 0.810 | — |" in text
    assert "| other | 0.250 vs 0.500, p < 0.001 | 0.250 vs 0.500, p 0.200 |" in text
    assert "| pooled | " + " | ".join(["0.110"] * (len(lf.METRICS) - 1)) + " | 0.1 |" in text
    assert "| bm25 | 0.010* | 0.010 | 0.010 | 0.010 |" in text  # the summary marks the significant difference
    assert "| dense | 0.110 | 0.110 |" in text
    assert "MRC@10 (x100" in text and "not measured in this result" not in text
    for scores in systems.values():  # a result written before PEER and MRC: their columns and tables left out
        for m in ("peer@20", lf.MRC):
            scores.pop(m, None)
    old = lf.markdown({"beds": [bed]})
    assert "**peer@20**" not in old and "| system | ndcg@20 | recall@100 | tlr@20 | samelang@20 |\n" in old
    assert "PEER@20 and MRC@10: not measured in this result." in old
    assert "slots-wsum minus wsum(dense+shift): -0.0007 (mean over query languages), 95 % interval [-0.0033, +0.0019]" \
        in text


def _parallel_bed(n_docs=30, groups=4, langs=("de", "en", "fr")):
    from mlirkit.io.records import ParallelQuery

    queries = [ParallelQuery(f"{la}-{g}", "x", la, f"g{g}") for g in range(groups) for la in langs]
    doc_ids = [f"d{j:02d}" for j in range(n_docs)]
    return queries, doc_ids


def test_mrc_from_runs_of_every_non_zero_score_equals_mrc_of_the_complete_run(lf):
    """``mrc_runs`` reads a run that leaves out the documents scoring 0 (BM25's unmatched documents, a fusion's
    documents in neither input) as scoring 0: the same MRC@10 as the run that lists every document."""
    from mlirkit.eval import evaluate
    from mlirkit.eval.query_groups import topic_groups

    rng = np.random.default_rng(3)
    queries, doc_ids = _parallel_bed()
    complete, sparse = {}, {}
    for q in queries:
        scores = rng.integers(0, 6, len(doc_ids)).astype(float)  # many ties and zeros
        scores[rng.random(len(doc_ids)) < 0.5] = 0.0
        complete[q.query_id] = dict(zip(doc_ids, scores))
        sparse[q.query_id] = {d: v for d, v in zip(doc_ids, scores) if v > 0}
    qrels = {q.query_id: {doc_ids[0]: 1} for q in queries}
    want = evaluate(qrels, {"s": complete}, [lf.MRC], query_langs={q.query_id: q.lang for q in queries},
                    query_groups=topic_groups(queries), significance=None).per_query["s"][lf.MRC]
    got = lf.mrc_runs({"s": sparse}, queries, doc_ids)["s"]
    assert set(got) == set(want) == {q.query_id for q in queries}
    for qid in want:
        assert got[qid] == pytest.approx(want[qid], abs=1e-9)
    with pytest.raises(Exception, match="mrc@10"):  # the sparse run alone is refused, not read as zeros
        evaluate(qrels, {"s": sparse}, [lf.MRC], query_langs={q.query_id: q.lang for q in queries},
                 query_groups=topic_groups(queries), significance=None)


def test_per_language_has_peer_and_mrc_only_where_given(lf):
    from mlirkit.eval import evaluate
    from mlirkit.eval.query_groups import topic_groups

    rng = np.random.default_rng(5)
    queries, doc_ids = _parallel_bed(groups=3)
    doc_langs = {d: ("de", "en", "fr")[j % 3] for j, d in enumerate(doc_ids)}
    runs = {n: {q.query_id: dict(zip(doc_ids, rng.random(len(doc_ids)))) for q in queries} for n in ("a", "b")}
    qrels = {q.query_id: {doc_ids[3 * int(q.group_id[1:]) + j]: 1 for j in range(3)} for q in queries}
    mrc = lf.mrc_runs({"a": runs["a"]}, queries, doc_ids)
    scores = lf.per_language(qrels, runs, queries, doc_langs, mrc=mrc)
    assert lf.MRC in scores["a"] and lf.MRC not in scores["b"]
    assert scores["b"]["peer@20"]["mean"] == pytest.approx(np.mean([scores["b"]["peer@20"][la] for la in
                                                                    ("de", "en", "fr")]))
    ref = evaluate(qrels, runs, ["peer@20", lf.MRC], doc_langs=doc_langs, query_langs={q.query_id: q.lang
                   for q in queries}, query_groups=topic_groups(queries), significance=None)
    for la in ("de", "en", "fr"):
        for metric in ("peer@20", lf.MRC):
            values = [v for qid, v in ref.per_query["a"][metric].items() if qid.startswith(la)]
            assert scores["a"][metric][la] == pytest.approx(np.mean(values))
    tests = lf.significance(qrels, runs, queries, doc_langs, "a", 50, mrc)
    assert {t["metric"] for t in tests["tests"]} == set(lf.METRICS) - {lf.MRC}  # b has no MRC: no MRC test


@pytest.mark.slow
@pytest.mark.jvm
def test_bm25_mrc_from_a_search_of_every_document_equals_the_complete_run(lf, tmp_path):
    """On 600 DDTP documents: the MRC@10 of BM25 from its every-document search equals that of the run
    listing all documents (the unmatched at 0), and a 100-deep run does not hold what MRC needs."""
    from mlirkit.eval import evaluate
    from mlirkit.eval.query_groups import topic_groups
    from mlirkit.io.topics import read_topics
    from mlirkit.lexical import Bm25Searcher, build_bm25_index
    from mlirkit.io.doc_langs import read_doc_langs

    index = tmp_path / "bm25"
    build_bm25_index("mlirkit/ddtp/multi", index, fallback_analyzer="standard", max_docs=600)
    doc_ids = sorted(read_doc_langs(index))
    queries = read_topics("mlirkit/ddtp/multi/test")
    first = sorted({q.group_id for q in queries})[:4]
    queries = [q for q in queries if q.group_id in first]
    with Bm25Searcher(index) as searcher:
        got = lf.mrc_bm25(searcher, queries, doc_ids, 1)
        every = searcher.search(queries, k=len(doc_ids))
    assert any(len(every.get(q.query_id, {})) < len(doc_ids) for q in queries)  # zeros are really left out
    complete = {q.query_id: {d: every.get(q.query_id, {}).get(d, 0.0) for d in doc_ids} for q in queries}
    qrels = {q.query_id: {doc_ids[0]: 1} for q in queries}
    kw = {"query_langs": {q.query_id: q.lang for q in queries}, "query_groups": topic_groups(queries),
          "significance": None}
    want = evaluate(qrels, {"bm25": complete}, [lf.MRC], **kw).per_query["bm25"][lf.MRC]
    assert set(got) == set(want) and len(got) > 10
    for qid in want:
        assert got[qid] == pytest.approx(want[qid], abs=1e-9)


def test_the_committed_result_and_the_tables_of_docs_results_agree(lf):
    """docs/results.md shows each bed's summary table as the committed JSON prints it (no figure typed by hand),
    and the committed .md is the JSON's markdown; both beds carry PEER@20 and MRC@10."""
    import json
    import re

    from tests.helpers import REPO

    result = json.loads((REPO / "experiments/results/lexical_fusion.json").read_text(encoding="utf-8"))
    printed = lf.markdown(result)
    assert (REPO / "experiments/results/lexical_fusion.md").read_text(encoding="utf-8").strip() == printed.strip()
    docs = (REPO / "docs/results.md").read_text(encoding="utf-8")
    tables = re.findall(r"\| system \| ndcg@20 \|.*?\n\n", printed, flags=re.S)
    assert len(tables) == len(result["beds"]) == 2
    for table in tables:
        assert "| peer@20 | mrc@10 |" in table.splitlines()[0]
        assert table in docs
