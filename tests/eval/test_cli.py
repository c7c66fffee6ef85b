from __future__ import annotations

import json

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.eval.cli import main, run_names
from mlirkit.eval.inputs import run_name
from mlirkit.base.errors import MlirkitError
from mlirkit.io.trec import write_qrels, write_run


@pytest.fixture()
def files(tmp_path):
    qrels = {"q1": {"en1": 1, "de1": 1, "fr1": 1}, "q2": {"en2": 1, "de2": 1}}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run({"q1": {"en1": 0.9, "en2": 0.8, "de1": 0.1}, "q2": {"en2": 0.9, "en1": 0.5}}, tmp_path / "base.trec", "b")
    write_run({"q1": {"de1": 0.9, "fr1": 0.8}, "q2": {"de2": 0.9, "en2": 0.5}}, tmp_path / "shift.trec.gz", "s")
    (tmp_path / "langs.tsv").write_text("en1\ten\nen2\ten\nde1\tde\nde2\tde\nfr1\tfr\n")
    (tmp_path / "topics.tsv").write_text("q1\tfirst\ten\nq2\tzweite\tde\n")
    return tmp_path


def test_run_names():
    assert run_name("runs/bm25.trec.gz") == "bm25" and run_name("a.b.trec") == "a.b" and run_name("plain") == "plain"
    with pytest.raises(MlirkitError, match="used twice"):
        run_names(["x/a.trec", "y/a.trec"], None)
    with pytest.raises(MlirkitError, match="2 names for 1 runs"):
        run_names(["a.trec"], ["a", "b"])


def test_cli_end_to_end(files, capsys):
    argv = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "base.trec"), str(files / "shift.trec.gz"),
            "--metrics", "ndcg@20", "recall@2", "tlr@2", "samelang@2", "--doc-langs", str(files / "langs.tsv"),
            "--default-lang", "en", "--output", str(files / "out.json"), "--output", str(files / "out.md"),
            "--significance", "student", "--baseline", "base", "--plot-mix", str(files / "mix")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| base " in out and "tlr@2" in out
    data = json.loads((files / "out.json").read_text())
    assert set(k for k in data if not k.startswith("_")) == {"base", "shift"}
    assert data["base"]["tlr@2"] == 0.0 and data["shift"]["tlr@2"] == 1.0  # base's top 2 are English only
    assert (files / "out.md").read_text().startswith("| run ")
    assert (files / "mix.png").read_bytes()[:4] == b"\x89PNG" and (files / "mix.svg").is_file()
    # reports are not replaced without --overwrite
    assert run_cli(main, argv) == 2
    assert "already exists" in capsys.readouterr().err


def test_cli_topics_give_per_query_languages(files, capsys):
    argv = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "shift.trec.gz"), "--metrics", "tlr@2",
            "--doc-langs", str(files / "langs.tsv"), "--topics", str(files / "topics.tsv"),
            "--output", str(files / "t.json")]
    assert main(argv) == 0
    data = json.loads((files / "t.json").read_text())
    # q1 (en): targets de1 fr1 both retrieved -> 1 ; q2 (de): target en2 retrieved -> 1
    assert data["shift"]["tlr@2"] == 1.0
    assert "query language de" in data["_per_language"]


@pytest.mark.parametrize("extra, message", [
    (["--metrics", "ndgc@20"], "did you mean: ndcg@20"),
    (["--metrics", "tlr@20"], "needs document languages"),
    (["--metrics", "ndcg@20", "--output", "x.pdf"], "unknown report type"),
    (["--metrics", "ndcg@20", "--baseline", "nope"], "baseline 'nope'"),
])
def test_cli_errors_exit_2_with_one_line(files, capsys, extra, message):
    argv = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "base.trec")] + extra
    assert run_cli(main, argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("lang, doc_en", [("eng", "en"), ("en", "en-GB"), ("en-US", "en")])
def test_cli_default_lang_meets_document_tags_by_the_rule(files, lang, doc_en):
    """eng/en-US queries meet en documents (and en queries en-GB ones): the same figures as plain en."""
    text = (files / "langs.tsv").read_text()
    (files / "tagged.tsv").write_text(text.replace("\ten\n", f"\t{doc_en}\n"))
    common = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "base.trec"), "--metrics", "tlr@2",
              "samelang@2"]
    assert main(common + ["--doc-langs", str(files / "langs.tsv"), "--default-lang", "en",
                          "--output", str(files / "ref.json")]) == 0
    assert main(common + ["--doc-langs", str(files / "tagged.tsv"), "--default-lang", lang,
                          "--output", str(files / "got.json")]) == 0
    ref, got = (json.loads((files / n).read_text())["base"] for n in ("ref.json", "got.json"))
    assert got["samelang@2"] == ref["samelang@2"] > 0 and got["tlr@2"] == ref["tlr@2"]


def test_cli_refuses_a_query_language_no_document_has(files, capsys):
    argv = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "base.trec"), "--metrics", "samelang@2",
            "--doc-langs", str(files / "langs.tsv"), "--default-lang", "ja"]
    assert run_cli(main, argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "query language 'ja' (--default-lang or the topics' languages) meets no " \
        "document language: the documents' languages are de, en, fr" in err


def test_cli_bad_run_line_names_file_and_line(files, capsys):
    (files / "bad.trec").write_text("q1 Q0 en1 1 0.5 t\nq1 Q0 de1 2 x t\n")
    argv = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "bad.trec"), "--metrics", "ndcg@20"]
    assert run_cli(main, argv) == 2
    assert f"{files / 'bad.trec'}:2: score 'x' is not a number" in capsys.readouterr().err


def test_plot_cli_alpha_and_mix(files, capsys):
    reports = []
    for alpha in (0.0, 0.5, 1.0):
        path = files / f"a{alpha}.json"
        path.write_text(json.dumps({"shift": {"ndcg@20": 0.5 + alpha / 10, "tlr@20": 0.1 + alpha / 5}}))
        reports.append(f"{alpha}={path}")
    (files / "base.json").write_text(json.dumps({"base": {"ndcg@20": 0.5, "tlr@20": 0.1}}))
    assert main(["plot", "alpha", "--point", *reports, "--baseline", f"e5={files / 'base.json'}",
                 "--output", str(files / "alpha")]) == 0
    assert (files / "alpha.png").is_file() and (files / "alpha.svg").is_file()
    assert main(["plot", "mix", "--runs", str(files / "base.trec"), "--doc-langs", str(files / "langs.tsv"),
                 "--default-lang", "en", "--k", "2", "--output", str(files / "m")]) == 0
    assert (files / "m.png").is_file()
    assert run_cli(main, ["plot", "alpha", "--point", "x=1", "--output", str(files / "z")]) == 2
    again = ["plot", "alpha", "--point", *reports, "--output", str(files / "alpha")]
    capsys.readouterr()
    assert run_cli(main, again) == 2  # (replaced without a word before)
    assert "alpha.png already exists (use --overwrite" in capsys.readouterr().err
    assert run_cli(main, [*again, "--overwrite"]) == 0
    (files / "user.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'><!-- mine --></svg>\n")
    mix = ["--qrels", str(files / "qrels.txt"), "--runs", str(files / "base.trec"), "--metrics", "ndcg@20",
           "--doc-langs", str(files / "langs.tsv"), "--default-lang", "en", "--plot-mix", str(files / "user")]
    assert run_cli(main, [*mix, "--overwrite"]) == 2
    assert "user.svg exists but is not a figure written by mlirkit" in capsys.readouterr().err
    assert "mine" in (files / "user.svg").read_text() and not (files / "user.png").exists()


def test_cli_parsers_import_nothing_heavy():
    import subprocess
    import sys

    heavy = ("torch", "faiss", "pyserini", "ranx", "numba", "matplotlib", "pandas", "scipy", "sklearn")
    code = ("import sys, mlirkit.eval, mlirkit.eval.cli as c\nc.build_parser()\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plot_projection_cli_with_transform_and_after_index(tmp_path):
    import numpy as np

    from mlirkit.index import IndexWriter
    from mlirkit.transforms import save_transform
    from tests.helpers import aligned_shift

    rng = np.random.default_rng(0)
    enc = {"class": "test", "model": "toy"}
    langs = ["en"] * 40 + ["de"] * 40
    base = rng.normal(size=(40, 8)).astype(np.float32)
    offset = np.zeros(8, dtype=np.float32)
    offset[0] = 4.0
    raw = np.vstack([base, base + offset])
    with IndexWriter(tmp_path / "idx", dim=8, encoder=enc, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(80)], langs, raw)
    with IndexWriter(tmp_path / "idx2", dim=8, encoder=enc, normalized=False) as w:
        w.add([f"d{i}" for i in range(80)], langs, np.vstack([base, base]))
    t = aligned_shift(base, {"de": base + offset}, "en", encoder=enc)
    save_transform(t, tmp_path / "shift.safetensors")
    assert main(["plot", "projection", "--index", str(tmp_path / "idx"), "--transform",
                 str(tmp_path / "shift.safetensors"), "--output", str(tmp_path / "p1")]) == 0
    assert main(["plot", "projection", "--index", str(tmp_path / "idx"), "--after-index", str(tmp_path / "idx2"),
                 "--output", str(tmp_path / "p2")]) == 0
    assert (tmp_path / "p1.png").is_file() and (tmp_path / "p2.svg").is_file()
    with IndexWriter(tmp_path / "other", dim=8, encoder=enc, normalized=False) as w:
        w.add([f"x{i}" for i in range(80)], langs, raw)
    assert run_cli(main, ["plot", "projection", "--index", str(tmp_path / "idx"), "--after-index",
                          str(tmp_path / "other"), "--output", str(tmp_path / "p3")]) == 2


def test_cli_accepts_ir_datasets_ids_for_qrels_doc_langs_and_topics(tmp_path, capsys):
    import ir_datasets

    import mlirkit.datasets  # noqa: F401  (registers mlirkit/...)

    ds = ir_datasets.load("mlirkit/ddtp/de/dev")
    qrels: dict = {}
    for r in ds.qrels_iter():
        qrels.setdefault(r.query_id, {})[r.doc_id] = 1.0
    write_run(qrels, tmp_path / "perfect.trec", "p")  # every relevant document, nothing else
    argv = ["--qrels", "mlirkit/ddtp/de/dev", "--runs", str(tmp_path / "perfect.trec"), "--metrics", "ndcg@20",
            "tlr@20", "--doc-langs", "mlirkit/ddtp/de/dev", "--topics", "mlirkit/ddtp/de/dev",
            "--significance", "none", "--output", str(tmp_path / "r.json")]
    assert main(argv) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["perfect"] == {"ndcg@20": 1.0, "tlr@20": 1.0}
    assert data["_meta"]["info"]["query_languages"] == {"de": len(qrels)}
