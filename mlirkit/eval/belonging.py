"""Whether a run and qrels belong together, decided before anything is scored (evaluation and fusion tuning).

Two rules; each refusal is one error saying what does not match and the option that scores anyway:

- **Query overlap** (:func:`check_overlap`): at least :data:`MIN_OVERLAP` (half) of the queries that
  count must be in both. In an evaluation these are the evaluated queries of the qrels (those with a
  relevant document), since a query the run lacks scores 0; in fusion tuning the queries of the dev runs,
  since those the qrels do not judge are left out. Qrels of another collection share no query with the
  run and would print a table of zeros. ``allow_partial_overlap`` (``--allow-partial-overlap``) scores
  anyway, with a warning.
- **Provenance** (:func:`check_provenance`): a run written by mlirkit names, in its sidecar
  (:mod:`mlirkit.io.provenance`), the topics it was searched with and the index, whose ``meta.json``
  names the corpus. When the qrels come from a source that knows its queries and documents (an
  ir_datasets id, a BEIR folder) and the sidecar's topics (or corpus) are another source that can still
  be read (an ir_datasets id, a file whose sha256 is the recorded one), then every query both share must
  have the same text in both (XQuAD-R's Chinese and German questions share their ids, not their text),
  and every document the run ranks must be a document of the qrels' collection. Sources that cannot be
  compared (a qrels file, a topics file that changed) are not checked. ``allow_provenance_mismatch``
  (``--allow-provenance-mismatch``) scores anyway, with a warning.
"""
from __future__ import annotations

import logging
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Collection, Mapping

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option

logger = logging.getLogger(__name__)

#: the smallest share of the queries that count which run and qrels must have in common
MIN_OVERLAP = 0.5


def _some(ids: list[str]) -> str:
    return ", ".join(repr(i) for i in ids[:3]) + (", ..." if len(ids) > 3 else "")


def check_overlap(counted: Collection[str], other: Collection[str], message: str, *, allow: bool) -> int:
    """The number of ``counted`` queries that are in ``other``; below :data:`MIN_OVERLAP` of ``counted``,
    ``MlirkitError(message.format(n=..., total=..., share=...) + remedy)`` (a warning with ``allow``)."""
    other = set(other)
    n = sum(1 for q in counted if q in other)
    total = len(counted)
    if total and n < MIN_OVERLAP * total:
        text = message.format(n=n, total=total, share=f"{100 * n / total:.1f} %")
        if allow:
            logger.warning("%s; going on (%s)", text, option("allow_partial_overlap", True))
        else:
            raise MlirkitError(f"{text}: they do not belong together (at least {MIN_OVERLAP:.0%} must overlap); "
                               f"give the qrels of the run's topics and collection, or "
                               f"{option('allow_partial_overlap', True)} to go on anyway")
    return n


def check_run_overlap(evaluated: Collection[str], run: Mapping[str, Mapping[str, float]], name: str, *,
                      allow: bool) -> None:
    """An evaluation: the run must have results for at least half of the qrels' evaluated queries."""
    with_results = [q for q, hits in run.items() if hits]
    judged = set(evaluated)
    outside = [q for q in with_results if q not in judged]
    check_overlap(evaluated, with_results,
                  f"run {name!r} has results for {{n}} of the {{total}} evaluated queries of the qrels ({{share}}; "
                  f"{len(outside)} of its {len(with_results)} queries are not judged there"
                  + (f", e.g. {_some(sorted(outside))}" if outside else "") + ")", allow=allow)


class _Qrels:
    """What the qrels' source knows about its queries and documents (read once, when first asked)."""

    def __init__(self, source: str | os.PathLike) -> None:
        self.source = str(source)

    @cached_property
    def known(self) -> bool:
        from mlirkit.io.sources import SourceKind, source_kind

        return source_kind(self.source) is not SourceKind.FILE

    @cached_property
    def queries(self) -> dict[str, str] | None:
        return _read_queries(self.source) if self.known else None

    @cached_property
    def doc_ids(self) -> set[str] | None:
        if not self.known:
            return None
        from mlirkit.io.doc_langs import read_doc_langs

        try:
            return set(read_doc_langs(self.source))
        except MlirkitError as e:
            logger.debug("the documents of %s are not known (%s)", self.source, e)
            return None


def _read_queries(source: str) -> dict[str, str] | None:
    from mlirkit.io.topics import read_topics

    try:
        return {q.query_id: q.text for q in read_topics(source)}
    except MlirkitError as e:
        logger.debug("the queries of %s are not known (%s)", source, e)
        return None


def _recorded_source(record: Any) -> str | None:
    """The source a sidecar's ``topics`` entry names, if it can still be read as it was: an id or folder
    (``source``), or a file whose sha256 is the recorded one (``path``, ``sha256``)."""
    if not isinstance(record, Mapping):
        return None
    if record.get("source"):
        return record["source"]
    path = record.get("path")
    if path and Path(path).is_file():
        from mlirkit.io.files import file_sha256

        if file_sha256(path) == record.get("sha256"):
            return path
    return None


def _recorded_corpus(index: Any) -> str | None:
    """The corpus the index of a sidecar was built from (``meta.json``'s ``corpus``), if the index is still
    the one the run was searched on (its ``meta.json`` has the recorded sha256)."""
    from mlirkit.io.files import file_sha256
    from mlirkit.io.json_fields import OPT_STRING, check_json, read_json_file, record

    if not isinstance(index, Mapping):
        return None
    entries = index.get("shards") or ([index] if index.get("path") else [])
    corpora = set()
    for entry in entries:
        meta = Path(entry["path"]) / "meta.json"
        if not meta.is_file() or file_sha256(meta) != entry.get("meta_sha256"):
            return None
        corpora.add(check_json(meta, read_json_file(meta), record({"corpus": OPT_STRING})).get("corpus"))
    return corpora.pop() if len(corpora) == 1 else None


def _same_dataset_docs(a: str, b: str) -> bool:
    """ir_datasets says both ids share one document collection (a split of the other, ...)."""
    try:
        import ir_datasets

        return ir_datasets.docs_parent_id(a) == ir_datasets.docs_parent_id(b)
    except Exception:  # an id ir_datasets does not know: no answer
        return False


def provenance_mismatch(qrels: _Qrels, name: str, path: str | os.PathLike,
                        run: Mapping[str, Mapping[str, float]]) -> str | None:
    """Why the sidecar of run ``name`` (at ``path``) says it does not belong to ``qrels``, or None."""
    from mlirkit.io.provenance import describe_file, sidecar_path
    from mlirkit.io.sources import SourceKind, source_kind

    if not qrels.known:
        return None
    record = describe_file(path).get("provenance")
    if record is None:
        return None
    where = f"its provenance sidecar {sidecar_path(path)}"
    topics = _recorded_source(record.get("topics"))
    if topics is not None and topics != qrels.source and qrels.queries is not None:
        searched = _read_queries(topics)
        if searched is not None:
            differ = sorted(q for q in searched.keys() & qrels.queries.keys() if searched[q] != qrels.queries[q])
            if differ:
                q = differ[0]
                return (f"run {name!r} was searched with the topics {topics} ({where}), not with the queries of the "
                        f"qrels {qrels.source}: {len(differ)} of the queries they share have another text (query "
                        f"{q!r}: {searched[q][:40]!r} in the topics, {qrels.queries[q][:40]!r} in the qrels)")
    corpus = _recorded_corpus(record.get("index"))
    if (corpus is not None and corpus != qrels.source and source_kind(corpus) is SourceKind.DATASET
            and source_kind(qrels.source) is SourceKind.DATASET and not _same_dataset_docs(corpus, qrels.source)
            and qrels.doc_ids is not None):
        foreign = sorted({d for hits in run.values() for d in hits} - qrels.doc_ids)
        if foreign:
            return (f"run {name!r} ranks documents of the collection {corpus} ({where}: the index's corpus), "
                    f"{len(foreign)} of which are not in the collection of the qrels {qrels.source} "
                    f"(e.g. {_some(foreign)})")
    return None


def check_provenance(qrels_source: str | os.PathLike, paths: Mapping[str, str | os.PathLike],
                     runs: Mapping[str, Mapping[str, float]], *, allow: bool) -> None:
    """Refuse a run (``paths``: ``{name: run file}``, ``runs``: the runs read) whose provenance sidecar names
    other topics or another collection than the qrels at ``qrels_source`` (see the module docstring)."""
    qrels = _Qrels(qrels_source)
    for name, path in paths.items():
        why = provenance_mismatch(qrels, name, path, runs[name])
        if why is None:
            continue
        if allow:
            logger.warning("%s; going on (%s)", why, option("allow_provenance_mismatch", True))
        else:
            raise MlirkitError(f"{why}; give the qrels of the run's topics and collection, or "
                               f"{option('allow_provenance_mismatch', True)} to go on anyway")


__all__ = ["MIN_OVERLAP", "check_overlap", "check_provenance", "check_run_overlap", "provenance_mismatch"]
