"""What :meth:`mlirkit.search.Searcher.search` returns: ``{query_id: [Hit, ...]}``, best first.

A plain dict of lists (``results["q1"][0].doc_id``) that also converts to the run shapes of the
ecosystem: ``{qid: {docid: score}}`` (:meth:`SearchResults.to_run`, what :mod:`mlirkit.io.trec` and
ranx read), a ``ranx.Run`` (:meth:`SearchResults.to_ranx`) and a TREC run file
(:meth:`SearchResults.write_trec`). :func:`mlirkit.eval.evaluate` takes it as it is.
"""
from __future__ import annotations

import os
from typing import Any, NamedTuple


class Hit(NamedTuple):
    doc_id: str
    score: float


class TextResult(NamedTuple):
    """The hits of one free-text query (:meth:`mlirkit.search.Searcher.search_text`), with how its language was
    decided (:class:`mlirkit.search.langid.QueryLanguage`)."""

    text: str
    language: Any
    hits: list[Hit]


class SearchResults(dict):
    """``{query_id: [Hit, ...]}`` with at most ``k`` hits per query, sorted by ``(-score, doc_id)``."""

    def to_run(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``, the run shape of ranx and :mod:`mlirkit.io.trec`."""
        return {qid: {h.doc_id: h.score for h in hits} for qid, hits in self.items()}

    def to_ranx(self, name: str | None = None) -> Any:
        """A ``ranx.Run`` named ``name`` (ranx.compare and :func:`mlirkit.eval.evaluate` name runs by it)."""
        from mlirkit.base.numba_cache import import_ranx

        return import_ranx().Run(self.to_run(), name=name)

    def write_trec(self, path: str | os.PathLike, tag: str | None = None, *, overwrite: bool = False) -> None:
        """Write a TREC run file (:func:`mlirkit.io.trec.write_run`); ``tag`` defaults to the file name
        (``runs/shift.trec`` -> ``shift``), as ``python -m mlirkit.search`` names its runs."""
        from mlirkit.io.trec import default_run_tag, write_run

        write_run(self.to_run(), path, tag or default_run_tag(path), overwrite)


__all__ = ["Hit", "SearchResults", "TextResult"]
