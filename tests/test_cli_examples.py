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
