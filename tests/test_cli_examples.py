"""Every command line's ``--help`` has an example, and each example is a command its parser takes as printed,
with today's spellings (no "renamed" warning): the examples cannot drift from the vocabulary of docs/cli.md.
(``tests/lexical/test_cli_examples.py`` also runs the lexical examples on their own inputs.)"""
from __future__ import annotations

import argparse
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
def test_every_example_parses_with_todays_spellings(module, command, example, capsys):
    words = shlex.split(example)
    assert words[:3] == ["python", "-m", words[2]] and words[2].startswith("mlirkit."), example
    from tests.test_cli_vocabulary import CLI_MODULES
    import importlib

    target = words[2] if words[2] in CLI_MODULES else module
    parser = importlib.import_module(f"{target}.cli").build_parser()
    if target in WRAPPERS:
        parser.parse_known_args(words[3:])
    else:
        parser.parse_args(words[3:])
    assert "renamed" not in capsys.readouterr().err, example


#: options whose values an example reads (files, directories, or ir_datasets ids)
INPUTS = {"--corpus", "--topics", "--qrels", "--runs", "--tune-runs", "--index", "--transform", "--doc-langs",
          "--pairs", "--from-index", "--point", "--after-index", "--hybrid-with"}
#: what an example writes
OUTPUTS = {"--output", "--embeddings"}
#: (command, input) of the examples whose inputs no other example writes, with what they need; a list that only shrinks
OPEN = {
    ("mlirkit.pyserini.encode", "corpus.jsonl"): "a Pyserini JSONL corpus (datasets export ... docs)",
    ("mlirkit.pyserini.search", "topics.tsv"): "a topics file (datasets export ... queries)",
    ("mlirkit.train", "run.json"): "a training config with its data",
}


def _reads_and_writes(words: list[str]) -> tuple[str, list[str], list[str]]:
    """``(module, inputs, outputs)`` of one example's words (``python -m MODULE ...``)."""
    module, rest = words[2], words[3:]
    reads, writes, flag = [], [], None
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
    return module, reads, writes


def _is_id(value: str) -> bool:
    return value.startswith("mlirkit/")


def test_every_example_reads_what_another_example_writes_or_a_bundled_id():
    """The examples are one session: each input is an ir_datasets id or written by an example (or is in
    :data:`OPEN`, with what it still needs)."""
    examples = {e for _, _, _, sub in _commands() for e in _examples(sub)}
    parsed = [_reads_and_writes(shlex.split(e)) for e in sorted(examples)]
    written = {w for _, _, writes in parsed for w in writes}
    missing = {(module, r) for module, reads, _ in parsed for r in reads
               if not _is_id(r) and r not in written and not any(r.startswith(w + "/") for w in written)}
    assert missing - set(OPEN) == set(), sorted(missing - set(OPEN))
    assert set(OPEN) <= missing, f"no longer open (remove from OPEN): {sorted(set(OPEN) - missing)}"
