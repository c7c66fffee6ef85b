"""``python -m mlirkit.pyserini.encode``: Pyserini's ``pyserini.encode`` with mlirkit's encoders and SHIFT."""

__all__: list[str] = []
