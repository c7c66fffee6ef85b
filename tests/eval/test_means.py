"""Macro mean over query languages in the main table, micro mean over queries beside it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.means import macro_mean, micro_mean

# de has three queries (reciprocal ranks 1, 1/2, 0), fr one (0), ja two (1, 1)
QRELS = {q: {"rel": 1} for q in ("de1", "de2", "de3", "fr1", "ja1", "ja2")}
RUN = {"de1": {"rel": 2.0}, "de2": {"x": 2.0, "rel": 1.0}, "de3": {"x": 1.0}, "fr1": {"x": 1.0},
       "ja1": {"rel": 1.0}, "ja2": {"rel": 1.0}}
LANGS = {"de1": "de", "de2": "de", "de3": "de", "fr1": "fr", "ja1": "ja", "ja2": "ja"}
MACRO = np.mean([np.mean([1, 0.5, 0]), 0.0, 1.0])  # (0.5 + 0 + 1) / 3 = 0.5
MICRO = np.mean([1, 0.5, 0, 0, 1, 1])  # 3.5 / 6


def test_means_by_formula():
    assert macro_mean([1, 0.5, 0, 0, 1, 1], ["de", "de", "de", "fr", "ja", "ja"]) == pytest.approx(MACRO)
    assert micro_mean([1, 0.5, 0, 0, 1, 1]) == pytest.approx(MICRO)
    assert macro_mean([np.nan, 1.0, 0.0], ["de", "fr", "fr"]) == 0.5  # a language without defined values drops
    assert np.isnan(macro_mean([np.nan], ["de"])) and np.isnan(micro_mean({}))


def test_main_table_is_macro_with_micro_beside_it(tmp_path):
    r = evaluate(QRELS, {"run": RUN, "other": RUN}, ["mrr@10"], query_langs=LANGS, baseline="run")
    assert list(r.table.columns) == ["mrr@10", "mrr@10 (micro)"]
    assert r.value("run", "mrr@10") == pytest.approx(MACRO) and MACRO != pytest.approx(MICRO)
    assert r.value("run", "mrr@10", micro=True) == pytest.approx(MICRO)
    assert r.settings["mean"] == "macro over query languages"
    data = json.loads(r.to_json())
    assert data["run"] == {"mrr@10": pytest.approx(MACRO), "mrr@10 (micro)": pytest.approx(MICRO)}
    md = r.to_markdown()
    assert md.splitlines()[0].split("|")[2:4] == [" mrr@10 ", " mrr@10 (micro) "]
    assert "Values: mean over the 3 query languages of each language's mean (macro); (micro): mean over the 6 " \
           "queries." in md
    assert "mrr@10 (micro)" in r.to_latex() and "mrr@10 (micro)" in r.to_csv()
    report = r.to_ranx_report()
    assert report.metrics == ["mrr@10", "mrr@10 (micro)"]
    assert report.results["run"]["mrr@10 (micro)"] == pytest.approx(MICRO)


def test_one_query_language_has_one_mean():
    r = evaluate(QRELS, {"run": RUN}, ["mrr@10"], query_langs="de", significance=None)
    assert list(r.table.columns) == ["mrr@10"] and r.value("run", "mrr@10") == pytest.approx(MICRO)
    assert r.value("run", "mrr@10", micro=True) == pytest.approx(MICRO)
    assert "macro" not in r.to_markdown()


def test_tlr_and_samelang_expected_are_macro_too():
    doc_langs = {"rel": "en", "x": "en"}
    # every document is English, no query is: a samelang of 0 from languages that never meet is refused
    with pytest.raises(MlirkitError, match="query language 'de' .* meets no document language: the documents' "
                                           "languages are en$"):
        evaluate(QRELS, {"run": RUN}, ["samelang@2"], doc_langs=doc_langs, query_langs=LANGS, significance=None)
    doc_langs = {"rel": "en", "x": "en", "d": "de", "f": "fr", "j": "ja"}
    r = evaluate(QRELS, {"run": RUN}, ["samelang@2"], doc_langs=doc_langs, query_langs=LANGS, significance=None)
    # samelang: no retrieved document is in its query's language: 0 everywhere; expected: 0 as well
    assert r.value("run", "samelang@2") == 0 and r.value("run", "samelang@2 (expected)") == 0
    qrels = {"de1": {"rel": 1}, "de2": {"rel": 1}, "fr1": {"rel": 1, "x": 1}}
    run = {"de1": {"rel": 1.0}, "de2": {"x": 1.0}, "fr1": {"x": 1.0}}
    r = evaluate(qrels, {"run": run}, ["tlr@1"], doc_langs={"rel": "en", "x": "fr", "d": "de"},
                 query_langs={"de1": "de", "de2": "de", "fr1": "fr"}, significance=None)
    # de: TLR 1, 0 -> 0.5; fr: target {rel}, top-1 {x} -> 0: macro 0.25, micro 1/3
    assert r.value("run", "tlr@1") == pytest.approx(0.25) and r.value("run", "tlr@1", micro=True) == pytest.approx(1 / 3)
