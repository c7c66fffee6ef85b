"""Runs and qrels that do not belong together are refused before anything is scored (mlirkit.eval.belonging):
qrels of another collection (no query in common), a run searched with one language's topics scored against
another language's qrels (its provenance sidecar names the topics), a run of another collection (its index's
corpus); each one line and exit 2, with the option that scores anyway; the same rule for fusion's dev qrels."""
from __future__ import annotations

import json

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval import evaluate
from mlirkit.eval.cli import main
from mlirkit.io.trec import write_run
from tests.helpers import assert_refused, assert_usage_error

QRELS = "q1 0 d1 1\nq2 0 d3 1\nq3 0 d2 1\nq4 0 d4 1\n"
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0, "d1": 0.5}, "q3": {"d2": 1.0}, "q4": {"d1": 1.0, "d4": 0.2}}


def _files(tmp_path, qrels=QRELS, run=RUN, provenance=None):
    (tmp_path / "qrels.txt").write_text(qrels, "utf-8")
    write_run(run, tmp_path / "dense.trec", "dense", provenance=provenance)
    return ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "dense.trec"), "--metrics", "ndcg@10",
            "--significance", "none"]


def test_qrels_of_another_collection_are_refused_not_scored(tmp_path, capsys):
    argv = _files(tmp_path, qrels="x1 0 e1 1\nx2 0 e2 1\n")
    line = assert_refused(main, argv, capsys, tmp_path, "run 'dense' has results for 0 of the 2 evaluated queries")
    assert "4 of its 4 queries are not judged there" in line and "--allow-partial-overlap" in line
    with pytest.raises(MlirkitError, match="allow_partial_overlap=True"):  # Python names the keyword
        evaluate(tmp_path / "qrels.txt", tmp_path / "dense.trec", ["ndcg@10"])


def test_a_run_of_half_the_queries_is_scored_fewer_is_refused(tmp_path, capsys):
    half = {q: RUN[q] for q in ("q1", "q2")}
    assert evaluate(QRELS_DICT, {"r": half}, ["ndcg@10"], significance=None).info["queries_evaluated"] == 4
    one = {"q1": RUN["q1"], "q9": {"d1": 1.0}}
    with pytest.raises(MlirkitError, match=r"results for 1 of the 4 evaluated queries of the qrels \(25\.0 %; 1 of "
                                           r"its 2 queries are not judged there, e\.g\. 'q9'\)"):
        evaluate(QRELS_DICT, {"r": one}, ["ndcg@10"], significance=None)
    empty_lists = {q: {} for q in RUN}  # queries listed without results do not count
    with pytest.raises(MlirkitError, match="results for 0 of the 4"):
        evaluate(QRELS_DICT, {"r": empty_lists}, ["ndcg@10"], significance=None)


QRELS_DICT = {"q1": {"d1": 1}, "q2": {"d3": 1}, "q3": {"d2": 1}, "q4": {"d4": 1}}


def test_allow_partial_overlap_scores_with_a_warning(tmp_path, capsys, caplog):
    from mlirkit.base.cli import run_cli

    # Python first: a CLI run in this process configures the mlirkit logger (its own stderr handler, not
    # propagated to caplog's) for the rest of the test
    result = evaluate(QRELS_DICT | {f"x{i}": {f"e{i}": 1} for i in range(1, 6)}, {"dense": RUN}, ["ndcg@10"],
                      significance=None, allow_partial_overlap=True)
    assert result.value("dense", "ndcg@10") == pytest.approx((3 + 1 / 1.584962500721156) / 9)
    assert "going on (allow_partial_overlap=True)" in caplog.text
    argv = _files(tmp_path, qrels=QRELS + "x1 0 e1 1\nx2 0 e2 1\nx3 0 e3 1\nx4 0 e4 1\nx5 0 e5 1\n")
    assert_refused(main, argv, capsys, tmp_path, "results for 4 of the 9 evaluated queries")
    assert run_cli(main, [*argv, "--allow-partial-overlap"]) == 0
    out, err = capsys.readouterr()
    assert "| dense | 0.4034" in out  # (1 + 1 + 1 + 1/log2(3)) / 9: the 5 queries without results score 0
    assert "going on (--allow-partial-overlap)" in err


@pytest.fixture(scope="module")
def xquad_zh_run(tmp_path_factory):
    """A run of the Chinese XQuAD-R questions (ids shared by every language), its sidecar naming its topics."""
    from mlirkit.io.qrels import read_qrels

    root = tmp_path_factory.mktemp("xq")
    qrels = read_qrels("mlirkit/xquad-r/zh")
    run = {q: {d: 1.0 / (i + 1) for i, d in enumerate(sorted(docs)[:3])} for q, docs in qrels.items()}
    write_run(run, root / "zh.trec", "zh", provenance={"topics": {"source": "mlirkit/xquad-r/zh"}})
    return root / "zh.trec"


def test_a_run_searched_with_other_topics_is_refused(xquad_zh_run, tmp_path, capsys):
    argv = ["--qrels", "mlirkit/xquad-r/de", "--runs", str(xquad_zh_run), "--metrics", "ndcg@10",
            "--significance", "none"]
    line = assert_refused(main, argv, capsys, tmp_path, "run 'zh' was searched with the topics mlirkit/xquad-r/zh")
    assert "not with the queries of the qrels mlirkit/xquad-r/de: 1190 of the queries they share have another text" in line
    assert "zh.trec.provenance.json" in line and "--allow-provenance-mismatch" in line
    with pytest.raises(MlirkitError, match="allow_provenance_mismatch=True"):
        evaluate("mlirkit/xquad-r/de", [str(xquad_zh_run)], ["ndcg@10"], significance=None)
    # its own topics' qrels, and the qrels with the flag, score it
    from mlirkit.base.cli import run_cli

    assert run_cli(main, ["--qrels", "mlirkit/xquad-r/zh", *argv[2:]]) == 0
    assert run_cli(main, [*argv, "--allow-provenance-mismatch"]) == 0
    assert evaluate("mlirkit/xquad-r/de", [str(xquad_zh_run)], ["ndcg@10"], significance=None,
                    allow_provenance_mismatch=True).value("zh", "ndcg@10") > 0


def test_topics_file_recorded_with_its_hash_is_compared_and_a_changed_one_is_not(tmp_path, capsys):
    from mlirkit.io.files import file_sha256
    from mlirkit.io.topics import read_topics

    topics = tmp_path / "topics.tsv"
    zh = {q.query_id: q.text for q in read_topics("mlirkit/xquad-r/zh")}
    topics.write_text("".join(f"{q}\t{t}\tzh\n" for q, t in zh.items()), "utf-8")
    run = {q: {"zh_0_0": 1.0} for q in zh}
    record = {"topics": {"path": str(topics), "sha256": file_sha256(topics)}}
    argv = _files(tmp_path, run=run, provenance=record)
    argv[1] = "mlirkit/xquad-r/en"
    capsys.readouterr()
    assert_refused(main, argv, capsys, tmp_path, f"searched with the topics {topics}")
    topics.write_text(topics.read_text("utf-8") + "extra\tone more\tzh\n", "utf-8")  # not the file it was searched with
    from mlirkit.base.cli import run_cli

    assert run_cli(main, argv) == 0


def test_a_run_of_another_collection_is_refused(tmp_path, capsys):
    """A run ranked on DDTP's 10,887 documents, scored with the qrels of the 913-document non-parallel DDTP:
    same query ids, relevant documents among the run's, but the run ranks documents that collection lacks."""
    from mlirkit.io.files import file_sha256
    from mlirkit.io.qrels import read_qrels

    index = tmp_path / "index"
    index.mkdir()
    (index / "meta.json").write_text(json.dumps({"format": "mlirkit-dense-index", "corpus": "mlirkit/ddtp/multi"}))
    qrels = read_qrels("mlirkit/ddtp/en/test")
    run = {q: {d: 1.0 / (i + 1) for i, d in enumerate(sorted(docs))} for q, docs in qrels.items()}
    record = {"index": {"path": str(index), "meta_sha256": file_sha256(index / "meta.json")}}
    write_run(run, tmp_path / "ddtp.trec", "ddtp", provenance=record)
    argv = ["--qrels", "mlirkit/ddtp-nonparallel/en/test", "--runs", str(tmp_path / "ddtp.trec"), "--metrics",
            "ndcg@10", "--significance", "none"]
    capsys.readouterr()
    line = assert_refused(main, argv, capsys, tmp_path, "run 'ddtp' ranks documents of the collection mlirkit/ddtp/multi")
    assert "not in the collection of the qrels mlirkit/ddtp-nonparallel/en/test" in line
    from mlirkit.base.cli import run_cli

    assert run_cli(main, ["--qrels", "mlirkit/ddtp/en/test", *argv[2:]]) == 0  # the same documents under another id


def test_seed_must_be_non_negative(tmp_path, capsys):
    argv = _files(tmp_path)
    assert_usage_error(main, [*argv, "--significance", "fisher", "--seed", "-1"], capsys, tmp_path, "--seed")
    with pytest.raises(MlirkitError, match="seed must be an integer >= 0, got -1"):
        evaluate(QRELS_DICT, {"a": RUN, "b": RUN}, ["ndcg@10"], seed=-1)
