"""Every command line's ``--help`` has an example, and each example is a command its parser takes as printed,
with today's spellings (the only ones a parser takes): the examples cannot drift from the vocabulary of docs/cli.md.
The examples form one session (each reads an ir_datasets id or what another example writes), and a slow test
runs them all, in that order, on their own inputs."""
from __future__ import annotations

import argparse
import importlib
import re
import shlex

import pytest

from tests.test_cli_vocabulary import PASS_THROUGH, _parsers, walk

WRAPPERS = {"mlirkit.pyserini.encode", "mlirkit.pyserini.search"}  # the rest of their arguments is Pyserini's


def _examples(parser: argparse.ArgumentParser) -> list[str]:
    text = parser.format_help()
    parts = re.split(r"^examples?:$", text, flags=re.M)
    if len(parts) < 2:
        return []
    return [line.strip() for line in re.sub(r"\\\n\s*", " ", parts[1]).splitlines()
            if line.strip().startswith("python -m mlirkit.")]


def _commands():
    for module, parser in _parsers():
        for command, sub, _ in walk(parser, module):
            yield module, command, parser, sub


def test_every_command_line_has_an_example():
    missing = [command for module, command, top, sub in _commands()
               if not _examples(sub) and command not in PASS_THROUGH and not re.match(r"mlirkit\.datasets export \w+$", command)]
    assert not missing, missing


@pytest.mark.parametrize("module, command, example", [
    (module, command, example) for module, command, top, sub in _commands() for example in _examples(sub)])
def test_every_example_parses_with_todays_spellings(module, command, example):
    words, _ = _words(example)
    assert words[:3] == ["python", "-m", words[2]] and words[2].startswith("mlirkit."), example
    from tests.test_cli_vocabulary import CLI_MODULES
    import importlib

    target = words[2] if words[2] in CLI_MODULES else module
    parser = importlib.import_module(f"{target}.cli").build_parser()
    if target in WRAPPERS:
        parser.parse_known_args(words[3:])
    else:
        parser.parse_args(words[3:])


#: options whose values an example reads (files, directories, or ir_datasets ids)
INPUTS = {"--corpus", "--topics", "--qrels", "--runs", "--tune-runs", "--index", "--transform", "--doc-langs",
          "--pairs", "--from-index", "--point", "--after-index", "--hybrid-with"}
#: what an example writes
OUTPUTS = {"--output", "--embeddings"}
#: run by another test with its output in a temporary directory and no figures or progress bars
RUN_ELSEWHERE = {"python -m mlirkit.benchmark --quick --check":
                 "tests/benchmark/test_check.py::test_the_quick_slice_checks_against_its_own_reference",
                 # a server runs until stopped: started on a free port, asked, stopped
                 "python -m mlirkit.serve --index indexes/ddtp-e5 --transform vectors/e5-gettext.shift":
                 "tests/serve/test_cli.py::test_the_command_serves_until_stopped"}


def _words(example: str) -> tuple[list[str], str | None]:
    """An example's words and the file its standard output is redirected to (``> FILE``), if any."""
    words = shlex.split(example)
    if ">" in words:
        at = words.index(">")
        assert at == len(words) - 2, example
        return words[:at], words[-1]
    return words, None


def _reads_and_writes(example: str) -> tuple[str, list[str], list[str]]:
    """``(module, inputs, outputs)`` of one example (``python -m MODULE ... [> FILE]``)."""
    words, stdout = _words(example)
    module, rest = words[2], words[3:]
    reads, writes, flag = [], [stdout] if stdout else [], None
    positional = {"mlirkit.index": ("merge", "info"), "mlirkit.shift": ("inspect",), "mlirkit.train": ()}
    if module in positional and (not positional[module] or rest[:1] and rest[0] in positional[module]):
        args = rest[1:] if positional[module] else rest
        reads += [w for w in args[:next((i for i, w in enumerate(args) if w.startswith("-")), len(args))]]
    for word in rest:
        if word.startswith("-"):
            flag = word
            continue
        if flag in OUTPUTS or (flag == "--index" and module in ("mlirkit.pyserini.encode",)):
            writes.append(word)
        elif flag in INPUTS:
            reads.append(word.split("=", 1)[1].split(":")[0] if flag == "--point" else word)
    if "--print-config" in rest:  # the config is printed, its output_dir only named
        writes = [stdout]
    return module, reads, writes


def _is_id(value: str) -> bool:
    return value.startswith("mlirkit/")


def _written_before(path: str, written: set[str]) -> bool:
    return path in written or any(path.startswith(w + "/") for w in written)


def _all_examples() -> list[str]:
    return sorted({e for _, _, _, sub in _commands() for e in _examples(sub)})


def in_order(examples: list[str]) -> list[str]:
    """The examples in an order where each runs after the examples that write its inputs (stable: an example
    comes as early as its inputs allow)."""
    todo, done, written = list(examples), [], set()
    while todo:
        ready = next((e for e in todo if all(_is_id(r) or _written_before(r, written)
                                             for r in _reads_and_writes(e)[1])), None)
        assert ready is not None, f"no example writes the inputs of {todo}"
        todo.remove(ready)
        done.append(ready)
        written.update(_reads_and_writes(ready)[2])
    return done


def test_every_example_reads_what_another_example_writes_or_a_bundled_id():
    """The examples are one session: each input is an ir_datasets id or written by an example."""
    assert len(in_order(_all_examples())) == len(_all_examples())


def test_the_examples_that_run_elsewhere_are_examples_and_that_test_exists():
    from tests.helpers import REPO

    for example, test in RUN_ELSEWHERE.items():
        assert example in _all_examples()
        path, name = test.split("::")
        assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8")


#: searches that write 1000 hits per query unless told otherwise: in the session they write SESSION_HITS
DEFAULT_HITS = {"mlirkit.search", "mlirkit.lexical"}
SESSION_HITS = "100"


def test_the_session_hits_are_the_only_change_to_the_examples():
    """The session adds ``--hits`` to the searches that would write 1000 hits (the examples that read their runs
    then read, fuse and evaluate a tenth of the lines), and to nothing else; both commands take it."""
    import importlib

    parsers = {"mlirkit.search": [], "mlirkit.lexical": ["search"]}
    assert set(parsers) == DEFAULT_HITS
    for module, words in parsers.items():
        args = importlib.import_module(f"{module}.cli").build_parser().parse_args(
            [*words, "--index", "i", "--topics", "t", "--output", "o", "--hits", SESSION_HITS])
        assert args.hits == int(SESSION_HITS)
    assert _session_words(["python", "-m", "mlirkit.lexical", "index", "--corpus", "c"])[-1] == "c"
    assert _session_words(["python", "-m", "mlirkit.search", "--hits", "5"]) == ["--hits", "5"]
    assert {_words(e)[0][2] for e in _all_examples() if _words(e)[0][2] in DEFAULT_HITS} == DEFAULT_HITS


def _session_words(words: list[str]) -> list[str]:
    """An example's arguments as the session runs them: as printed, but a search of ``DEFAULT_HITS`` without
    ``--hits`` gets ``--hits SESSION_HITS``."""
    args = words[3:]
    if words[2] in DEFAULT_HITS and "--hits" not in args and (words[2] != "mlirkit.lexical" or args[:1] == ["search"]):
        args = [*args, "--hits", SESSION_HITS]
    return args


@pytest.mark.slow
@pytest.mark.jvm
@pytest.mark.timeout(3600)
def test_every_example_runs_on_its_own_inputs(tmp_path, monkeypatch, capsys, tiny_model_dir):
    """Every ``--help`` example, as printed, in one directory, each after the examples that write its inputs;
    the offline e5's weights are the tiny test model's (the commands, names and data are the examples' own) and
    the searches write 100 hits per query, not 1000 (``_session_words``). The lexical searches cover (nearly)
    every query of their topics."""
    from mlirkit.base.cli import run_cli
    from mlirkit.io.topics import read_topics

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("mlirkit.encoders.e5_q4.converted_model_dir", lambda *a, **k: tiny_model_dir)
    ran = []
    for example in in_order([e for e in _all_examples() if e not in RUN_ELSEWHERE]):
        words, stdout = _words(example)
        main = importlib.import_module(f"{words[2]}.cli").main
        rc = run_cli(main, _session_words(words))
        out = capsys.readouterr()
        assert rc == 0, f"{example}\n{out.err[-3000:]}"
        if stdout:
            (tmp_path / stdout).write_text(out.out, encoding="utf-8")
        for path in _reads_and_writes(example)[2]:  # (a figure's --output is a prefix: PREFIX.png, PREFIX.svg)
            written = [tmp_path / path] if "plot" not in words else [tmp_path / f"{path}.png", tmp_path / f"{path}.svg"]
            assert all(p.exists() for p in written), f"{example} did not write {path}"
        ran.append(words[2])
    assert len(ran) == len(_all_examples()) - len(RUN_ELSEWHERE)
    for run, topics in (("bm25.trec", "mlirkit/ddtp/en"), ("bm25-dev.trec", "mlirkit/ddtp/en/dev")):
        lines = (tmp_path / "runs" / run).read_text(encoding="utf-8").splitlines()
        queried = {line.split()[0] for line in lines}
        assert max(int(line.split()[3]) for line in lines) == int(SESSION_HITS), run
        asked = {q.query_id for q in read_topics(topics)}
        assert queried <= asked and len(queried) >= 0.99 * len(asked), run  # (a few queries may match no term)
