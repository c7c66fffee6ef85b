"""The option counts of docs/architecture.md ("The command lines: how many options") are the parsers' own
(``scripts/option_counts.py``), and no command line has more than 20 options of its own."""
from __future__ import annotations

import argparse
import importlib.util
import re

from tests.helpers import REPO

MAX_OWN = 20


def _counter():
    spec = importlib.util.spec_from_file_location("option_counts", REPO / "scripts" / "option_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented() -> dict[str, tuple[int, int]]:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## The command lines: how many options"):]
    section = section[:section.index("\n## ", 1)]
    return {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"^\| `([^`]+)` \|[^\n]*\| (\d+) \| (\d+) \|$", section, re.M)}


def test_the_documented_counts_are_the_parsers():
    counter = _counter()
    counts = {name: (counter.shown_options(p), counter.own_options(p)) for name, p in counter.commands()}
    documented = _documented()
    assert len(documented) >= 20 and {"encode", "search", "shift fit", "eval", "benchmark", "train"} <= set(documented)
    assert {name: counts[name] for name in documented} == documented


def test_no_command_line_has_more_than_20_options_of_its_own():
    counter = _counter()
    over = {name: counter.own_options(p) for name, p in counter.commands() if counter.own_options(p) > MAX_OWN}
    assert not over, over


def test_a_section_counts_once_and_its_options_are_still_shown():
    counter = _counter()
    p = argparse.ArgumentParser()
    p.add_argument("--a")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--hidden", help=argparse.SUPPRESS)
    g = p.add_argument_group("encoder")
    for name in ("--x", "--y", "--z"):
        g.add_argument(name)
    assert (counter.shown_options(p), counter.own_options(p)) == (6, 3)
