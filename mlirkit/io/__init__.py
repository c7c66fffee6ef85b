"""Readers and writers of the formats mlirkit exchanges: corpora, topics, TREC runs and qrels."""

__all__: list[str] = []
