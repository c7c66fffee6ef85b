from __future__ import annotations

import json
import math

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate, write_report

DOC_LANGS = {"en1": "en", "de1": "de", "fr1": "fr"}
QRELS = {"q1": {"en1": 1, "de1": 1, "fr1": 1}, "q2": {"en1": 1}}
RUNS = {
    "base_run": {"q1": {"en1": 0.9, "de1": 0.5}, "q2": {"en1": 1.0}},
    "shift": {"q1": {"de1": 0.9, "fr1": 0.8, "en1": 0.1}, "q2": {"de1": 1.0, "en1": 0.5}},
}
METRICS = ["ndcg@20", "recall@2", "tlr@2", "samelang@2"]


@pytest.fixture(scope="module")
def result():
    return evaluate(QRELS, RUNS, METRICS, doc_langs=DOC_LANGS, query_langs="en", significance="student",
                    baseline="base_run")


def test_json_round_trip_has_runs_metrics_tables_and_tests(result, tmp_path):
    path = write_report(result, tmp_path / "r.json", per_query=True)
    data = json.loads(path.read_text())
    for run in RUNS:
        for metric in METRICS:
            assert data[run][metric] == pytest.approx(result.value(run, metric))
    assert data["shift"]["samelang@2 (expected)"] == pytest.approx(result.table.loc["shift", "samelang@2 (expected)"])
    assert data["_meta"]["counted"] == {"tlr@2": 1}
    assert data["_meta"]["settings"]["baseline"] == "base_run"
    assert set(data["_per_language"]) == {"recall@2 by document language", "top-2 language share"}
    assert data["_per_language"]["top-2 language share"]["(relevant)"]["en"] == pytest.approx((1 / 3 + 1) / 2)
    assert [(c["run_a"], c["run_b"]) for c in data["_significance"]] == [("base_run", "shift")] * 4
    assert data["_per_query"]["shift"]["tlr@2"] == {"q1": 1.0}


def test_undefined_tlr_is_null_in_json_and_na_in_tables(tmp_path):
    r = evaluate({"q": {"en1": 1}}, {"a": {"q": {"en1": 1.0}}}, ["tlr@10"], doc_langs=DOC_LANGS, query_langs="en",
                 significance=None)
    assert math.isnan(r.table.loc["a", "tlr@10"])
    assert json.loads(r.to_json())["a"]["tlr@10"] is None
    assert "| a   | n/a    |" in r.to_markdown()
    assert "0 of 1 queries counted" in r.to_markdown()


def test_csv_round_trip(result, tmp_path):
    import pandas as pd

    path = write_report(result, tmp_path / "r.csv")
    df = pd.read_csv(path, index_col="run")
    assert list(df.index) == list(RUNS)
    assert list(df.columns) == list(result.table.columns)
    assert df.to_numpy() == pytest.approx(result.table.to_numpy(), rel=1e-5)


def test_markdown_and_latex(result, tmp_path):
    md = write_report(result, tmp_path / "r.md").read_text()
    assert md.splitlines()[0].startswith("| run ") and "base_run" in md and "**paired tests**" in md
    tex = write_report(result, tmp_path / "r.tex").read_text()
    assert r"\begin{tabular}" in tex and r"base\_run" in tex and r"\toprule" in tex
    assert tex.count(r"\begin{table}") == 4  # main, two per-language tables, the paired tests
    assert r"paired tests Paired t-test over 2 queries" in tex


def test_reports_with_long_run_names_are_replaced(tmp_path):
    # the Markdown table pads its columns to the longest run name: still recognised as our report
    runs = {"a-long-run-name": RUNS["base_run"], "another-long-name": RUNS["shift"]}
    for baseline in (None, "a-long-run-name"):  # letters column, or none
        r = evaluate(QRELS, runs, ["ndcg@20"], significance="student", baseline=baseline)
        path = write_report(r, tmp_path / "r.md")
        assert path.read_text().startswith("| # | run " if baseline is None else "| run ")
        write_report(r, path)  # replaced, not refused as someone else's file


def test_write_report_errors_and_overwrite(result, tmp_path):
    with pytest.raises(MlirkitError, match="unknown report type '.xlsx'"):
        write_report(result, tmp_path / "r.xlsx")
    path = write_report(result, tmp_path / "r.json")
    write_report(result, path)  # reports are derived views: replaced by default
    with pytest.raises(MlirkitError, match="already exists"):
        write_report(result, path, overwrite=False)


def test_report_never_imports_the_result():
    """result -> report, one way: the renderers read a result's attributes (no import circle)."""
    import grimp

    graph = grimp.build_graph("mlirkit")
    assert "mlirkit.eval.report" in graph.find_modules_directly_imported_by("mlirkit.eval.result")
    assert not graph.chain_exists(importer="mlirkit.eval.report", imported="mlirkit.eval.result")
