"""Errors name keyword arguments in Python and flags in a CLI: one message, spelt for whoever called."""
from __future__ import annotations

import contextvars
import threading

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import cli_main, cli_names, in_cli, option


def test_option_spelling_in_python_and_in_a_cli():
    assert (option("max_pairs"), option("force", True), option("index_type", "flat")) == \
        ("max_pairs", "force=True", "index_type='flat'")
    assert option("query_langs", flag="--query-lang") == "query_langs" and not in_cli()
    with cli_names():
        assert (option("max_pairs"), option("force", True), option("index_type", "flat")) == \
            ("--max-pairs", "--force", "--index-type flat")
        assert option("query_langs", flag="--query-lang") == "--query-lang" and in_cli()
        seen = []
        worker = threading.Thread(target=contextvars.copy_context().run,
                                  args=(lambda: seen.append(option("skip_empty", True)),))
        worker.start()
        worker.join()
        assert seen == ["--skip-empty"]  # a worker the CLI starts in its context speaks its language
    assert option("max_pairs") == "max_pairs"


def test_a_cli_in_one_thread_leaves_a_python_caller_in_another_alone():
    """The wording is per context, not process-wide: while a CLI runs (and waits) in one thread, a Python
    caller in another thread still reads keyword names."""
    cli_running, python_done = threading.Event(), threading.Event()
    seen = {}

    @cli_main
    def main(argv=None):
        cli_running.set()
        python_done.wait(10)
        seen["cli"] = option("max_pairs")

    def python_caller():
        cli_running.wait(10)
        seen["python"] = option("max_pairs")
        python_done.set()

    threads = [threading.Thread(target=main), threading.Thread(target=python_caller)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"cli": "--max-pairs", "python": "max_pairs"}


def test_cli_main_speaks_flags_only_while_main_runs_even_when_it_fails():
    @cli_main
    def main(argv=None):
        raise MlirkitError(f"{option('overwrite', True)} needed")

    with pytest.raises(MlirkitError, match="^--overwrite needed$"):
        main([])
    assert not in_cli() and option("overwrite", True) == "overwrite=True"


def test_one_refusal_from_python_and_from_the_cli(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc
    from mlirkit.shift import apply_to_index
    from mlirkit.shift.cli import main
    from mlirkit.testing.fake_encoder import FakeEncoder
    from mlirkit.transforms import ShiftTransform, save_transform

    encoder = FakeEncoder()
    Indexer(tmp_path / "idx", encoder, show_progress=False).index([Doc("d1", "ferry", "de"), Doc("d2", "pier", "en")])
    t = ShiftTransform.from_tensors({"de": [0.1] * encoder.dim}, encoder=encoder.fingerprint, source_lang="en")
    save_transform(t, tmp_path / "t.shift")
    with pytest.raises(MlirkitError, match=f"^output {tmp_path / 'idx'} is the input index"):
        apply_to_index(tmp_path / "idx", tmp_path / "t.shift", tmp_path / "idx")
    argv = ["apply", "--index", str(tmp_path / "idx"), "--transform", str(tmp_path / "t.shift"),
            "--output", str(tmp_path / "idx"), "--alpha", "1"]
    assert run_cli(main, argv) == 2
    # the last line: an INFO line may precede it (a logger an earlier test in this worker set up)
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"error: --output {tmp_path / 'idx'} is the input index")
