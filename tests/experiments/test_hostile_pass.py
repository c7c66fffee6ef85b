"""experiments/hostile: the harness judges as the promise says, and the marks name cases that exist (the pass
itself runs with ``python -m experiments.hostile.run``; each fix it led to has its own test in tests/)."""
from __future__ import annotations

import importlib
from collections import Counter

from experiments.hostile.harness import one_line_error
from experiments.hostile.marks import ARGUED, FIXED
from experiments.hostile.run import MODULES


def test_one_line_error_holds_only_exit_2_with_one_error_line_naming_the_needles():
    assert one_line_error(2, "12:00 INFO reading\nerror: x.jsonl:3: bad id\n", ["x.jsonl:3"]).held
    assert not one_line_error(1, "error: x.jsonl:3: bad id\n", ["x.jsonl"]).held  # exit 1
    assert not one_line_error(2, "Traceback (most recent call last):\nerror: x\n").held
    assert not one_line_error(2, "error: one\nerror: two\n").held
    assert not one_line_error(2, "error: x.jsonl: bad\n", ["field 'id'"]).held  # the field not named


def test_every_mark_names_one_case():
    names = [c.name for m in MODULES for c in importlib.import_module(f"experiments.hostile.{m}").CASES]
    assert [n for n, k in Counter(names).items() if k > 1] == []
    assert set(FIXED) <= set(names) and ARGUED <= set(names) and not set(FIXED) & ARGUED
    assert all(len(commit) == 7 and int(commit, 16) >= 0 for commit in FIXED.values())
