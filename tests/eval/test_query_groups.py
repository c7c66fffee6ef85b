"""Query groups as the unit of the paired tests: where they come from (topics, rule, file) and what they
change (8 translations of one question are one observation, not 8)."""
from __future__ import annotations

import json
import re

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.cli import main
from mlirkit.eval.query_groups import describe_query_groups, resolve_query_groups, strip_lang, unit_phrase
from mlirkit.io.trec import write_qrels, write_run

LANGS8 = ("ar", "de", "el", "en", "es", "hi", "ru", "zh")


def test_strip_lang_rule_on_the_id_shapes_of_the_bundled_and_upstream_benchmarks():
    assert strip_lang("q/libfoo-dev/de", "de") == "q/libfoo-dev"  # DDTP
    assert strip_lang("de_56beb4343aeaaa14008c925c", "de") == "56beb4343aeaaa14008c925c"  # XQuAD-R, MLQA
    assert strip_lang("pt_q_12", "pt") == "q_12"  # Belebele
    with pytest.raises(MlirkitError, match="query id 'q17' does not start or end with its language 'de'"):
        strip_lang("q17", "de")
    assert resolve_query_groups(["q/a/de", "q/a/fr"], "strip-lang", ["de", "fr"]) == {"q/a/de": "q/a", "q/a/fr": "q/a"}
    with pytest.raises(MlirkitError, match="unknown query-group rule 'strip-lan'.*did you mean: strip-lang"):
        resolve_query_groups(["q"], "strip-lan", ["de"])
    with pytest.raises(MlirkitError, match="needs query languages"):
        resolve_query_groups(["q"], "strip-lang", None)
    with pytest.raises(MlirkitError, match="no query group for 1 of 2 evaluated queries"):
        resolve_query_groups(["a", "b"], {"a": "g"}, None)
    with pytest.raises(MlirkitError, match="non-empty string"):
        resolve_query_groups(["a"], {"a": ""}, None)


def test_description_of_the_unit():
    groups = {"a/de": "a", "a/fr": "a", "b/de": "b"}
    d = describe_query_groups(groups, sorted(groups), "mapping")
    assert d == {"unit": "query group", "source": "mapping", "units": 2, "queries": 3, "sizes": {1: 1, 2: 1}}
    assert unit_phrase(d) == "2 query groups (3 queries, 1-2 per group)"
    assert unit_phrase(describe_query_groups(None, ["a", "b"], None)) == "2 queries"


def test_ddtp_topics_carry_groups_equal_to_the_strip_lang_rule():
    from mlirkit.io.records import ParallelQuery
    from mlirkit.io.topics import read_topics
    from mlirkit.eval.query_groups import topic_groups

    queries = read_topics("mlirkit/ddtp/multi/test")
    assert all(isinstance(q, ParallelQuery) for q in queries)
    groups = topic_groups(queries)
    ids = [q.query_id for q in queries]
    by_rule = resolve_query_groups(ids, "strip-lang", [q.lang for q in queries])
    assert {q: "q/" + g for q, g in groups.items()} == by_rule
    sizes = describe_query_groups(groups, ids, "topics")
    assert sizes["units"] < sizes["queries"] and max(sizes["sizes"]) > 1  # translations share a group


def _translated_fixture(tmp_path, n_questions: int = 12, better: int = 8):
    """12 questions x 8 translations. Every translation of a question has the same outcome: run b finds the
    relevant document at rank 1 where run a has it at rank 2 (questions 0..7), and the reverse (8..11)."""
    qrels, run_a, run_b, topics = {}, {}, {}, []
    for g in range(n_questions):
        for lang in LANGS8:
            qid = f"q/{g:02d}/{lang}"
            qrels[qid] = {f"{g:02d}/{lang}": 1}
            first, second = {f"{g:02d}/{lang}": 2.0, "noise": 1.0}, {"noise": 2.0, f"{g:02d}/{lang}": 1.0}
            run_a[qid], run_b[qid] = (second, first) if g < better else (first, second)
            topics.append({"_id": qid, "text": f"question {g} in {lang}", "lang": lang, "group_id": f"{g:02d}"})
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run_a, tmp_path / "a.trec", "a")
    write_run(run_b, tmp_path / "b.trec", "b")
    (tmp_path / "topics.jsonl").write_text("".join(json.dumps(t) + "\n" for t in topics))
    return qrels, run_a, run_b


def test_eight_identical_translations_do_not_inflate_significance(tmp_path):
    qrels, run_a, run_b = _translated_fixture(tmp_path)
    runs = {"a": run_a, "b": run_b}
    langs = {q: q.rsplit("/", 1)[1] for q in qrels}
    plain = evaluate(qrels, runs, ["mrr@10"], query_langs=langs, baseline="a").significance[0]
    grouped = evaluate(qrels, runs, ["mrr@10"], query_langs=langs, baseline="a",
                       query_groups="strip-lang").significance[0]
    # per query: 96 differences of +-0.5, 64 positive: |S| >= 32 of 96 fair signs, about p = 0.001
    assert plain.n_units == 96 and plain.p_value < 0.01 and plain.significant
    # per question: 12 differences of +-0.5, 8 positive; exact: P(|2k - 12| >= 4) = 2 * 794 / 4096
    assert grouped.n_units == 12 and grouped.exact and grouped.p_value == pytest.approx(2 * 794 / 4096)
    assert not grouped.significant
    assert grouped.mean_b - grouped.mean_a == pytest.approx(plain.mean_b - plain.mean_a)  # same effect


def test_cli_groups_from_topics_rule_file_and_none(tmp_path, capsys):
    _translated_fixture(tmp_path)
    base = ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"),
            "--metrics", "mrr@10", "--topics", str(tmp_path / "topics.jsonl"), "--baseline", "a"]

    def run(*extra):
        assert main(base + list(extra)) == 0
        return re.sub(r" +", " ", capsys.readouterr().out)

    auto = run("--output", str(tmp_path / "r.json"), "--output", str(tmp_path / "r.tex"))  # the topics' group_id
    assert "Fisher's randomization test over 12 query groups (96 queries, 8 per group)" in auto
    assert "| mrr@10 | a | b | 12 | 96 |" in auto and "| 0.388 | 0.388 | no |" in auto
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["_meta"]["info"]["test_unit"] == {"unit": "query group", "source": "mapping", "units": 12,
                                                  "queries": 96, "sizes": {"8": 12}}
    c = data["_significance"][0]
    assert (c["n_units"], c["unit"], c["exact"], c["permutations"]) == (12, "query group", True, 4096)
    assert "over 12 query groups (96 queries, 8 per group)" in (tmp_path / "r.tex").read_text()
    assert run("--query-groups", "strip-lang") == auto
    (tmp_path / "groups.tsv").write_text("".join(f"q/{g:02d}/{la}\tquestion-{g}\n" for g in range(12) for la in LANGS8))
    assert run("--query-groups", str(tmp_path / "groups.tsv")) == auto
    none = run("--query-groups", "none")
    assert "over 96 queries" in none and "| mrr@10 | a | b | 96 | 96 |" in none and "| yes |" in none
    assert run_cli(main, base + ["--query-groups", "strip-lnag"]) == 2
    assert "neither a file nor one of auto, none, strip-lang (did you mean: strip-lang?)" in capsys.readouterr().err
    (tmp_path / "short.tsv").write_text("q/00/ar\t0\n")
    assert run_cli(main, base + ["--query-groups", str(tmp_path / "short.tsv")]) == 2
    assert "no query group for 95 of 96 evaluated queries" in capsys.readouterr().err


def test_ranx_report_says_the_unit(tmp_path):
    qrels, run_a, run_b = _translated_fixture(tmp_path)
    r = evaluate(qrels, {"a": run_a, "b": run_b}, ["mrr@10"], query_langs={q: q[-2:] for q in qrels},
                 query_groups="strip-lang")
    report = r.to_ranx_report()
    assert "over 12 query groups (96 queries, 8 per group)" in report.to_latex()
    assert report.to_dict()["test_unit"]["units"] == 12
