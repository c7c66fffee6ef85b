"""mlirkit.fuse equals ranx.fuse on the same runs; tuning is ranx.optimize_fusion on the dev runs; bad input
is one line and exit 2 with nothing written."""
from __future__ import annotations

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

from mlirkit.base.cli import run_cli  # noqa: E402
from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.fuse import fuse, tune  # noqa: E402
from mlirkit.fuse.cli import main  # noqa: E402
from mlirkit.io.trec import read_run, write_run  # noqa: E402


def _run(seed: int, n_queries: int = 8, n_docs: int = 30, depth: int = 12) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    return {f"q{q}": {f"d{d}": float(s) for d, s in zip(rng.choice(n_docs, depth, replace=False), rng.normal(size=depth))}
            for q in range(n_queries)}


def _qrels(n_queries: int = 8) -> dict[str, dict[str, int]]:
    rng = np.random.default_rng(7)
    return {f"q{q}": {f"d{d}": 1 for d in rng.choice(30, 4, replace=False)} for q in range(n_queries)}


def _close(ours, theirs) -> None:
    a, b = ours.to_dict(), theirs.to_dict()
    assert a.keys() == b.keys()
    for q in a:
        assert a[q].keys() == b[q].keys(), q
        np.testing.assert_allclose([a[q][d] for d in sorted(a[q])], [b[q][d] for d in sorted(a[q])], rtol=1e-12)


@pytest.mark.parametrize("method,norm,params", [
    ("rrf", "min-max", {}), ("rrf", None, {"k": 10}), ("wsum", "min-max", {"weights": [0.3, 0.7]}),
    ("wsum", "zmuv", {"weights": [0.5, 0.5]}), ("mnz", "max", {}), ("sum", "sum", {}), ("isr", "rank", {}),
])
def test_fuse_equals_ranx_fuse(method, norm, params):
    a, b = _run(1), _run(2)
    ours = fuse([a, b], method=method, norm=norm, params=params)
    theirs = ranx.fuse([ranx.Run(a), ranx.Run(b)], norm=norm, method=method, params=params)
    _close(ours, theirs)


def test_fuse_accepts_ranx_runs_and_three_runs():
    runs = [_run(1), _run(2), _run(3)]
    ours = fuse([ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)], method="wsum", params={"weights": [1, 2, 3]})
    theirs = ranx.fuse([ranx.Run(r) for r in runs], method="wsum", params={"weights": [1.0, 2.0, 3.0]})
    _close(ours, theirs)


def test_tune_is_ranx_optimize_fusion_on_the_dev_runs():
    dev = [_run(11), _run(12)]
    qrels = _qrels()
    ours = tune(qrels, dev, method="wsum", norm="min-max", metric="ndcg@10")
    theirs = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in dev], norm="min-max", method="wsum",
                                  metric="ndcg@10", show_progress=False)
    assert ours == {"weights": list(theirs["weights"])}
    assert tune(qrels, dev, method="rrf", norm=None, metric="ndcg@10") == \
        ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in dev], norm=None, method="rrf",
                             metric="ndcg@10", show_progress=False)


def test_cli_writes_ranx_fusion_and_tunes_on_dev(tmp_path):
    paths = {}
    for name, run in {"a": _run(1), "b": _run(2), "a_dev": _run(11), "b_dev": _run(12)}.items():
        paths[name] = tmp_path / f"{name}.trec"
        write_run(run, paths[name], tag=name)
    qrels = tmp_path / "dev.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in _qrels().items() for d, r in docs.items()))
    out = tmp_path / "fused.trec"
    assert main(["--runs", str(paths["a"]), str(paths["b"]), "--method", "wsum", "--tune-runs", str(paths["a_dev"]),
                 str(paths["b_dev"]), "--qrels", str(qrels), "--metric", "ndcg@10", "--output", str(out),
                 "--quiet"]) == 0
    weights = tune(read_qrels_file(qrels), [_run(11), _run(12)], method="wsum", metric="ndcg@10")["weights"]
    expected = ranx.fuse([ranx.Run(_run(1)), ranx.Run(_run(2))], method="wsum", params={"weights": weights})
    got = read_run(out)
    for q, docs in expected.to_dict().items():
        top = sorted(docs.items(), key=lambda x: (-x[1], x[0]))
        assert [d for d, _ in sorted(got[q].items(), key=lambda x: (-x[1], x[0]))] == [d for d, _ in top]
        np.testing.assert_allclose([got[q][d] for d, _ in top], [s for _, s in top], rtol=1e-12)
    # the fused run says where it came from: the method, its tuned weights, the input runs with their own
    # sidecars, and what the weights were tuned on
    from mlirkit.io.provenance import read_sidecar

    side = read_sidecar(out)
    assert side["fusion"]["method"] == "wsum" and side["fusion"]["params"] == {"weights": weights}
    assert side["command"][:5] == ["python", "-m", "mlirkit.fuse", "--runs", str(paths["a"])]  # main's own argv
    assert [r["path"] for r in side["runs"]] == [str(paths["a"]), str(paths["b"])]
    assert all(r["provenance"]["run_sha256"] == r["sha256"] for r in side["runs"])
    assert [r["path"] for r in side["tuned"]["on"]] == [str(paths["a_dev"]), str(paths["b_dev"])]
    assert side["tuned"]["qrels"]["path"] == str(qrels) and side["tuned"]["metric"] == "ndcg@10"
    # a shell glob lists the sidecars beside the runs: they are skipped, not read as runs
    from mlirkit.io.provenance import sidecar_path

    again = tmp_path / "again.trec"
    assert main(["--runs", str(paths["a"]), str(sidecar_path(paths["a"])), str(paths["b"]),
                 str(sidecar_path(paths["b"])), "--method", "wsum", "--weights", "0.3", "0.7",
                 "--output", str(again), "--quiet"]) == 0
    assert [r["path"] for r in read_sidecar(again)["runs"]] == [str(paths["a"]), str(paths["b"])]


def read_qrels_file(path):
    from mlirkit.io.trec import read_qrels

    return read_qrels(path)


@pytest.mark.parametrize("case,message", [
    ("other-ids", "query ids differ from"),
    ("empty", "empty run"),
    ("unknown-method", "unknown fusion method 'rff' (did you mean: rrf?)"),
    ("unknown-norm", "unknown score normalisation 'minmax' (did you mean: min-max"),
    ("no-weights", "wsum needs one weight per run"),
    ("weights-count", "3 weights for 2 runs"),
    ("one-run", "at least two runs"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, case, message):
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    write_run(_run(1), a, tag="a")
    run_b = _run(2)
    if case == "other-ids":
        run_b = {q: d for q, d in run_b.items() if q != "q3"}
    write_run(run_b, b, tag="b")
    if case == "empty":
        b.write_text("")
    args = {"unknown-method": ["--method", "rff"], "unknown-norm": ["--norm", "minmax"],
            "no-weights": ["--method", "wsum"], "weights-count": ["--method", "wsum", "--weights", "1", "1", "1"]}
    runs = [str(a)] if case == "one-run" else [str(a), str(b)]
    out = tmp_path / "out.trec"
    assert run_cli(main, ["--runs", *runs, "--output", str(out), "--quiet", *args.get(case, [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".provenance.json")) \
        == ["a.trec", "b.trec"]  # (the inputs and their provenance sidecars)


def test_allow_missing_fuses_a_query_from_the_runs_that_list_it():
    a, b = _run(1), _run(2)
    del b["q3"]
    with pytest.raises(MlirkitError, match="q3"):
        fuse([a, b], method="rrf")
    fused = fuse([a, b], method="rrf", allow_missing=True).to_dict()
    alone = ranx.fuse([ranx.Run({"q3": a["q3"]}), ranx.Run({"q3": a["q3"]})], method="rrf").to_dict()["q3"]
    assert fused["q3"].keys() == a["q3"].keys()
    np.testing.assert_allclose([fused["q3"][d] for d in sorted(a["q3"])], [alone[d] / 2 for d in sorted(a["q3"])])


def _two_runs(tmp_path):
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    write_run(_run(1), a, tag="a")
    write_run(_run(2), b, tag="b")
    (tmp_path / "dev.qrels").write_text("".join(f"{q} 0 {d} 1\n" for q, docs in _qrels().items() for d in docs))
    return [str(a), str(b)]


TUNE = ["--tune-runs", "{a}", "{b}", "--qrels", "{qrels}"]


@pytest.mark.parametrize("args,message", [
    (["--method", "rrf", "--param", "k=-1.5"], "rrf: --param k=-1.5 is out of range: k >= 0"),
    (["--method", "rrf", "--param", "k=nan"], "rrf: k must be a finite number, got nan"),
    (["--method", "rbc", "--param", "phi=1"], "rbc: --param phi=1 is out of range: 0 < phi < 1"),
    (["--method", "logn_isr", "--param", "sigma=2"], "logn_isr: --param sigma=2 is out of range: 0 <= sigma <= 1"),
    (["--method", "gmnz", "--param", "gamma=-1"], "gmnz: --param gamma=-1 is out of range: gamma >= 0"),
    (["--method", "wsum", "--weights", "1", "-1"], "wsum: --weights 1 -1: each weight must be a number >= 0"),
    (["--method", "wsum", "--weights", "0", "0"], "each weight must be a number >= 0 and one at least > 0"),
    (["--method", "wsum", *TUNE, "--metric", "bogus@5"], "--metric: unknown metric 'bogus@5'"),
    (["--method", "wsum", *TUNE, "--metric", "tlr@10"], "fusion is tuned with ranx's metrics"),
    (["--method", "wsum", *TUNE, "--step", "0"], "--step 0: wsum's grid takes a step in (0, 1]"),
    (["--method", "wsum", *TUNE, "--step", "-0.1"], "--step -0.1: wsum's grid takes a step in (0, 1]"),
    (["--method", "rrf", *TUNE, "--step", "0.5"], "--step 0.5: rrf's grid takes an integer step >= 1"),
    (["--method", "probfuse", *TUNE, "--step", "0.1"], "--step: probfuse has no grid to step through"),
    # ranx's grid of a step that does not divide 1 holds no weights summing to 1 ('0 weights for 2 runs') and leaves
    # a parameter's range (logn_isr's sigma = 1.2: ranx's AssertionError); below 1e-4 str(step) has no decimals
    (["--method", "wsum", *TUNE, "--step", "0.3"], "--step 0.3: wsum's grid takes a step in (0, 1] that divides 1"),
    (["--method", "logn_isr", *TUNE, "--step", "0.3"], "--step 0.3: logn_isr's grid takes a step in (0, 1] that divides"),
    (["--method", "gmnz", *TUNE, "--step", "0.00001"], "--step 1e-05: gmnz's grid takes a step in (0, 1] that divides 1"),
    (["--method", "wsum", *TUNE, "--step", "0.0001"], "--step 0.0001: ranx's weight grid for 2 runs goes through "
                                                       "(1/step + 1)^2 = 1e+08 combinations"),
])
def test_bad_parameters_are_one_line_naming_the_range(tmp_path, capsys, args, message):
    from tests.helpers import assert_refused

    a, b = _two_runs(tmp_path)
    args = [x.format(a=a, b=b, qrels=tmp_path / "dev.qrels") for x in args]
    assert_refused(main, ["--runs", a, b, "--output", str(tmp_path / "out.trec"), "--quiet", *args], capsys,
                   tmp_path, message)


def test_python_refuses_the_same_parameters():
    with pytest.raises(MlirkitError, match=r"rrf: params=\{'k': -1.5\} is out of range: k >= 0"):
        fuse([_run(1), _run(2)], method="rrf", params={"k": -1.5})
    with pytest.raises(MlirkitError, match=r"step 0: wsum's grid"):
        tune(_qrels(), [_run(11), _run(12)], method="wsum", step=0)


@pytest.mark.parametrize("method,params", [("rrf", {"k": 0}), ("rbc", {"phi": 0.8}), ("gmnz", {"gamma": 0.5}),
                                           ("logn_isr", {"sigma": 1}), ("wsum", {"weights": [0, 1]})])
def test_parameters_in_range_are_ranx_fusion(method, params):
    a, b = _run(1), _run(2)
    ours = fuse([a, b], method=method, norm="min-max", params=params)
    _close(ours, ranx.fuse([ranx.Run(a), ranx.Run(b)], norm="min-max", method=method, params=params))


def test_a_valid_step_is_ranx_optimize_fusion_with_that_step():
    dev, qrels = [_run(11), _run(12)], _qrels()
    theirs = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in dev], norm="min-max", method="wsum",
                                  metric="ndcg@10", step=0.25, show_progress=False)
    assert tune(qrels, dev, method="wsum", metric="ndcg@10", step=0.25) == {"weights": list(theirs["weights"])}


@pytest.mark.parametrize("method", ["gmnz", "logn_isr", "rbc"])
def test_a_scalar_parameter_is_tuned_as_ranx_optimize_fusion_over_its_range(method):
    """At ranx's default grid (0.01 .. 1) the tuned value is ranx.optimize_fusion's (rbc's phi = 1, out of its
    range, left out); at a step whose ranx grid leaves the range (logn_isr at 0.25 tries sigma = 1.01: ranx's
    AssertionError) every value tried is in range, and the choice is the best of them."""
    from mlirkit.fuse.fusion import scalar_grid

    dev, qrels = [_run(11), _run(12)], _qrels()
    theirs, report = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in dev], norm="min-max",
                                          method=method, metric="ndcg@10", show_progress=False,
                                          return_optimization_report=True)
    param = {"gmnz": "gamma", "logn_isr": "sigma", "rbc": "phi"}[method]
    if method == "rbc":  # ranx picks phi = 1 here (every score 0: a ranking by nothing), out of rbc's range
        assert theirs[param] == 1.0
        in_range = {float(v): score for v, score in zip(report.configs, report.results) if float(v) < 1}
        best = max(in_range.values())
        theirs = {param: [v for v, score in in_range.items() if score == best][-1]}  # ranx's >=: the last best
    assert tune(qrels, dev, method=method, metric="ndcg@10") == {param: theirs[param]}
    assert scalar_grid(method, None) == [i / 100 for i in range(1, 101 if method != "rbc" else 100)]
    assert scalar_grid(method, 0.25) == [0.25, 0.5, 0.75] + ([1.0] if method != "rbc" else [])
    if method == "logn_isr":
        with pytest.raises(AssertionError, match="sigma"):  # ranx's own grid at that step
            ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in dev], norm="min-max", method=method,
                                 metric="ndcg@10", step=0.25, show_progress=False)
    chosen = tune(qrels, dev, method=method, metric="ndcg@10", step=0.25)[param]
    scores = {v: ranx.evaluate(ranx.Qrels(qrels), fuse(dev, method=method, params={param: v}), "ndcg@10")
              for v in scalar_grid(method, 0.25)}
    assert scores[chosen] == max(scores.values())


def test_dev_qrels_that_barely_overlap_the_dev_runs_are_refused(tmp_path, capsys):
    from tests.helpers import assert_refused

    a, b = _two_runs(tmp_path)
    (tmp_path / "dev.qrels").write_text("q1 0 d1 1\nx1 0 d1 1\nx2 0 d2 1\n")  # 1 of the 8 dev queries judged
    argv = ["--runs", a, b, "--method", "wsum", "--tune-runs", a, b, "--qrels", str(tmp_path / "dev.qrels"),
            "--output", str(tmp_path / "out.trec"), "--quiet"]
    line = assert_refused(main, argv, capsys, tmp_path, "the qrels judge 1 of the 8 queries of the dev runs (12.5 %)")
    assert "--allow-partial-overlap" in line
    assert run_cli(main, [*argv, "--allow-partial-overlap"]) == 0
    with pytest.raises(MlirkitError, match="allow_partial_overlap=True"):
        tune({"q1": {"d1": 1}}, [_run(11), _run(12)], method="wsum")


def test_dev_runs_searched_with_other_topics_are_refused(tmp_path, capsys):
    """The provenance rule of mlirkit.eval for the dev qrels: German XQuAD-R qrels, dev runs of the Chinese topics."""
    from mlirkit.io.qrels import read_qrels
    from tests.helpers import assert_refused

    qrels = read_qrels("mlirkit/xquad-r/zh")
    paths = []
    for name, shift in (("a", 0), ("b", 1)):
        run = {q: {d: 1.0 / (i + 1 + shift) for i, d in enumerate(sorted(docs)[:3])} for q, docs in qrels.items()}
        write_run(run, tmp_path / f"{name}.trec", name, provenance={"topics": {"source": "mlirkit/xquad-r/zh"}})
        paths.append(str(tmp_path / f"{name}.trec"))
    capsys.readouterr()
    argv = ["--runs", *paths, "--method", "wsum", "--tune-runs", *paths, "--qrels", "mlirkit/xquad-r/de",
            "--output", str(tmp_path / "out.trec"), "--quiet"]
    assert_refused(main, argv, capsys, tmp_path, "was searched with the topics mlirkit/xquad-r/zh")


def test_tuning_on_the_qrels_of_an_ir_datasets_id_records_the_id(tmp_path, capsys):
    """``--qrels`` takes an ir_datasets id as every mlirkit CLI does; the fused run's provenance names it."""
    from mlirkit.io.provenance import read_sidecar
    from mlirkit.io.qrels import read_qrels

    qrels = read_qrels("mlirkit/xquad-r/de")
    paths = []
    for name, shift in (("a", 0), ("b", 1)):
        run = {q: {d: 1.0 / (i + 1 + shift) for i, d in enumerate(sorted(docs)[:3])} for q, docs in qrels.items()}
        write_run(run, tmp_path / f"{name}.trec", name, provenance={"topics": {"source": "mlirkit/xquad-r/de"}})
        paths.append(str(tmp_path / f"{name}.trec"))
    out = tmp_path / "out.trec"
    assert run_cli(main, ["--runs", *paths, "--method", "wsum", "--tune-runs", *paths, "--qrels", "mlirkit/xquad-r/de",
                          "--output", str(out), "--quiet"]) == 0, capsys.readouterr().err
    assert read_sidecar(out)["tuned"]["qrels"] == {"source": "mlirkit/xquad-r/de"}
