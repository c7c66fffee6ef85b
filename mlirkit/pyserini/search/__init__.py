"""``python -m mlirkit.pyserini.search``: Pyserini's ``pyserini.search.faiss`` with mlirkit's query encoders."""

__all__: list[str] = []
