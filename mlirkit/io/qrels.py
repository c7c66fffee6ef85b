"""Relevance judgements ``{qid: {docno: relevance}}`` from a file or an ir_datasets id: the one qrels reader.

- a file (what :func:`mlirkit.io.sources.source_kind` says): TREC 4-column or BEIR TSV qrels, read by
  :func:`mlirkit.io.trec.read_qrels`;
- a BEIR dataset folder: its ``qrels/test.tsv`` (:mod:`mlirkit.io.folders`);
- anything else: an ir_datasets id with qrels (e.g. ``mlirkit/ddtp/en/test``).

Both follow one rule (:func:`mlirkit.io.trec.add_judgement`): a (query, document) pair judged twice is
an error, and so are qrels without any judgement; ids are checked by :func:`mlirkit.io.fields.check_id`.
"""
from __future__ import annotations

import os

from mlirkit.base.errors import MlirkitError
from mlirkit.io import trec
from mlirkit.io.fields import check_id
from mlirkit.io.sources import SourceKind, load_ir_dataset, source_kind


def read_qrels(source: str | os.PathLike) -> dict[str, dict[str, int]]:
    """Qrels of a TREC/BEIR qrels file, a BEIR folder or an ir_datasets id (see the module docstring)."""
    if source_kind(source) is SourceKind.DIRECTORY:
        from mlirkit.io.folders import beir_file

        source = beir_file(source, "qrels")
    if source_kind(source) is SourceKind.FILE:
        return trec.read_qrels(source)
    dataset_id = str(source)
    dataset = load_ir_dataset(dataset_id)
    if not dataset.has_qrels():
        raise MlirkitError(f"{dataset_id} has no qrels")
    qrels: dict[str, dict[str, int]] = {}
    for n, r in enumerate(dataset.qrels_iter(), start=1):
        where = f"{dataset_id} (qrel {n})"
        trec.add_judgement(qrels, check_id(r.query_id, where, "query id"), check_id(r.doc_id, where, "document id"),
                           int(r.relevance), where, None)
    if not qrels:
        raise MlirkitError(f"{dataset_id}: empty qrels")
    return qrels


__all__ = ["read_qrels"]
