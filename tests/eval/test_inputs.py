"""evaluate takes qrels, runs and document languages in every form a user has them (each giving the same
figures as plain dicts), and refuses anything else with an error naming what was given."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.inputs import as_qrels, as_run, as_runs
from mlirkit.io.trec import write_qrels, write_run
from mlirkit.search import Hit, SearchResults

QRELS = {f"q{i}": {f"d{i}": 1, f"d{i + 1}": 1} for i in range(10)}
DOC_LANGS = {f"d{i}": ("en" if i % 2 else "de") for i in range(12)} | {"dx": "en"}
METRICS = ["ndcg@5", "recall@5", "tlr@5"]


def _run(seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    return {q: {d: float(rng.random()) for d in [*rels, "dx", f"d{(i + 5) % 12}"]}
            for i, (q, rels) in enumerate(QRELS.items())}


def _results(run) -> SearchResults:
    return SearchResults({q: sorted((Hit(d, s) for d, s in docs.items()), key=lambda h: (-h.score, h.doc_id))
                          for q, docs in run.items()})


def _same(a, b) -> None:
    assert a.runs == b.runs
    np.testing.assert_array_equal(a.table.values, b.table.values)


def test_every_form_gives_the_figures_of_the_plain_dicts(tmp_path):
    ranx = pytest.importorskip("ranx")
    base, shift = _run(0), _run(1)
    plain = evaluate(QRELS, {"base": base, "shift": shift}, METRICS, doc_langs=DOC_LANGS, query_langs="en",
                     significance=None)
    write_qrels(QRELS, tmp_path / "qrels.txt")
    write_run(base, tmp_path / "base.trec", "base")
    write_run(shift, tmp_path / "shift.trec", "shift")
    (tmp_path / "langs.tsv").write_text("".join(f"{d}\t{la}\n" for d, la in DOC_LANGS.items()))
    forms = [
        (tmp_path / "qrels.txt", {"base": _results(base), "shift": _results(shift)}),
        (ranx.Qrels(QRELS), [ranx.Run(base, name="base"), ranx.Run(shift, name="shift")]),
        (str(tmp_path / "qrels.txt"), [tmp_path / "base.trec", str(tmp_path / "shift.trec")]),  # named by file
        (QRELS, {"base": tmp_path / "base.trec", "shift": ranx.Run(shift)}),
    ]
    for qrels, runs in forms:
        _same(evaluate(qrels, runs, METRICS, doc_langs=tmp_path / "langs.tsv", query_langs="en", significance=None),
              plain)


def test_one_run_alone_is_named_by_its_name_or_file(tmp_path):
    ranx = pytest.importorskip("ranx")
    run = _run(0)
    write_run(run, tmp_path / "bm25.trec", "x")
    plain = evaluate(QRELS, {"run": run}, METRICS, doc_langs=DOC_LANGS, query_langs="en")
    _same(evaluate(QRELS, _results(run), METRICS, doc_langs=DOC_LANGS, query_langs="en"), plain)
    _same(evaluate(QRELS, ranx.Run(run), METRICS, doc_langs=DOC_LANGS, query_langs="en"), plain)
    assert evaluate(QRELS, ranx.Run(run, name="e5"), METRICS, doc_langs=DOC_LANGS, query_langs="en").runs == ["e5"]
    assert evaluate(QRELS, tmp_path / "bm25.trec", METRICS, doc_langs=DOC_LANGS, query_langs="en").runs == ["bm25"]
    # a plain dict of hit lists is one run of search results too
    assert as_runs({q: list(h) for q, h in _results(run).items()}) == {"run": run}


@pytest.mark.parametrize("runs, message", [
    (_run(0), r"runs is \{name: run\}: for one run .* pass \{'name': run\}"),
    ([_results(_run(0)), _results(_run(1))], "run number 1 .*has no name: pass {name: run}"),
    ({"q1": [1, 2]}, r"run 'run', query 'q1': a list of hits must hold"),  # hit lists: one run
    ({"a": {"q1": [("d1", "x")]}}, r"run 'a', query 'q1': a list of hits must hold \(doc_id, score\) pairs"),
    ({"a": {"q1": 0.5}}, r"run 'a', query 'q1': expected \{docid: score\} or a list of hits, got float"),
    ({"a": np.zeros(3)}, "run 'a' must be .*; got numpy.ndarray"),
    (42, "runs must be {name: run}, a list of named runs or one run .*; got int"),
    ({"a", "b"}, "got set"),
    ({}, "no runs to evaluate"),
    ([], "no runs to evaluate"),
])
def test_other_runs_are_refused_by_name(runs, message):
    with pytest.raises(MlirkitError, match=message):
        evaluate(QRELS, runs, ["ndcg@5"])


@pytest.mark.parametrize("qrels, message", [
    ([("q1", "d1", 1)], "qrels must be .*; got list"),
    ({"q1": 1}, "got dict"),
    (3.5, "got float"),
])
def test_other_qrels_are_refused_by_name(qrels, message):
    with pytest.raises(MlirkitError, match=message):
        as_qrels(qrels)
    with pytest.raises(MlirkitError, match=message):
        evaluate(qrels, {"a": _run(0)}, ["ndcg@5"])


def test_other_doc_langs_are_refused_and_a_missing_run_file_named(tmp_path):
    with pytest.raises(MlirkitError, match="doc_langs must be .*; got list"):
        evaluate(QRELS, {"a": _run(0)}, ["tlr@5"], doc_langs=[("d1", "en")], query_langs="en")
    with pytest.raises(MlirkitError, match="nothing.trec"):
        as_run(tmp_path / "nothing.trec")


def test_ranx_to_dict_equals_ranx_to_dict_of_runs_and_qrels():
    """The compiled conversion gives ranx's own ``to_dict()``: same queries, documents, scores and order."""
    from mlirkit.base.numba_cache import import_ranx
    from mlirkit.eval.inputs import ranx_to_dict

    ranx = import_ranx()
    run = ranx.Run({"q2": {"d1": 0.5, "d10": 2.0, "d\u00e9": -1.0, "d\u4e2d": 2.0}, "q1": {"d3": 1.0}, "q0": {}},
                   name="r")
    qrels = ranx.Qrels({"q1": {"d3": 2, "d4": 0}})
    for obj in (run, ranx.Run(), qrels):
        expected = obj.to_dict()
        got = ranx_to_dict(obj)
        assert type(got) is dict and got == expected
        assert [(q, list(d.items())) for q, d in got.items()] == [(q, list(d.items())) for q, d in expected.items()]
