"""One spelling per concept: every option of every mlirkit parser (subcommands included) is in the vocabulary of
docs/cli.md, no option has two long names, none is a spelling the vocabulary refuses ("not" column), and every
CLI has ``-q/--quiet`` and ``-v/--verbose``; each command accepts exactly the options its ``--help`` shows (no hidden
option, no abbreviation).

:data:`DEVIATIONS` lists today's exceptions, each with the spelling it becomes; it only shrinks (an entry that no
parser needs any more fails the test).
"""
from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI_MODULES = sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "mlirkit").rglob("__main__.py")
                     if (p.parent / "cli.py").is_file())
VERBOSITY = "-q/--quiet -v/--verbose"

#: (command, flag) -> the spelling it becomes (the per-CLI renames still to do)
DEVIATIONS: dict = {}
#: commands that pass their arguments on (their options are another program's, their logging their parent's)
PASS_THROUGH = {"mlirkit.datasets ir_datasets"}


def vocabulary(text: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """``({flag: concept}, {refused spelling: the concept's flag})`` from the tables of docs/cli.md."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") if text is None else text
    flags: dict[str, str] = {}
    refused: dict[str, str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("concept", "---") or set(cells[0]) <= {"-"}:
            continue
        concept, flag_cell, _, _, not_cell = cells
        names = re.findall(r"`(-[^`]+)`", flag_cell)
        for name in names:
            for part in name.split("/"):
                assert part not in flags, f"docs/cli.md: {part} is in two rows ({flags.get(part)!r}, {concept!r})"
                flags[part] = concept
        for name in re.findall(r"`(-[^`]+)`", not_cell):
            refused[name] = names[0] if names else concept
    return flags, refused


def walk(parser: argparse.ArgumentParser, path: str, inherited: tuple = ()):
    """``(command, parser, actions of it and its parents)`` for every command and subcommand."""
    actions = (*inherited, *parser._actions)
    yield path, parser, actions
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, f"{path} {name}", actions)


def problems(command: str, parser: argparse.ArgumentParser, inherited: tuple, flags: dict[str, str],
             refused: dict[str, str], deviations: dict) -> tuple[list[str], set]:
    """What breaks the vocabulary in one command, and the deviations it used."""
    out, used = [], set()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or not action.option_strings:
            continue
        long = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
        for name in long:
            if (command, name) in deviations:
                used.add((command, name))
            elif name in flags:  # (a refused spelling of one concept may be the flag of another: train --device)
                continue
            elif name in refused:
                out.append(f"{command}: {name} is not mlirkit's spelling: use {refused[name]}")
            else:
                out.append(f"{command}: {name} is not in docs/cli.md's vocabulary")
        kept = [o for o in long if (command, o) not in deviations]
        if len(kept) > 1:
            out.append(f"{command}: one option, two names: {', '.join(kept)}")
    if command not in PASS_THROUGH and not _is_group(parser):
        strings = {tuple(a.option_strings) for a in inherited}
        if not {("-q", "--quiet"), ("-v", "--verbose")} <= strings:
            if (command, VERBOSITY) in deviations:
                used.add((command, VERBOSITY))
            else:
                out.append(f"{command}: needs -q/--quiet and -v/--verbose")
    return out, used


def _is_group(parser: argparse.ArgumentParser) -> bool:
    """A command whose subcommand is required (it runs nothing itself)."""
    return any(isinstance(a, argparse._SubParsersAction) and a.required for a in parser._actions)


def _parsers():
    for module in CLI_MODULES:
        cli = importlib.import_module(f"{module}.cli")
        if hasattr(cli, "build_parser"):
            yield module, cli.build_parser()


def check(parsers, text: str | None = None, deviations: dict = DEVIATIONS) -> tuple[list[str], set]:
    flags, refused = vocabulary(text)
    found, used = [], set()
    for module, parser in parsers:
        for command, sub, inherited in walk(parser, module):
            p, u = problems(command, sub, inherited, flags, refused, deviations)
            found += p
            used |= u
    return found, used


def test_every_option_of_every_parser_is_in_the_vocabulary_once():
    found, used = check(list(_parsers()))
    assert not found, "\n".join(found)
    stale = sorted(set(DEVIATIONS) - used)
    assert not stale, f"deviations no parser has any more (remove them from DEVIATIONS): {stale}"


def _planted(*arguments: tuple[tuple[str, ...], dict]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="planted")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    for names, kwargs in arguments:
        p.add_argument(*names, **kwargs)
    return p


@pytest.mark.parametrize("names, kwargs, needle", [
    (("--languages",), {"nargs": "+"}, "--languages is not mlirkit's spelling: use --langs"),
    (("--query-lang",), {}, "--query-lang is not mlirkit's spelling: use --default-lang"),
    (("--depth",), {"type": int}, "--depth is not mlirkit's spelling: use --hits"),
    (("--lang-filter",), {}, "--lang-filter is not in docs/cli.md's vocabulary"),
    (("--output", "--out"), {}, "one option, two names: --output, --out"),
])
def test_a_planted_synonym_fails(names, kwargs, needle):
    found, _ = check([("mlirkit.planted", _planted((names, kwargs)))])
    assert any(needle in line for line in found), found
    clean, _ = check([("mlirkit.planted", _planted((("--langs",), {"nargs": "+"})))])
    assert clean == []


def test_a_cli_without_verbosity_options_fails():
    p = argparse.ArgumentParser(prog="planted")
    p.add_argument("--quiet", action="store_true")
    found, _ = check([("mlirkit.planted", p)])
    assert found == ["mlirkit.planted: needs -q/--quiet and -v/--verbose"]


def test_a_concept_in_two_rows_of_the_table_fails():
    table = ("| concept | flag | Python keyword | value syntax | not |\n|---|---|---|---|---|\n"
             "| hits | `--hits` | `k` | n | |\n| depth | `--hits` | `depth` | n | |\n")
    with pytest.raises(AssertionError, match="--hits is in two rows"):
        vocabulary(table)


def unshown(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings ``parser`` accepts that its ``--help`` does not show (abbreviations allowed: one more)."""
    text = parser.format_help()
    hidden = {o for o in parser._option_string_actions if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)}
    return hidden | ({"abbreviations"} if parser.allow_abbrev else set())


def test_each_command_accepts_exactly_the_options_its_help_shows():
    found = {command: sorted(unshown(sub)) for module, parser in _parsers()
             for command, sub, _ in walk(parser, module) if unshown(sub)}
    assert not found, found


def test_a_planted_hidden_option_or_abbreviation_fails():
    p = _planted((("--langs",), {"nargs": "+"}))
    p.allow_abbrev = False
    assert unshown(p) == set()
    p.add_argument("--languages", nargs="+", help=argparse.SUPPRESS)
    assert unshown(p) == {"--languages"}
    p.allow_abbrev = True
    assert unshown(p) == {"--languages", "abbreviations"}


def test_an_option_hidden_from_help_is_still_checked_against_the_vocabulary():
    found, _ = check([("mlirkit.planted", _planted((("--query-lang",), {"help": argparse.SUPPRESS})))])
    assert any("--query-lang is not mlirkit's spelling: use --default-lang" in line for line in found), found


def test_a_required_option_is_required(capsys):
    from mlirkit.encode.cli import build_parser

    assert build_parser().parse_args(["--corpus", "c", "--output", "i"]).index == "i"
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["--corpus", "c"])
    assert e.value.code == 2 and "the following arguments are required: --output (see --help)" in capsys.readouterr().err
