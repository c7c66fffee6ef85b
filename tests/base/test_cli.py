"""``mlirkit.base.cli``: logging set-up (only the mlirkit logger), ``--help`` with defaults in every CLI
the README names, and ``--quiet`` leaving stderr empty on success."""
from __future__ import annotations

import importlib
import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mlirkit.base.cli import ArgumentParser, configure_logging
from tests.helpers import REPO

README_CLIS = sorted({m.group(1) for m in re.finditer(r"python -m (mlirkit(?:\.[a-z_]+)+)",
                                                       (REPO / "README.md").read_text(encoding="utf-8"))
                      if not m.group(1).startswith("mlirkit.pyserini")})  # PYSERINI_CLIS: their own test
PYSERINI_CLIS = ["mlirkit.pyserini.encode", "mlirkit.pyserini.search", "mlirkit.pyserini.trec_eval"]


@pytest.fixture
def restore_logging():
    package, root = logging.getLogger("mlirkit"), logging.getLogger()
    saved = (list(package.handlers), package.level, package.propagate, list(root.handlers), root.level)
    yield
    package.handlers[:], package.level, package.propagate = saved[0], saved[1], saved[2]
    root.handlers[:], root.level = saved[3], saved[4]


def test_configure_logging_touches_only_the_mlirkit_logger(restore_logging):
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    configure_logging()
    configure_logging()  # idempotent: one handler
    package = logging.getLogger("mlirkit")
    assert (list(root.handlers), root.level) == before
    assert len([h for h in package.handlers if type(h).__name__ == "_TqdmHandler"]) == 1
    assert package.level == logging.INFO and not package.propagate
    configure_logging(quiet=True)
    assert package.level == logging.WARNING
    configure_logging(verbose=True)
    assert package.level == logging.DEBUG


def test_help_shows_defaults_once():
    p = ArgumentParser(prog="x")
    p.add_argument("--hits", type=int, default=1000, help="hits per query")
    p.add_argument("--k", type=int, default=5, help="cut-off (default 5)")
    p.add_argument("--flag", action="store_true", help="a switch")
    p.add_argument("--name", default=None, help="a name")
    sub = p.add_subparsers().add_parser("go")
    sub.add_argument("--depth", type=int, default=3, help="depth")
    text = " ".join(p.format_help().split())
    assert "hits per query (default: 1000)" in text and "cut-off (default 5)" in text
    assert "a switch (default" not in text and "a name (default" not in text
    assert "depth (default: 3)" in " ".join(sub.format_help().split())


def test_readme_names_the_clis():
    assert {"mlirkit.encode", "mlirkit.search", "mlirkit.eval", "mlirkit.shift", "mlirkit.train"} <= set(README_CLIS)


@pytest.mark.parametrize("module", README_CLIS)
def test_every_readme_cli_answers_help_with_exit_0(module, capsys):
    cli = importlib.import_module(f"{module}.cli")
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m " + module)
    if module == "mlirkit.search":
        assert "(default: auto)" in " ".join(out.split())  # --device's default, from the formatter


def test_pyserini_trec_eval_help_exits_0():
    proc = subprocess.run([sys.executable, "-m", "mlirkit.pyserini.trec_eval", "--help"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "mlirkit.pyserini.trec_eval" in proc.stdout and "rel_info_file" in proc.stdout  # trec_eval's own


@pytest.mark.slow
@pytest.mark.parametrize("module", PYSERINI_CLIS[:2])
def test_pyserini_wrappers_help_lists_wrapper_and_pyserini_options(module):
    """Pyserini's own --help (its module starts the JVM) after the wrapper's options."""
    proc = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "--encoder-option" in proc.stdout and "Pyserini's own options" in proc.stdout
    assert proc.stdout.index("--encoder-option") < proc.stdout.index("Pyserini's own options")
    assert proc.stdout.count("usage:") == 2


def test_search_quiet_prints_nothing_on_stderr(tmp_path, tiny_model_dir):
    """Encode a tiny index, then ``python -m mlirkit.search --quiet``: stdout the summary, stderr empty."""
    from tests.encode.test_cli import write_corpus

    corpus = write_corpus(tmp_path / "corpus.jsonl")
    index, topics, run = tmp_path / "index", tmp_path / "q.tsv", tmp_path / "run.trec"
    topics.write_text("q1\tferry harbour\ten\nq2\tcopy files\ten\n", encoding="utf-8")
    env_cmd = [sys.executable, "-m"]
    encode = subprocess.run(env_cmd + ["mlirkit.encode", "--corpus", str(corpus), "--output", str(index),
                                       "--encoder", str(tiny_model_dir), "--max-length", "32", "--quiet"],
                            capture_output=True, text=True, timeout=600)
    assert encode.returncode == 0, encode.stderr
    assert encode.stderr == ""
    search = subprocess.run(env_cmd + ["mlirkit.search", "--index", str(index), "--topics", str(topics),
                                       "--output", str(run), "--hits", "3", "--quiet"],
                            capture_output=True, text=True, timeout=600)
    assert search.returncode == 0, search.stderr
    assert search.stderr == ""
    assert json.loads(search.stdout)["queries"] == 2 and len(run.read_text().splitlines()) == 6
    loud = subprocess.run(env_cmd + ["mlirkit.search", "--index", str(index), "--topics", str(topics),
                                     "--output", str(run), "--hits", "3", "--overwrite"],
                          capture_output=True, text=True, timeout=600)
    assert loud.returncode == 0 and "faiss.loader" not in loud.stderr  # never: only mlirkit's logger is set up
