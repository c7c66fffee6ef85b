"""The examples of ``python -m mlirkit.lexical --help`` run as printed, in order, on their own inputs (the bundled
DDTP collection): the index example indexes every one of its 14 languages, the search examples search it with the
English queries (all of them, and the dev split: the runs the fuse examples read)."""
from __future__ import annotations

import re
import shlex

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.lexical.cli import build_parser, main

pytestmark = [pytest.mark.slow, pytest.mark.jvm]


def _examples() -> list[list[str]]:
    text = build_parser().format_help()
    part = re.split(r"^examples?:$", text, flags=re.M)[1]
    lines = re.sub(r"\\\n\s*", " ", part).splitlines()
    return [shlex.split(line)[3:] for line in lines if line.strip().startswith("python -m mlirkit.lexical ")]


def test_the_help_examples_run_on_their_own_inputs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    examples = _examples()
    assert [argv[0] for argv in examples] == ["index", "search", "search"]
    for argv in examples:
        assert run_cli(main, argv) == 0, capsys.readouterr().err
    from mlirkit.io.topics import read_topics

    for run, topics in (("bm25.trec", "mlirkit/ddtp/en"), ("bm25-dev.trec", "mlirkit/ddtp/en/dev")):
        ran = {line.split()[0] for line in (tmp_path / "runs" / run).read_text(encoding="utf-8").splitlines()}
        asked = {q.query_id for q in read_topics(topics)}
        assert ran <= asked and len(ran) >= 0.99 * len(asked), run  # (a few queries may match no term)
