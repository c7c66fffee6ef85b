"""Streaming corpus readers: BEIR JSONL, Pyserini JSONL, TSV, a folder, or an ir_datasets id.

- BEIR ``corpus.jsonl``: ``_id``, ``title``, ``text``, optional ``lang``; title and text are joined
  with a space (title first), as the SHIFT authors' benchmark builder does.
- Pyserini JSONL: ``id``, ``contents``, optional ``lang``.
- TSV: ``id<TAB>text[<TAB>lang]``, no header.
- a folder (:mod:`mlirkit.io.folders`): a BEIR dataset folder (its ``corpus.jsonl``) or a Pyserini
  JsonCollection folder (its ``.jsonl``/``.json`` files in name order, each read as above).
- ir_datasets id (e.g. ``mlirkit/ddtp/en``): language from the record's ``lang`` or ``docs_lang()``.

Every document needs a language: a missing one is an error naming file and line unless
``default_lang`` is given; ``"unknown"`` and ``"und"`` are read as :data:`~mlirkit.base.langs.UNKNOWN`.
Ids, texts and languages are checked where they are read (:mod:`mlirkit.io.fields`,
:func:`mlirkit.base.langs.check_lang`): an integer id is converted to its decimal text, any other
non-string id, title or text is an error, never stringified. Empty text and duplicate ids are errors too (``skip_empty=True`` skips
empty documents and counts them in :attr:`CorpusStats.skipped_empty`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Sequence

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.base.langs import check_lang
from mlirkit.base.option_names import option
from mlirkit.io.fields import check_id, check_text
from mlirkit.io.files import iter_lines, read_jsonl_objects
from mlirkit.io.records import Doc
from mlirkit.io.sources import SourceKind, file_format, load_ir_dataset, source_kind


@dataclass
class CorpusStats:
    read: int = 0
    skipped_empty: int = 0


def read_corpus(source: str | os.PathLike, *, default_lang: str | None = None,
                text_fields: Sequence[str] | None = None, skip_empty: bool = False,
                stats: CorpusStats | None = None) -> Iterator[Doc]:
    """Yield :class:`Doc` records from ``source`` (see module docstring), streaming."""
    stats = stats if stats is not None else CorpusStats()
    if default_lang is not None:
        default_lang = check_lang(default_lang, "default language")
    if source_kind(source) is SourceKind.FILE:
        fmt = file_format(source)
        records = _jsonl_docs(source, text_fields) if fmt == "jsonl" else id_text_lang_tsv(source, "id")
    elif source_kind(source) is SourceKind.DIRECTORY:
        records = _folder_docs(source, text_fields)
    else:
        records = _ir_datasets_docs(str(source))
    seen: set[str] = set()
    for where, doc_id, text, lang in records:
        doc_id = check_id(doc_id, where, "document id")
        if lang is None or lang == "":
            if default_lang is None:
                raise MlirkitError(f"{where}: missing field \"lang\" (give {option('default_lang')} to set one)")
            lang = default_lang
        else:
            lang = check_lang(lang, where)
        if doc_id in seen:
            raise MlirkitError(f"{where}: duplicate document id {doc_id!r}")
        seen.add(doc_id)
        if not text.strip():
            if not skip_empty:
                raise MlirkitError(f"{where}: empty text for document {doc_id!r} (use {option('skip_empty', True)} to skip)")
            stats.skipped_empty += 1
            continue
        stats.read += 1
        yield Doc(doc_id, text, lang)


def count_docs(source: str | os.PathLike) -> int | None:
    """Number of documents if cheap to know (lines of a file, ``docs_count()``), else None."""
    if source_kind(source) is SourceKind.FILE:
        return sum(1 for _ in iter_lines(source))
    if source_kind(source) is SourceKind.DIRECTORY:
        from mlirkit.io.folders import corpus_files, iter_json_objects

        return sum(1 for path in corpus_files(source) for _ in iter_json_objects(path))
    try:
        return load_ir_dataset(str(source)).docs_count()
    except Exception:
        return None


def _field(obj: dict, name: str, path: object, line: int) -> str:
    """A required text field (a string, never a stringified number)."""
    value = obj.get(name)
    if value is None:
        raise format_error(path, line, f"missing field {name!r}")
    return check_text(value, f"{path}:{line}", name)


def _optional_text(obj: dict, name: str, path: object, line: int) -> str:
    """An optional text field: absent or null is ``""``, else it must be a string."""
    value = obj.get(name)
    return "" if value is None else check_text(value, f"{path}:{line}", name)


def _folder_docs(folder, text_fields: Sequence[str] | None) -> Iterator[tuple[str, str, str, str | None]]:
    from mlirkit.io.folders import corpus_files, iter_json_objects

    for path in corpus_files(folder):
        yield from _jsonl_docs(path, text_fields, iter_json_objects(path))


def _jsonl_docs(path, text_fields: Sequence[str] | None,
                objects: Iterator[tuple[int, dict]] | None = None) -> Iterator[tuple[str, str, str, str | None]]:
    for line_no, obj in (objects if objects is not None else read_jsonl_objects(path)):
        id_field = "_id" if "_id" in obj else "id"
        if id_field not in obj:
            raise format_error(path, line_no, f"missing field {id_field!r}")
        doc_id = check_id(obj[id_field], f"{path}:{line_no}", f"document id (field {id_field!r})")
        if text_fields:
            parts = [_optional_text(obj, f, path, line_no) for f in text_fields]
            if all(f not in obj for f in text_fields):
                raise format_error(path, line_no, f"missing field {text_fields[0]!r}")
        elif "contents" in obj:
            parts = [_field(obj, "contents", path, line_no)]
        else:
            parts = [_optional_text(obj, "title", path, line_no), _field(obj, "text", path, line_no)]
        text = " ".join(p.strip() for p in parts if p and p.strip())
        yield f"{path}:{line_no}", doc_id, text, obj.get("lang")


def id_text_lang_tsv(path, id_name: str) -> Iterator[tuple[str, str, str, str | None]]:
    """``(where, id, text, lang or None)`` from ``id<TAB>text[<TAB>lang]`` lines (corpus and topic TSV)."""
    for line_no, line in iter_lines(path):
        cols = line.split("\t")
        if len(cols) not in (2, 3):
            raise format_error(path, line_no, f"expected 2 or 3 tab-separated columns ({id_name}, text[, lang]), "
                                              f"got {len(cols)}")
        yield f"{path}:{line_no}", cols[0], cols[1], (cols[2] if len(cols) == 3 and cols[2] else None)


def ir_dataset_part(dataset_id: str, part: str):
    """``(records, default language)`` of ``part`` ("docs" or "queries") of an ir_datasets id."""
    dataset = load_ir_dataset(dataset_id)
    if not getattr(dataset, f"has_{part}")():
        raise MlirkitError(f"{dataset_id} has no {'documents' if part == 'docs' else part}")
    lang_of = getattr(dataset, f"{part}_lang", None)
    return getattr(dataset, f"{part}_iter")(), (lang_of() if lang_of is not None else None)


def _ir_datasets_docs(dataset_id: str) -> Iterator[tuple[str, str, str, str | None]]:
    docs, default = ir_dataset_part(dataset_id, "docs")
    for n, doc in enumerate(docs, start=1):
        fields = doc._asdict()
        title = fields.get("title") or ""
        text = fields.get("text") if "text" in fields else fields.get("body", "")
        joined = " ".join(p.strip() for p in (title, text or "") if p and p.strip())
        lang = fields.get("lang") or default
        yield f"{dataset_id} (document {n})", doc.doc_id, joined, lang


__all__ = ["CorpusStats", "count_docs", "id_text_lang_tsv", "ir_dataset_part", "read_corpus"]
