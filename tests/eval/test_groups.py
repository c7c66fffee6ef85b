"""Per-group tables (--group-by family / resource / ...) and the language metadata table."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.language_metadata import LANGUAGES, base_code, language_group, resource_level
from mlirkit.eval.cli import main
from mlirkit.eval.groups import group_scores, group_table_markdown
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
    md = group_table_markdown(r)
    assert md.startswith("| resource | run ndcg@20 | languages | queries |") and "| class 2 | 0.4000 | sw | 1 |" in md
    with pytest.raises(MlirkitError, match="unknown key"):
        group_scores(PER_QUERY, LANGS, "colour")
    with pytest.raises(MlirkitError, match="no query has a known language"):
        group_scores(PER_QUERY, {}, "family")


def test_cli_group_by_family_and_resource(tmp_path, capsys):
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run({"q1": {"d1": 1.0}, "q2": {"d9": 1.0, "d2": 0.5}, "q3": {"d9": 1.0}}, tmp_path / "a.trec", "a")
    (tmp_path / "topics.tsv").write_text("q1\teins\tde\nq2\tdeux\tfr\nq3\tni\tja\n")
    assert main(["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "a.trec"), "--metrics", "mrr@10",
                 "--topics", str(tmp_path / "topics.tsv"), "--group-by", "family", "--group-by", "resource",
                 "--significance", "none"]) == 0
    out = capsys.readouterr().out
    assert "by family (mean over languages):" in out and "by resource" in out
    # Indo-European = mean(de 1.0, fr 0.5) = 0.75 ; Japonic = 0
    assert "| Indo-European | 0.7500 | de, fr | 2 |" in out and "| Japonic | 0.0000 | ja | 1 |" in out
    assert "| class 5 | 0.5000 | de, fr, ja | 3 |" in out
