"""Document languages ``{docid: lang}``, from whichever source the user has.

:func:`read_doc_langs` accepts (what ``source`` is decides, :func:`mlirkit.io.sources.source_kind`):

- **an index directory** written by mlirkit (dense or BM25): ``docid`` and ``langs``, one value per line,
  same order (a Pyserini index has no ``langs`` file: give one of the other forms for it);
- **a file** (optionally gzip-compressed, recognised from the content), in one of four forms; its
  first record decides the form and every record must have it:

  - JSON Lines, one object per line with the id in ``_id``, ``id``, ``docid`` or ``doc_id`` (the first
    present) and ``lang``; a BEIR or Pyserini corpus with a ``lang`` field is such a file;
  - ``docid<TAB>lang`` (two tab-separated columns);
  - ``id<TAB>text<TAB>lang`` (a 3-column corpus TSV);
  - ``docid lang`` (two whitespace-separated columns, no tab);

  blank lines and lines starting with ``#`` are skipped;
- **a corpus folder** (a BEIR dataset folder or a Pyserini JsonCollection folder, :mod:`mlirkit.io.folders`),
  read as a corpus like an ir_datasets id;
- **an ir_datasets id** whose documents carry a language (read with :func:`mlirkit.io.corpus.read_corpus`,
  which skips documents with empty text: they are never indexed; a file's rows are all listed).

One set of rules for every form: an empty id or language, a document listed twice (even with the same
language) and a source without documents are errors naming the file (and line). Ids follow
:func:`mlirkit.io.fields.check_id` (a JSON integer id becomes its decimal text) and languages
:func:`mlirkit.base.langs.check_lang` (``unknown`` is read as ``und``), in an index's ``langs`` file too.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.base.langs import check_lang
from mlirkit.io.fields import check_id
from mlirkit.io.files import iter_lines, parse_json_object, read_lines
from mlirkit.io.index_files import DOCID_FILE, FAISS_FILE, LANGS_FILE
from mlirkit.io.sources import SourceKind, source_kind

JSON_ID_FIELDS = ("_id", "id", "docid", "doc_id")

# form name -> (number of columns, separator or None for any whitespace, column of the language, description)
_COLUMN_FORMS = {
    "docid-lang": (2, "\t", 1, "2 tab-separated columns (docid, lang)"),
    "corpus": (3, "\t", 2, "3 tab-separated columns (id, text, lang)"),
    "whitespace": (2, None, 1, "2 columns (docid lang)"),
}


def read_doc_langs(source: str | os.PathLike) -> dict[str, str]:
    """``{docid: lang}`` from an index directory, a doc-langs or corpus file, or an ir_datasets id
    (the forms and rules are in the module docstring)."""
    kind = source_kind(source)
    if kind is SourceKind.DIRECTORY and not _is_index(Path(source)) and _is_corpus_folder(Path(source)):
        out = _from_dataset(str(source))  # a BEIR or JsonCollection folder, read as a corpus
    elif kind is SourceKind.DIRECTORY:
        out = _from_index(Path(source))
    elif kind is SourceKind.FILE:
        out = _collect(Path(source), _file_records(Path(source)))
    else:
        out = _from_dataset(str(source))
    if not out:
        raise MlirkitError(f"{source}: no documents")
    return out


def _collect(path: Path, records: Iterator[tuple[int, str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line_no, doc_id, lang in records:
        if not doc_id or not lang:
            raise format_error(path, line_no, "empty document id or language")
        where = f"{path}:{line_no}"
        doc_id, lang = check_id(doc_id, where, "document id"), check_lang(lang, where)
        if doc_id in out:
            raise format_error(path, line_no, f"duplicate document id {doc_id!r}")
        out[doc_id] = lang
    return out


def _file_records(path: Path) -> Iterator[tuple[int, str, str]]:
    form: str | None = None
    for line_no, line in iter_lines(path, skip_comments=True):
        form = form or _form_of(line)  # decided by the first record
        if form == "json":
            yield (line_no, *_json_record(parse_json_object(line, path, line_no), path, line_no))
            continue
        n_cols, sep, lang_col, what = _COLUMN_FORMS[form]
        cols = line.split(sep)
        if len(cols) != n_cols:
            raise format_error(path, line_no, f"expected {what}, got {len(cols)}")
        yield line_no, cols[0].strip(), cols[lang_col].strip()


def _form_of(first_record: str) -> str:
    if first_record.lstrip().startswith("{"):
        return "json"
    if "\t" not in first_record:
        return "whitespace"
    return "corpus" if first_record.count("\t") == 2 else "docid-lang"


def _json_record(obj: dict, path: Path, line_no: int) -> tuple[str, str]:
    doc_id = next((obj[k] for k in JSON_ID_FIELDS if k in obj), None)
    lang = obj.get("lang")
    if doc_id is None:
        raise format_error(path, line_no, f"missing document id (one of {', '.join(JSON_ID_FIELDS)})")
    if not isinstance(lang, str):
        raise format_error(path, line_no, "missing field 'lang'" if lang is None
                           else f"field 'lang' must be a string, got {type(lang).__name__}")
    doc_id = check_id(doc_id, f"{path}:{line_no}", "document id") if not isinstance(doc_id, str) else doc_id
    return doc_id.strip(), lang.strip()


def _is_index(path: Path) -> bool:
    """A dense index (its FAISS file) or any index directory with mlirkit's ``docid`` and ``langs`` files."""
    return (path / FAISS_FILE).exists() or ((path / DOCID_FILE).is_file() and (path / LANGS_FILE).is_file())


def _is_corpus_folder(path: Path) -> bool:
    from mlirkit.io.folders import folder_kind

    try:
        folder_kind(path)
    except MlirkitError:
        return False
    return True


def _from_index(path: Path) -> dict[str, str]:
    if not _is_index(path) or not (path / DOCID_FILE).is_file():
        raise MlirkitError(f"{path} is not an index directory (needs '{FAISS_FILE}' and '{DOCID_FILE}')")
    if not (path / LANGS_FILE).is_file():
        raise MlirkitError(f"{path}: index has no '{LANGS_FILE}' file (not written by mlirkit?); "
                           "give a corpus or a docid<TAB>lang TSV instead")
    docids, langs = read_lines(path / DOCID_FILE), read_lines(path / LANGS_FILE)
    if len(langs) != len(docids):
        raise MlirkitError(f"{path / LANGS_FILE}: {len(langs)} lines but {len(docids)} document ids")
    docids = [check_id(d, f"{path / DOCID_FILE}:{n}", "document id") for n, d in enumerate(docids, start=1)]
    langs = [check_lang(lang, f"{path / LANGS_FILE}:{n}") for n, lang in enumerate(langs, start=1)]
    out = dict(zip(docids, langs))
    if len(out) != len(docids):
        raise MlirkitError(f"{path}: duplicate document ids in '{DOCID_FILE}'")
    return out


def _from_dataset(dataset_id: str) -> dict[str, str]:
    from mlirkit.io.corpus import read_corpus

    return {doc.doc_id: doc.lang for doc in read_corpus(dataset_id, skip_empty=True)}


__all__ = ["JSON_ID_FIELDS", "read_doc_langs"]
