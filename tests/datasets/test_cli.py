"""``python -m mlirkit.datasets``: every command is an argparse subcommand its ``--help`` shows (``export``'s two
forms, ``ir_datasets``), with one-line refusals."""
from __future__ import annotations

import json

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.datasets.cli import IR_DATASETS_COMMANDS, IR_DATASETS_ENTITIES, build_parser, main


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main([*argv, "--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


def test_help_shows_every_command_and_both_export_forms(capsys):
    assert "{list,ir_datasets,export}" in _help([], capsys)
    text = _help(["export"], capsys)
    assert "--format {beir,trec} --output DIR" in text and "{docs,queries,qrels,scoreddocs,docpairs}" in text
    assert "--fields" in _help(["export", "mlirkit/ddtp/en", "docs"], capsys)


def test_ir_datasets_help_is_ours_and_exits_0_and_a_command_gets_its_own(capsys):
    text = _help(["ir_datasets"], capsys)
    assert text.startswith("usage: python -m mlirkit.datasets ir_datasets") and "lookup" in text
    assert main(["ir_datasets", "lookup", "--help"]) == 0  # ir_datasets' own help of its command
    assert "usage: ir_datasets lookup" in capsys.readouterr().out


def test_the_named_ir_datasets_commands_are_its_own():
    from ir_datasets import commands

    assert set(IR_DATASETS_COMMANDS) == set(commands.COMMANDS)


def test_export_parses_both_forms():
    p = build_parser()
    files = p.parse_args(["export", "mlirkit/ddtp/en", "--format", "beir", "--output", "out"])
    assert (files.entity, files.format, files.output) == (None, "beir", "out")
    part = p.parse_args(["export", "mlirkit/ddtp/en", "qrels", "--format", "trec", "--fields", "query_id", "doc_id"])
    assert (part.entity, part.entity_format, part.fields, part.format) == ("qrels", "trec", ["query_id", "doc_id"], None)
    assert set(IR_DATASETS_ENTITIES) == {"docs", "queries", "qrels", "scoreddocs", "docpairs"}


@pytest.mark.parametrize("argv, needle", [
    (["export", "mlirkit/ddtp/en"], "give --format {beir,trec} and --output DIR, or a part"),
    (["export", "mlirkit/ddtp/en", "--format", "beir"], "give --format {beir,trec} and --output DIR"),
    (["export", "mlirkit/ddtp/en", "--output", "x", "docs"], "writes to stdout in ir_datasets' formats"),
    (["ir_datasets"], "ir_datasets: give a command (export, lookup"),
])
def test_incomplete_commands_are_one_line_exit_2(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        run_cli(main, argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and needle in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_part_goes_to_stdout_through_ir_datasets(capsys):
    assert main(["export", "mlirkit/ddtp/en/dev", "queries", "--format", "jsonl", "--fields", "query_id", "lang"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 268 and set(rows[0]) == {"query_id", "lang"} and rows[0]["lang"] == "en"
