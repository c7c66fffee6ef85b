"""MRC@k (mlirkit.eval.mrc): the worked example by hand, the masked Spearman kernel against scipy, groups,
ties, the three ways in (runs, score rows, an index) and the refusals."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.mrc import mrc_from_embeddings, mrc_from_scores, parallel_pairs, rank_correlations

DOCS = ["w", "x", "y", "z"]
EN = {"x": 4.0, "y": 3.0, "z": 2.0, "w": 1.0}
DE = {"x": 3.0, "y": 4.0, "z": 1.0, "w": 2.0}
QRELS = {"en_1": {"x": 1}, "de_1": {"x": 1}}
LANGS = {"en_1": "en", "de_1": "de"}


def test_worked_example_by_hand():
    res = evaluate(QRELS, {"r": {"en_1": EN, "de_1": DE}}, ["mrc@2", "mrc@3"], query_langs=LANGS,
                   query_groups="strip-lang", significance=None)
    # k=2: U = {x, y}, scores (4, 3) vs (3, 4): rho = -1; k=3: U = all four, d = (1, -1, 1, -1), rho = 1 - 24/60
    assert res.value("r", "mrc@2") == pytest.approx(-100.0)
    assert res.value("r", "mrc@3") == pytest.approx(60.0)
    assert res.per_query["r"]["mrc@3"] == pytest.approx({"en_1": 60.0, "de_1": 60.0})


def test_average_over_the_other_languages_then_over_questions():
    scores = {"en_1": EN, "de_1": EN, "fr_1": {d: -s for d, s in EN.items()}, "en_2": EN, "de_2": DE}
    langs = {q: q[:2] for q in scores}
    res = evaluate({q: {"x": 1} for q in scores}, {"r": scores}, ["mrc@2"], query_langs=langs,
                   query_groups="strip-lang", significance=None)
    pq = res.per_query["r"]["mrc@2"]
    # question 1: en-de +1, en-fr and de-fr: U = {x, y, z, w}... fr reversed: -1 against both
    assert pq["en_1"] == pytest.approx(0.0) and pq["de_1"] == pytest.approx(0.0) and pq["fr_1"] == pytest.approx(-100)
    assert pq["en_2"] == pytest.approx(-100.0) and pq["de_2"] == pytest.approx(-100.0)
    assert res.value("r", "mrc@2") == pytest.approx(np.mean([np.mean([0, -100]), np.mean([0, -100]), -100]))
    assert res.counted == {"mrc@2": 5}


def test_a_question_in_one_language_is_not_counted_and_needs_groups():
    qrels = {"en_1": {"x": 1}, "de_2": {"x": 1}}
    res = evaluate(qrels, {"r": {"en_1": EN, "de_2": DE}}, ["mrc@2", "ndcg@2"], query_langs={"en_1": "en", "de_2": "de"},
                   query_groups="strip-lang", significance=None)
    assert np.isnan(res.value("r", "mrc@2") or np.nan) and res.counted["mrc@2"] == 0
    with pytest.raises(MlirkitError, match="mrc@2 needs the language versions of each question"):
        evaluate(QRELS, {"r": {"en_1": EN, "de_1": DE}}, ["mrc@2"], query_langs=LANGS)
    with pytest.raises(MlirkitError, match="mrc@2 needs query languages"):
        evaluate(QRELS, {"r": {"en_1": EN, "de_1": DE}}, ["mrc@2"], query_groups={"en_1": "1", "de_1": "1"})


def test_shallow_runs_are_refused_in_one_line():
    run = {"en_1": {"x": 4.0, "y": 3.0}, "de_1": {"y": 4.0, "w": 2.0}}
    with pytest.raises(MlirkitError) as e:
        evaluate(QRELS, {"short": run}, ["mrc@2"], query_langs=LANGS, query_groups="strip-lang", significance=None)
    assert "\n" not in str(e.value) and "run 'short' has no score of query" in str(e.value)
    assert "mlirkit.search --hits" in str(e.value) and "mrc_from_index" in str(e.value)


def test_rank_correlations_equal_scipy_with_ties_and_masks():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(200, 12)).astype(float)
    y = rng.integers(0, 5, size=(200, 12)).astype(float)
    valid = rng.random((200, 12)) < 0.7
    ours = rank_correlations(x, y, valid)
    for p in range(200):
        a, b = x[p, valid[p]], y[p, valid[p]]
        expected = np.nan if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2 else spearmanr(a, b)[0]
        assert (np.isnan(ours[p]) and np.isnan(expected)) or ours[p] == pytest.approx(expected, abs=1e-12)


def test_pairs_are_same_group_other_language():
    pa, pb = parallel_pairs(["g1", "g1", "g1", "g2", "g2"], ["en", "de", "en", "en", "und"])
    assert sorted(zip(pa.tolist(), pb.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1)]


def test_from_embeddings_equals_from_full_runs():
    rng = np.random.default_rng(1)
    docs = rng.normal(size=(30, 8))
    queries = rng.normal(size=(6, 8))
    doc_ids = [f"d{i:02d}" for i in range(30)]
    qids = [f"{lang}_{g}" for g in (1, 2) for lang in ("en", "de", "fr")]
    langs = [q[:2] for q in qids]
    groups = {q: q[3:] for q in qids}
    ours = mrc_from_embeddings(queries, docs, qids, langs, groups, doc_ids, 5)
    s = queries @ docs.T
    runs = {"r": {q: dict(zip(doc_ids, s[i].tolist())) for i, q in enumerate(qids)}}
    res = evaluate({q: {"d00": 1} for q in qids}, runs, ["mrc@5"], query_langs=dict(zip(qids, langs)),
                   query_groups=groups, significance=None)
    assert res.per_query["r"]["mrc@5"] == pytest.approx(ours, abs=1e-12)
    # blocks of whole groups give the same values
    assert mrc_from_scores(lambda rows: s[rows], qids, langs, groups, doc_ids, 5, block=1) == pytest.approx(ours)


def test_from_an_index(tmp_path, tiny_encoder):
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc, ParallelQuery
    from mlirkit.eval.mrc import mrc_from_index

    texts = ["a house by the river", "ein Haus am Fluss", "green apples", "grüne Äpfel", "music at night",
             "Musik in der Nacht"]
    docs = [Doc(f"d{i}", t, "de" if i % 2 else "en") for i, t in enumerate(texts)]
    Indexer(tmp_path / "idx", tiny_encoder, show_progress=False).index(docs)
    topics = [ParallelQuery("en_1", "a house", "en", "1"), ParallelQuery("de_1", "ein Haus", "de", "1")]
    got = mrc_from_index(tmp_path / "idx", topics, 2, encoder=tiny_encoder)
    q = tiny_encoder.encode_queries([t.text for t in topics], ["en", "de"])
    d = tiny_encoder.encode_docs(texts, [x.lang for x in docs])
    norm = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    expected = mrc_from_embeddings(norm(q), norm(d), ["en_1", "de_1"], ["en", "de"], ["1", "1"],
                                   [x.doc_id for x in docs], 2)
    assert got == pytest.approx(expected, abs=1e-4) and set(got) == {"en_1", "de_1"}


def test_the_cli_names_them_in_every_report(tmp_path, capsys):
    import json

    from mlirkit.eval.cli import main

    (tmp_path / "qrels.txt").write_text("en_1 0 x 1\nde_1 0 x 1\nen_1 0 w 1\nde_1 0 w 1\n")
    lines = [f"{q} Q0 {d} {i + 1} {s} r" for q, scores in (("en_1", EN), ("de_1", DE))
             for i, (d, s) in enumerate(sorted(scores.items(), key=lambda x: -x[1]))]
    (tmp_path / "r.trec").write_text("\n".join(lines) + "\n")
    (tmp_path / "langs.tsv").write_text("x\ten\ny\tde\nz\ten\nw\tde\n")
    (tmp_path / "topics.tsv").write_text("en_1\tq\ten\nde_1\tq\tde\n")
    reports = [tmp_path / f"rep.{ext}" for ext in ("md", "json", "tex", "csv")]
    assert main(["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "r.trec"), "--metrics", "mrc@3",
                 "peer@2", "peer-mimo@2", "--doc-langs", str(tmp_path / "langs.tsv"), "--topics",
                 str(tmp_path / "topics.tsv"), "--query-groups", "strip-lang", "--quiet",
                 *[a for r in reports for a in ("--output", str(r))]]) == 0
    out = capsys.readouterr().out
    assert "| mrc@3" in out and "60.0000" in out and "mean rank of the relevant documents" in out
    data = json.loads(reports[1].read_text())
    assert data["r"]["mrc@3"] == pytest.approx(60.0) and data["_meta"]["counted"]["mrc@3"] == 2
    assert all("peer-mimo@2" in r.read_text() for r in reports)


def test_in_the_grouped_test_and_the_ranx_report():
    """MRC@k per query is 100 * RC(q), so the paired test takes it like any metric, with the question as
    the unit; both languages of a question move together. The ranx report carries the column too."""
    rng = np.random.default_rng(2)
    docs = [f"d{i}" for i in range(12)]
    qids = [f"{lang}_{g}" for g in range(6) for lang in ("en", "de")]
    runs = {name: {q: dict(zip(docs, rng.normal(size=len(docs)).tolist())) for q in qids} for name in ("a", "b")}
    langs = {q: q[:2] for q in qids}
    res = evaluate({q: {"d0": 1} for q in qids}, runs, ["mrc@3", "peer@3"], query_langs=langs,
                   doc_langs={d: ("en", "de")[i % 2] for i, d in enumerate(docs)}, query_groups="strip-lang",
                   baseline="a", n_permutations=200)
    (mrc,) = [c for c in res.significance if c.metric == "mrc@3"]
    assert mrc.n_queries == 12 and mrc.n_units == 6
    # the grouped test compares means over questions: a question's two versions have one RC each, averaged
    by_group = {r: np.mean([[res.per_query[r]["mrc@3"][f"{la}_{g}"] for la in ("en", "de")] for g in range(6)], axis=1)
                for r in ("a", "b")}
    assert (mrc.mean_a, mrc.mean_b) == pytest.approx((by_group["a"].mean(), by_group["b"].mean()), abs=1e-12)
    for la in ("en", "de"):  # MRC@k(a): the per-query-language tables
        assert res.per_language[f"query language {la}"].loc["b", "mrc@3"] == pytest.approx(
            np.mean([res.per_query["b"]["mrc@3"][f"{la}_{g}"] for g in range(6)]), abs=1e-12)
    report = res.to_ranx_report()
    assert "mrc@3" in str(report.to_dict()) and "peer@3" in str(report.to_dict())


def test_the_cli_takes_the_questions_from_the_topics_group_id(tmp_path, capsys):
    import json

    from mlirkit.eval.cli import main

    (tmp_path / "qrels.txt").write_text("en_1 0 x 1\nde_1 0 x 1\n")
    lines = [f"{q} Q0 {d} {i + 1} {s} r" for q, scores in (("en_1", EN), ("de_1", DE))
             for i, (d, s) in enumerate(sorted(scores.items(), key=lambda x: -x[1]))]
    (tmp_path / "r.trec").write_text("\n".join(lines) + "\n")
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": "q", "lang": q[:2], "group_id": "g"})
                                                    + "\n" for q in ("en_1", "de_1")))
    assert main(["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "r.trec"), "--metrics", "mrc@3",
                 "--topics", str(tmp_path / "queries.jsonl"), "--quiet"]) == 0
    assert "| r   | 60.0000 |" in capsys.readouterr().out
    # another group per language: no question asked twice, nothing counted
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": "q", "lang": q[:2], "group_id": q})
                                                    + "\n" for q in ("en_1", "de_1")))
    assert main(["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "r.trec"), "--metrics", "mrc@3",
                 "--topics", str(tmp_path / "queries.jsonl"), "--quiet"]) == 0
    assert "mrc@3: 0 of 2 queries counted" in capsys.readouterr().out
