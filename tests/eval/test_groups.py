"""Per-group tables (--group-by family / resource / ...) and the language metadata table."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.language_metadata import LANGUAGES, base_code, language_group, resource_level
from mlirkit.eval.cli import main
from mlirkit.eval import evaluate
from mlirkit.eval.groups import group_scores
from mlirkit.io.trec import write_qrels, write_run


def test_metadata_table_fields_and_lookup():
    assert language_group("de", "family") == "Indo-European" and language_group("de", "genus") == "Germanic"
    assert language_group("ja", "script") == "Jpan" and language_group("ru", "script") == "Cyrl"
    assert language_group("en", "resource") == "class 5" and language_group("te", "resource") == "class 1"
    assert language_group("sw", "resource_level") == "low" and language_group("ko", "resource_level") == "mid"
    assert language_group("zh-Hans", "family") == "Sino-Tibetan" and base_code("pt_BR") == "pt"
    assert language_group("xx", "family") == "unknown" and language_group("xx", "language") == "xx"
    assert resource_level(5) == "high" and resource_level(0) == "low"
    for code, info in LANGUAGES.items():
        assert len(code) == 2 and 0 <= info.resource <= 5 and len(info.script) == 4, code
    with pytest.raises(MlirkitError, match="unknown group key"):
        language_group("en", "colour")


PER_QUERY = {"run": {"ndcg@20": {"q_de1": 1.0, "q_de2": 0.0, "q_de3": 0.5, "q_fr": 0.2, "q_ja": 0.9, "q_sw": 0.4}}}
LANGS = {"q_de1": "de", "q_de2": "de", "q_de3": "de", "q_fr": "fr", "q_ja": "ja", "q_sw": "sw"}


def test_group_scores_macro_over_languages_and_micro_over_queries():
    t = group_scores(PER_QUERY, LANGS, "family")
    ie = t.loc["Indo-European"]
    # macro: mean(mean(de) = 0.5, fr = 0.2) = 0.35 ; micro: mean(1, 0, .5, .2) = 0.425
    assert ie[("run", "ndcg@20")] == pytest.approx(0.35)
    assert ie[("", "languages")] == "de, fr" and ie[("", "queries")] == 4
    assert t.loc["Japonic"][("run", "ndcg@20")] == pytest.approx(0.9)
    micro = group_scores(PER_QUERY, LANGS, "family", micro=True)
    assert micro.loc["Indo-European"][("run", "ndcg@20")] == pytest.approx(0.425)
    r = group_scores(PER_QUERY, LANGS, "resource")
    assert list(r.index) == ["class 5", "class 2"]  # de, fr, ja are class 5; sw class 2
    assert r.loc["class 5"][("run", "ndcg@20")] == pytest.approx(np.mean([0.5, 0.2, 0.9]))
    with pytest.raises(MlirkitError, match="unknown key"):
        group_scores(PER_QUERY, LANGS, "colour")
    with pytest.raises(MlirkitError, match="no query has a known language"):
        group_scores(PER_QUERY, {}, "family")


def _squeeze(text: str) -> str:
    return re.sub(r" +", " ", text)


def test_evaluate_puts_the_group_tables_in_the_result_and_every_report(tmp_path):
    qrels = {q: {"d": 1} for q in LANGS}
    runs = {"run": {q: ({"d": 1.0} if v == 1.0 else {"x": 1.0, "d": 0.5} if v == 0.5 else {"x": 1.0})
                    for q, v in {"q_de1": 1.0, "q_de2": 0.0, "q_de3": 0.5, "q_fr": 0.5, "q_ja": 1.0, "q_sw": 0.0}.items()}}
    r = evaluate(qrels, runs, ["mrr@10"], query_langs=LANGS, significance=None, group_by=["family", "resource_level"])
    assert list(r.language_groups) == ["family", "resource_level"]
    # Indo-European: macro over de (mean 0.5) and fr (0.5) = 0.5 ; over queries (1 + 0 + .5 + .5) / 4 = 0.5
    assert r.language_groups["family"].loc["Indo-European", ("run", "mrr@10")] == pytest.approx(0.5)
    md = _squeeze(r.to_markdown())
    assert "**by family (mean over languages)**" in md and "| Indo-European | 0.5000 | de, fr | 4 |" in md
    assert "**by resource_level (mean over languages)**" in md
    data = r.to_dict()["_language_groups"]
    assert data["family"]["Japonic"] == {"languages": ["ja"], "queries": 1, "scores": {"run": {"mrr@10": 1.0}}}
    assert data["resource_level"]["low"]["languages"] == ["sw"]
    tex = r.to_latex()
    assert "by family (mean over languages)" in tex and "Indo-European" in tex
    with pytest.raises(MlirkitError, match="group_by needs query languages"):
        evaluate(qrels, runs, ["mrr@10"], significance=None, group_by=["family"])


def test_cli_group_by_family_and_resource(tmp_path, capsys):
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run({"q1": {"d1": 1.0}, "q2": {"d9": 1.0, "d2": 0.5}, "q3": {"d9": 1.0}}, tmp_path / "a.trec", "a")
    (tmp_path / "topics.tsv").write_text("q1\teins\tde\nq2\tdeux\tfr\nq3\tni\tja\n")
    argv = ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "a.trec"), "--metrics", "mrr@10",
            "--topics", str(tmp_path / "topics.tsv"), "--group-by", "family", "--group-by", "resource",
            "--significance", "none"]
    assert main(argv + ["--output", str(tmp_path / "r.md"), "--output", str(tmp_path / "r.json"),
                        "--output", str(tmp_path / "r.tex")]) == 0
    out = capsys.readouterr().out
    # the report files hold the same tables (they reached only stdout before)
    assert (tmp_path / "r.md").read_text() == out
    out = _squeeze(out)
    assert "**by family (mean over languages)**" in out and "**by resource (mean over languages)**" in out
    # Indo-European = mean(de 1.0, fr 0.5) = 0.75 ; Japonic = 0
    assert "| Indo-European | 0.7500 | de, fr | 2 |" in out and "| Japonic | 0.0000 | ja | 1 |" in out
    assert "| class 5 | 0.5000 | de, fr, ja | 3 |" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["_language_groups"]["family"]["Indo-European"]["scores"] == {"a": {"mrr@10": 0.75}}
    assert data["_language_groups"]["resource"]["class 5"]["queries"] == 3
    assert data["_meta"]["settings"]["group_by"] == ["family", "resource"]
    tex = (tmp_path / "r.tex").read_text()
    assert "by resource (mean over languages)" in tex and "Indo-European & 0.7500 & de, fr & 2" in tex
    assert main(argv + ["--group-micro"]) == 0
    assert "**by family (mean over queries)**" in capsys.readouterr().out
