"""Parallel text for fitting: groups of translations sharing an id.

Sources (:func:`open_parallel`):

- aligned JSON Lines (optionally gzipped, recognised from the content): one record per (``id``,
  ``lang``) with the text in ``text`` (``text_fields``; several fields joined by a space, e.g.
  ``short,long``). Rows of one id must be contiguous (sort the file by id); the sets in
  ``shared/data`` have this shape.
- the SHIFT authors' mMARCO pairs table (a ``datasets.save_to_disk`` directory with ``positive_<lang>``
  columns; the ``query_*`` columns are ignored, as in their code).
- ``mmarco`` (= the rows of ``mlirkit/mmarco-pairs/multi``, the SHIFT recipe: one group per unique
  (query, positive) pair of the mMARCO train triples, the positive passage in every language, streamed
  by :func:`mlirkit.datasets.mmarco_pairs.recipe_rows`; ``mmarco-10k`` for the first 10k pairs;
  ``mmarco-passages`` / ``mmarco-10k-passages`` weight each unique passage once instead)
  and any other parallel set id: rows ``(id, lang, text)`` from ``mlirkit.datasets.parallel_rows``
  (e.g. ``mlirkit/parallel/libreoffice-help``).
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.base.langs import check_lang
from mlirkit.base.option_names import option
from mlirkit.io.fields import check_id, check_text
from mlirkit.io.files import read_jsonl_objects
from mlirkit.io.sources import SourceKind, source_kind

__all__ = ["MMARCO_ALIASES", "ParallelGroup", "group_rows", "open_parallel", "parallel_languages", "read_pairs_table",
           "read_parallel_jsonl"]

logger = logging.getLogger(__name__)

#: short names for the SHIFT recipe's mMARCO pairs (built by mlirkit.datasets from ir_datasets' mMARCO files):
#: name -> (first N pairs, weighting). ``mmarco`` / ``mmarco-10k`` are the authors' recipe (one group per unique
#: (query, positive) pair: the rows of ``mlirkit/mmarco-pairs/multi[/10k]``); ``-passages``: each passage once.
MMARCO_ALIASES = {"mmarco": (None, "pairs"), "mmarco-10k": (10_000, "pairs"),
                  "mmarco-passages": (None, "passages"), "mmarco-10k-passages": (10_000, "passages")}


class ParallelGroup(NamedTuple):
    id: str
    texts: dict[str, str]  # lang -> text


def read_parallel_jsonl(path: str | os.PathLike, text_fields: str | Sequence[str] = "text") -> Iterator[ParallelGroup]:
    """Groups of contiguous rows sharing ``id``; every error names the file and line. Ids, languages and
    texts are checked as by every reader (:mod:`mlirkit.io.fields`, :func:`mlirkit.base.langs.check_lang`)."""
    path = Path(path)
    fields = [f.strip() for f in text_fields.split(",")] if isinstance(text_fields, str) else list(text_fields)
    done: set[str] = set()
    current: ParallelGroup | None = None
    for line_no, rec in read_jsonl_objects(path):
        for key in ("id", "lang"):
            if rec.get(key) is None or rec.get(key) == "":
                raise format_error(path, line_no, f"missing field {key!r}")
        missing = [f for f in fields if f not in rec]
        if len(missing) == len(fields):
            raise format_error(path, line_no, f"missing text field {', '.join(repr(f) for f in fields)} "
                                              f"(fields: {', '.join(sorted(rec))}; choose one with {option('text_fields', flag='--text-field')})")
        where = f"{path}:{line_no}"
        text = " ".join(check_text(rec[f], where, f).strip() for f in fields if rec.get(f) not in (None, "")).strip()
        doc_id, lang = check_id(rec["id"], where, "id"), check_lang(rec["lang"], where)
        if current is None or current.id != doc_id:
            if current is not None:
                done.add(current.id)
                yield current
            if doc_id in done:
                raise format_error(path, line_no, f"rows of id {doc_id!r} are not contiguous (sort the file by id)")
            current = ParallelGroup(doc_id, {})
        if lang in current.texts:
            raise format_error(path, line_no, f"second {lang!r} row for id {doc_id!r}")
        if text:
            current.texts[lang] = text
    if current is not None:
        yield current


def group_rows(rows: Iterable[Any], source: str) -> Iterator[ParallelGroup]:
    """Group ``(id, lang, text)`` rows (tuples or objects with those attributes) by contiguous id; languages
    through :func:`~mlirkit.base.langs.check_lang` (a dataset's ``EN`` is ``en``, ``english`` is refused)."""
    done: set[str] = set()
    codes: dict[object, str] = {}
    current: ParallelGroup | None = None
    for row in rows:
        if hasattr(row, "lang") and hasattr(row, "text"):  # records (Doc, ir_datasets namedtuples)
            doc_id = getattr(row, "id", None) or getattr(row, "doc_id")
            lang, text = row.lang, row.text
        else:
            doc_id, lang, text = row[0], row[1], row[2]
        doc_id = str(doc_id)
        if lang not in codes:
            codes[lang] = check_lang(lang, f"{source}: id {doc_id!r}", known=True)
        lang = codes[lang]
        if current is None or current.id != doc_id:
            if current is not None:
                done.add(current.id)
                yield current
            if doc_id in done:
                raise MlirkitError(f"{source}: rows of id {doc_id!r} are not contiguous")
            current = ParallelGroup(doc_id, {})
        if text:
            current.texts[lang] = str(text)
    if current is not None:
        yield current


def read_pairs_table(directory: str | os.PathLike, langs: Sequence[str] | None = None) -> Iterator[ParallelGroup]:
    """The SHIFT authors' mMARCO pairs table (``save_to_disk`` directory); ids are row numbers."""
    import pyarrow as pa

    directory = Path(directory)
    state = directory / "state.json"
    try:
        files = [d["filename"] for d in json.loads(state.read_text(encoding="utf-8"))["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise MlirkitError(f"{directory}: not a datasets save_to_disk directory ({e})") from None
    row = 0
    for name in files:
        with pa.memory_map(str(directory / name)) as source:
            try:
                reader = pa.ipc.open_stream(source)
            except pa.ArrowInvalid:
                reader = pa.ipc.open_file(source)
            batches = reader if hasattr(reader, "__iter__") else (reader.get_batch(i) for i in range(reader.num_record_batches))
            for batch in batches:
                cols = {check_lang(c[len("positive_"):], f"{directory / name}: column {c!r}", known=True):
                        batch.column(i).to_pylist()
                        for i, c in enumerate(batch.schema.names) if c.startswith("positive_")}
                if not cols:
                    raise MlirkitError(f"{directory / name}: no positive_<lang> columns")
                if langs is not None:
                    cols = {l: v for l, v in cols.items() if l in langs}
                for k in range(batch.num_rows):
                    yield ParallelGroup(str(row), {l: v[k] for l, v in cols.items() if v[k]})
                    row += 1


def open_parallel(source: str, *, text_fields: str = "text", langs: Sequence[str] | None = None,
                  source_lang: str | None = None) -> Iterator[ParallelGroup]:
    """Parallel groups from a file, a pairs-table directory, ``mmarco`` or a parallel-set id.

    For ``mmarco*`` with ``langs`` and ``source_lang`` only those languages' collections are read."""
    from mlirkit.transforms.io import sniff

    path = Path(source)
    if source_kind(path) is SourceKind.DIRECTORY:
        return read_pairs_table(path, langs)
    if source_kind(path) is SourceKind.FILE:
        kind = sniff(path)
        if kind in ("gzip", "text"):
            return read_parallel_jsonl(path, text_fields)
        raise MlirkitError(f"{path}: not an aligned JSONL file (found {kind} content)")
    if source in MMARCO_ALIASES:
        from mlirkit.datasets.mmarco_pairs import recipe_rows

        limit, weighting = MMARCO_ALIASES[source]
        keep = None if langs is None or source_lang is None else [*langs, source_lang]
        return group_rows(recipe_rows(limit, weighting, keep), source)
    try:
        from mlirkit.datasets import parallel_rows
    except ImportError:
        raise MlirkitError(f"{source!r} is not a file and the datasets package (mlirkit.datasets.parallel_rows) "
                           f"is unavailable") from None
    return group_rows(parallel_rows(source), source)


def parallel_languages(source: str) -> tuple[str, ...] | None:
    """The languages a parallel source holds when known without reading it (a registered parallel-set id,
    ``mmarco*``), else None (a file or a pairs table: only reading it tells)."""
    from mlirkit.base.langs import canonical

    if source in MMARCO_ALIASES:
        from mlirkit.datasets.mmarco_pairs import LANGS

        return tuple(sorted({canonical(la) for la in LANGS}))
    if source_kind(Path(source)) is not SourceKind.DATASET:
        return None
    try:
        from mlirkit.datasets import DATASETS
    except ImportError:
        return None
    info = DATASETS.get(source) if source in DATASETS else None
    return tuple(sorted({canonical(la) for la in info.doc_langs})) if info is not None and info.doc_langs else None
