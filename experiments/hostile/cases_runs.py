"""Attacks on evaluation and its inputs (PEER/MRC, ``eval --mrc-from-index`` and the run's provenance sidecar),
``benchmark --check`` and its report, ``train CONFIG`` with ``--set``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from experiments.hostile.harness import Case, Outcome, cli

__all__ = ["CASES"]


# --------------------------------------------------------------------------------------- PEER / MRC
def _eval(ws, *extra, runs=None):
    from mlirkit.eval.cli import main

    return main, ["--qrels", str(ws["root"] / "qrels.txt"), "--runs", str(runs or ws["root"] / "run.trec"),
                  "--significance", "none", *extra]


def metric_case(metrics, *needles, expected=None, note=""):
    def attack(ws):
        main, argv = _eval(ws, "--metrics", *metrics, "--default-lang", "en", "--doc-langs", str(ws["root"] / "index"))
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("PEER/MRC", f"--metrics {' '.join(metrics)}", attack,
                expected or f"exit 2, one line naming {', '.join(needles)}", note)


def _run_copy(ws, edit=None, sidecar=None):
    """The workspace's run and sidecar copied into the case's folder, the run edited (lines) and the sidecar
    changed (a function of its dict)."""
    run, side = ws["tmp"] / "run.trec", ws["tmp"] / "run.trec.provenance.json"
    lines = (ws["root"] / "run.trec").read_text().splitlines(keepends=True)
    run.write_text("".join(edit(lines) if edit else lines))
    data = json.loads((ws["root"] / "run.trec.provenance.json").read_text())
    if edit:  # the sidecar records the run's sha256: an edited run is another run
        import hashlib

        data["run_sha256"] = hashlib.sha256(run.read_bytes()).hexdigest()
    result = sidecar(data) if sidecar else data
    side.write_text(result if isinstance(result, str) else json.dumps(result))
    return run


def mrc_case(name, edit, sidecar, *needles, expected=None, note="", expect_code=2):
    def attack(ws):
        run = _run_copy(ws, edit, sidecar)
        main, argv = _eval(ws, "--metrics", "mrc@3", "--topics", str(ws["root"] / "topics.jsonl"), "--mrc-from-index",
                           "--default-lang", "en", "--doc-langs", str(ws["root"] / "index"), runs=run)
        return cli(main, argv, *needles, expect_code=expect_code)
    return Case("eval --mrc-from-index", name, attack, expected or f"exit 2, one line naming {', '.join(needles)}",
                note)


def _without(key, sub=None):
    def change(d):
        (d[sub] if sub else d).pop(key)
        return d
    return change


def _set(value, key, sub=None):
    def change(d):
        (d[sub] if sub else d)[key] = value
        return d
    return change


def _other_index(ws):
    """An index of another corpus (the texts rotated by one), its meta_sha256 recorded honestly."""
    from mlirkit.base.cli import run_cli
    from mlirkit.encode.cli import main
    from mlirkit.io.files import file_sha256

    other = ws["root"] / "other-index"
    if not other.is_dir():
        docs = [json.loads(x) for x in (ws["root"] / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
        texts = [d["text"] for d in docs]
        for d, t in zip(docs, texts[1:] + texts[:1]):
            d["text"] = t
        corpus = ws["root"] / "other.jsonl"
        corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
        assert run_cli(main, ["--corpus", str(corpus), "--output", str(other), *ws["enc"], "--save-embeddings",
                              "--quiet"]) == 0
    return str(other), file_sha256(other / "meta.json")


def _forged_index(ws):
    path, sha = _other_index(ws)

    def change(d):
        d["index"] = {"path": path, "meta_sha256": sha}
        return d
    return change


def _dev_zero_index(d):
    d["index"]["path"] = "/dev/zero"
    return d


def _swap_top_two(lines):
    """The first query's top two documents swapped (scores kept in order): another ranking."""
    first = [i for i, line in enumerate(lines) if line.startswith("q1-en ")][:2]
    a, b = (lines[i].split() for i in first)
    a[2], b[2] = b[2], a[2]
    lines[first[0]], lines[first[1]] = " ".join(a) + "\n", " ".join(b) + "\n"
    return lines


MRC = [
    mrc_case("the workspace's own run (control)", None, None, expected="exit 0", expect_code=0),
    mrc_case("sidecar without index.meta_sha256", None, _without("meta_sha256", "index"), "meta_sha256"),
    mrc_case("sidecar with a forged meta_sha256", None, _set("0" * 64, "meta_sha256", "index"), "sha256 differs"),
    mrc_case("sidecar naming another index, its sha256 honest", None, None, "top", note="built per case",
             expected="exit 2, one line: the recomputed top k is not the run's"),
    mrc_case("sidecar naming /dev/zero as the index", None, _dev_zero_index, "/dev/zero"),
    mrc_case("sidecar nested 100,000 deep", None, lambda d: "[" * 100_000 + "]" * 100_000, "provenance"),
    mrc_case("sidecar not JSON", None, lambda d: "{not json", "provenance"),
    mrc_case("sidecar hits = -1", None, _set(-1, "hits"), "hits"),
    mrc_case("sidecar encoder name a list", None, lambda d: {**d, "encoder": {**d["encoder"], "name": ["x"]}},
             "encoder"),
    mrc_case("run edited after the search (sha256 left)", _swap_top_two, None, "was not searched",
             expected="exit 2, one line: the run's top k is not what its searcher ranks"),
]
# the forged-index case needs the workspace: its sidecar change is built when it runs
MRC[3] = Case("eval --mrc-from-index", "sidecar naming another index, its sha256 honest",
              lambda ws: mrc_case("", None, _forged_index(ws), "was not searched").attack(ws),
              "exit 2, one line: the recomputed top k is not the run's")


def _run_without_sidecar(ws):
    run = ws["tmp"] / "bare.trec"
    shutil.copyfile(ws["root"] / "run.trec", run)
    main, argv = _eval(ws, "--metrics", "mrc@3", "--topics", str(ws["root"] / "topics.jsonl"), "--mrc-from-index",
                       runs=run)
    return cli(main, argv, "bare.trec")


MRC.append(Case("eval --mrc-from-index", "a run without a sidecar", _run_without_sidecar,
                "exit 2, one line naming the run"))

METRICS = [
    metric_case(["peer@0"], "peer@0"),
    metric_case(["mrc@-1"], "mrc@-1"),
    metric_case(["peer@"], "peer@"),
    metric_case(["peer@abc"], "peer@abc"),
    metric_case(["mrc@1e3"], "mrc@1e3"),
    metric_case(["ndcg@99999999999999999999"], "ndcg@"),
    metric_case(["peer@3", "peer@3"], "peer@3"),
    metric_case(["ndgc@3"], "ndgc@3", "did you mean"),
]


def _peer_nothing_to_test(ws):
    """Every relevant document of the only query in the query's own language: PEER has nothing to test."""
    from mlirkit.eval.cli import main

    qrels = ws["tmp"] / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = ws["tmp"] / "r.trec"
    run.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    argv = ["--qrels", str(qrels), "--runs", str(run), "--metrics", "peer@2", "--significance", "none",
            "--default-lang", "en", "--doc-langs", str(ws["root"] / "index")]
    outcome = cli(main, argv, expect_code=0)
    return outcome


METRICS.append(Case("PEER/MRC", "PEER of a query with nothing to test (one language relevant)", _peer_nothing_to_test,
                    "exit 0, the query left out of PEER's mean (said, not scored 0 or 1)",
                    "the issue's example of a judgement call"))


# --------------------------------------------------------------------------------------- benchmark --check
def _report_from_reference(part="ddtp") -> dict:
    """A report whose ``part`` figures are exactly the quick reference's (what ``--check`` passes)."""
    import mlirkit.benchmark.check as check

    ref = json.loads((check.reference_dir(True) / f"{part}.json").read_text())
    encoders: dict = {}
    for cell, entry in ref["cells"].items():
        enc, system, metric = cell.split(" | ")
        e = encoders.setdefault(enc, {"test": {}, "main_runs": [], "chosen_alpha": {}})
        if metric == "alpha":
            e["chosen_alpha"][system.split("-", 1)[1]] = entry["value"]
        else:
            e["test"].setdefault(system, {})[metric] = entry["value"]
    metrics = sorted({c.split(" | ")[2] for c in ref["cells"]} - {"alpha"})
    for enc, e in encoders.items():
        for system in list(e["test"]):
            alpha = e["chosen_alpha"].get(system.split("-", 1)[1]) if system != "base" else None
            run = system if alpha is None else f"{system}@{alpha}"
            e["test"][run] = e["test"].pop(system)
            e["main_runs"].append(run)
    return {"config": {"metrics": metrics, "quick": True, "benchmark": "mlirkit/ddtp"}, "encoders": encoders}


def check_case(name, change, *needles, expect_code=2, expected=None, note=""):
    def attack(ws):
        from mlirkit.benchmark.cli import main

        out = ws["tmp"] / "bench"
        out.mkdir()
        report = change(_report_from_reference()) if change else _report_from_reference()
        (out / "report.json").write_text(report if isinstance(report, str) else json.dumps(report))
        code_ok = expect_code
        if expect_code == 1:  # a check that fails: exit 1 and the lines say why (not a one-line input error)
            import contextlib
            import io

            from mlirkit.base.cli import run_cli

            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                code = run_cli(main, ["--check", str(out)])
            text = buf.getvalue()
            ok = code == 1 and all(n in text for n in needles)
            last = [line for line in text.splitlines() if "FAILED" in line][:1]
            return Outcome(ok, f"exit {code}: {(last or [text.strip()[-120:]])[0][:160]}")
        return cli(main, ["--check", str(out)], *needles, expect_code=code_ok)
    return Case("benchmark --check", name, attack, expected or (
        f"exit 1, the failure says {', '.join(needles)}" if expect_code == 1 else
        f"exit {expect_code}" + (f", one line naming {', '.join(needles)}" if needles else "")), note)


def _rename_encoder(r):
    r["encoders"] = {"my-encoder": next(iter(r["encoders"].values()))}
    return r


def _nan_cell(r):
    enc = next(iter(r["encoders"].values()))
    enc["test"]["base"]["ndcg@20"] = float("nan")
    return json.dumps(r)  # json writes NaN


def _string_cell(r):
    next(iter(r["encoders"].values()))["test"]["base"]["ndcg@20"] = "abc"
    return r


def _drop_cell(r):
    next(iter(r["encoders"].values()))["test"]["base"].pop("ndcg@20")
    return r


CHECK = [
    check_case("the reference's own figures (control)", None, expect_code=0),
    check_case("a report with no parts", lambda r: {"config": {"metrics": [], "quick": True}}, "nothing was compared",
               expect_code=1),
    check_case("the encoder renamed", _rename_encoder, "no figures of it", expect_code=1),
    check_case("a cell NaN", _nan_cell, "nan", expect_code=1),
    check_case("a cell the string 'abc'", _string_cell, "report.json"),
    check_case("a cell missing", _drop_cell, "missing", expect_code=1),
    check_case("the DDTP part asked for, none in the report", lambda r: {**r, "encoders": {}}, "holds no figures",
               expect_code=1),
    check_case("report.json nested 100,000 deep", lambda r: "[" * 100_000 + "]" * 100_000, "report.json"),
    check_case("report.json a list", lambda r: "[]", "report.json"),
    check_case("report.json not UTF-8", lambda r: b"\xff\xfe{}".decode("latin-1"), "report.json"),
]


def _check_dev_zero(ws):
    from mlirkit.benchmark.cli import main

    out = ws["tmp"] / "bench"
    out.mkdir()
    (out / "report.json").symlink_to("/dev/zero")
    return cli(main, ["--check", str(out)], "report.json")


CHECK.append(Case("benchmark --check", "report.json a symlink to /dev/zero", _check_dev_zero,
                  "exit 2, one line naming report.json (never read without limit)"))


# --------------------------------------------------------------------------------------- train CONFIG + --set
def _train_config(ws, **changes) -> Path:
    cfg = {"backbone": str(ws["model"]), "output_dir": str(ws["tmp"] / "train-out"), "triples": str(ws["tmp"] / "t.jsonl"),
           "parallel": [str(ws["tmp"] / "p.jsonl")], "monolingual": [str(ws["tmp"] / "m.jsonl")], "max_steps": 1}
    cfg.update(changes)
    path = ws["tmp"] / "run.json"
    path.write_text(json.dumps(cfg))
    return path


def train_case(name, sets=(), config=None, *needles, raw=None, note=""):
    def attack(ws):
        from mlirkit.train.cli import main

        if raw is not None:
            path = ws["tmp"] / ("run.yaml" if raw.lstrip().startswith(("!", "a:", "-", "backbone")) else "run.json")
            path.write_text(raw)
        else:
            path = _train_config(ws, **(config or {}))
        argv = [str(path), *[w for s in sets for w in ("--set", s)], "--quiet"]
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("train CONFIG + --set", name, attack, f"exit 2, one line naming {', '.join(needles)}; nothing written",
                note)


_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))

TRAIN = [
    train_case("--set lr=nan", ["lr=nan"], None, "lr"),
    train_case("--set lr=inf", ["lr=inf"], None, "lr"),
    train_case("--set weight_decay=-1", ["weight_decay=-1"], None, "weight_decay"),
    train_case("--set tau_ret=0", ["tau_ret=0"], None, "tau_ret"),
    train_case("--set max_steps=0", ["max_steps=0"], None, "max_steps"),
    train_case("--set max_steps=10**400 (digits)", ["max_steps=" + "1" + "0" * 400], None, "max_steps"),
    train_case("--set lr (no =)", ["lr"], None, "--set"),
    train_case("--set lerning_rate=1", ["lerning_rate=1"], None, "lerning_rate"),
    train_case("--set use_orth=maybe", ["use_orth=maybe"], None, "use_orth"),
    train_case("--set n_retrieval=true", ["n_retrieval=true"], None, "n_retrieval"),
    train_case("config: max_grad_norm NaN (JSON NaN)", (), None, "max_grad_norm",
               raw='{"backbone": "x", "output_dir": "o", "max_grad_norm": NaN}'),
    train_case("config: a JSON list", (), None, "run.json", raw="[1, 2]"),
    train_case("config: YAML !!python/object/apply", (), None, "run.yaml",
               raw="!!python/object/apply:os.system ['touch mlirkit-hostile-pwned']\n"),
    train_case("config: YAML alias bomb (9^9)", (), None, "run.yaml", raw=_BOMB),
    train_case("config: lr given as a string '2e-5'", (), {"lr": "2e-5"}, "lr"),
    train_case("config: seed -1", (), {"seed": -1}, "seed"),
    train_case("config: output_dir a file", (), None, "output_dir"),
]
TRAIN[-1] = Case("train CONFIG + --set", "output_dir is an existing file of the user's",
                 lambda ws: _train_output_is_file(ws), "exit 2, one line naming output_dir; the file untouched")


def _train_output_is_file(ws):
    from mlirkit.train.cli import main

    user = ws["tmp"] / "notes.txt"
    user.write_text("mine\n")
    for name in ("t.jsonl", "p.jsonl", "m.jsonl"):
        (ws["tmp"] / name).write_text("")
    path = _train_config(ws, output_dir=str(user))
    return cli(main, [str(path), "--quiet", "--overwrite"], "notes.txt", unchanged=ws["tmp"])


CASES = [*METRICS, *MRC, *CHECK, *TRAIN]
