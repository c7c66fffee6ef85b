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
    if module == "mlirkit.encode":
        assert "per step (default: 2048)" in " ".join(out.split())  # --chunk-size's default, from the formatter


def test_pyserini_trec_eval_help_exits_0():
    proc = subprocess.run([sys.executable, "-m", "mlirkit.pyserini.trec_eval", "--help"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "mlirkit.pyserini.trec_eval" in proc.stdout and "rel_info_file" in proc.stdout  # trec_eval's own


@pytest.mark.slow
@pytest.mark.parametrize("module", PYSERINI_CLIS[:2])
def test_pyserini_help_of_the_wrappers_is_pyserinis_own(module):
    """--pyserini-help: Pyserini's own --help (its module starts the JVM), not the wrapper's."""
    proc = subprocess.run([sys.executable, "-m", module, "--pyserini-help"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Pyserini's own options") and proc.stdout.count("usage:") == 1
    assert "usage: python -m pyserini." in proc.stdout and "--encoder-option" not in proc.stdout


# ------------------------------------------------------------------ every CLI's --help: plain text, an example
CLI_MODULES = sorted(".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "mlirkit").rglob("__main__.py"))
RST = re.compile(r"`|:[a-z]+:`|::$", re.M)


def _commands(module: str) -> list[list[str]]:
    """The CLI itself and each of its subcommands (as the words before --help), from its parsers."""
    import argparse

    cli = importlib.import_module(f"{module}.cli")

    def walk(words: list[str], parser) -> list[list[str]]:
        out = [words]
        actions = parser._actions if parser is not None else ()
        if any(not a.option_strings and not isinstance(a, argparse._SubParsersAction) for a in actions):
            return out  # subcommands after a positional (datasets export DATASET_ID docs): no fixed words reach them
        for action in actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if sub.add_help:
                        out += walk(words + [name], sub)
        return out

    return walk([], cli.build_parser() if hasattr(cli, "build_parser") else None)


def _help(module: str, words: list[str], capsys) -> str:
    cli = importlib.import_module(f"{module}.cli")
    try:
        assert cli.main([*words, "--help"]) == 0
    except SystemExit as e:
        assert e.code == 0
    return capsys.readouterr().out


def _example_commands(text: str, module: str) -> list[list[str]]:
    import shlex

    part = re.split(r"^examples?:$", text, flags=re.M)[1]
    lines = re.sub(r"\\\n\s*", " ", part).splitlines()
    commands = [shlex.split(line)[3:] for line in lines if line.strip().startswith(f"python -m {module} ")]
    return [words[:-2] if words[-2:-1] == [">"] else words for words in commands]  # (``> FILE``: stdout to a file)


@pytest.mark.parametrize("module", CLI_MODULES)
def test_every_cli_help_is_plain_text_with_an_example_that_parses(module, capsys):
    assert len(CLI_MODULES) >= 11
    cli = importlib.import_module(f"{module}.cli")
    for words in _commands(module):
        text = _help(module, words, capsys)
        where = " ".join(["python -m", module, *words, "--help"])
        assert not RST.findall(text), f"{where}: reStructuredText in the help: {sorted(set(RST.findall(text)))}"
        examples = _example_commands(text, module)
        assert examples, f"{where}: no 'example:' with a python -m {module} command"
        for argv in examples:
            assert argv[:len(words)] == words, f"{where}: the example runs another command: {argv}"
            if hasattr(cli, "build_parser") and not module.startswith("mlirkit.pyserini"):
                cli.build_parser().parse_args(argv)  # exits 2 on an unknown flag


@pytest.mark.parametrize("module", PYSERINI_CLIS[:2])
def test_pyserini_wrappers_help_does_not_start_pyserini(module):
    code = (f"import sys\nfrom {module}.cli import main\nassert main(['--help']) == 0\n"
            "print(sorted(m for m in ('pyserini', 'jnius', 'torch', 'faiss') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("[]") and "--encoder-option" in proc.stdout
    assert "--pyserini-help" in proc.stdout and "example:" in proc.stdout


def test_search_quiet_prints_nothing_on_stderr(tmp_path, tiny_model_dir):
    """Encode a tiny index, then ``python -m mlirkit.search --quiet``: stdout the summary, stderr empty."""
    from tests.encode.test_cli import write_corpus

    corpus = write_corpus(tmp_path / "corpus.jsonl")
    index, topics, run = tmp_path / "index", tmp_path / "q.tsv", tmp_path / "run.trec"
    topics.write_text("q1\tferry harbour\ten\nq2\tcopy files\ten\n", encoding="utf-8")
    env_cmd = [sys.executable, "-m"]
    encode = subprocess.run(env_cmd + ["mlirkit.encode", "--corpus", str(corpus), "--output", str(index),
                                       "--encoder", str(tiny_model_dir), "--encoder-option", "max_length=32", "--quiet"],
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
