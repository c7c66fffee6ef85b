"""The BM25 index directory: a Lucene index Pyserini opens, plus mlirkit's sidecars.

``DIR/`` holds Lucene's files (one segment, written by Anserini), so ``LuceneSearcher(DIR)`` opens it:
fields ``id``; ``contents`` (every document, with positions and term vectors: collection statistics of
the pooled corpus); ``contents_<lang>`` (:func:`language_field`: the same text in a field of its
language's own, whose statistics are that language's); ``raw`` = the document as JSON (``id``,
``contents``, ``contents_<lang>``, ``lang``). Beside them, as in a dense mlirkit index
(:mod:`mlirkit.io.index_files`):

- ``docid`` and ``langs``: one document id and its language per line, corpus order (what
  :func:`mlirkit.io.doc_langs.read_doc_langs` reads for TLR@k);
- ``meta.json``: ``{"format": "mlirkit-lucene-index", "analyzers": {lang: analyzer entry}, "fields": {lang:
  field}, ...}``, the analyzer of every document language (name, Lucene class, Anserini arguments, the
  Pyserini call that selects it for queries) and its field, the fallback used, document counts, versions
  and the corpus read.

Lucene never touches these files (they do not follow its file-name pattern).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.base.outputs import LUCENE_INDEX_FORMAT
from mlirkit.io.index_files import DOCID_FILE, LANGS_FILE, META_FILE

__all__ = ["DOCID_FILE", "LANGS_FILE", "LUCENE_INDEX_FORMAT", "META_FILE", "POOLED_FIELD", "language_field",
           "read_meta", "require_lucene_index"]

POOLED_FIELD = "contents"


def language_field(lang: str) -> str:
    """The Lucene field holding the documents of language ``lang``: ``contents_<lang>``."""
    return f"{POOLED_FIELD}_{lang}"


def require_lucene_index(path: str | Path) -> Path:
    """``path`` if it is a directory holding a Lucene index (a ``segments_N`` file), else one-line error."""
    path = Path(path)
    if not path.is_dir():
        raise MlirkitError(f"{path}: no such index directory")
    if not any(p.name.startswith("segments_") for p in path.iterdir()):
        hint = " (a dense index: search it with python -m mlirkit.search)" if (path / "index").is_file() else ""
        raise MlirkitError(f"{path} is not a Lucene index (no segments_N file){hint}")
    return path


def _meta_shape():
    from mlirkit.io.json_fields import NON_NEGATIVE_INT, POSITIVE_INT, STRING, list_of, map_of, record, value
    from mlirkit.lexical.analyzers import FALLBACKS, LANGUAGE_ANALYZERS

    names = sorted({*LANGUAGE_ANALYZERS, *FALLBACKS})
    analyzer = value("string", test=lambda v: v in LANGUAGE_ANALYZERS or v in FALLBACKS,
                     what=f"an analyzer name ({', '.join(names)})")
    return record({
        "format": value("string", test=lambda v: v == LUCENE_INDEX_FORMAT, what=repr(LUCENE_INDEX_FORMAT)),
        "mlirkit_version": STRING, "corpus": STRING, "documents": POSITIVE_INT, "max_docs": POSITIVE_INT,
        "skipped_empty": NON_NEGATIVE_INT, "lang_counts": map_of(NON_NEGATIVE_INT),
        "analyzers": map_of(record({"analyzer": analyzer, "class": STRING, "anserini_args": list_of(STRING),
                                    "pyserini": STRING}, required=("analyzer",))),
        "fields": map_of(STRING),
        "fallback_analyzer": value("string", "null", test=lambda v: v in FALLBACKS,
                                   what=f"null or a fallback analyzer ({', '.join(FALLBACKS)})"),
        "anserini_jar": STRING, "lucene_version": STRING,
    }, required=("format", "analyzers", "fields"))


def read_meta(path: str | Path) -> dict[str, Any]:
    """The index's ``meta.json``, its fields checked (types, analyzer names, ``fields`` = ``contents_<lang>``),
    or ``{}`` for a Lucene index mlirkit did not write (e.g. Pyserini's). An index mlirkit wrote whose
    ``meta.json`` is gone (its ``docid`` / ``langs`` are there) is refused: the analyzers and the language
    fields are recorded there, and a search that guessed them would rank differently."""
    from mlirkit.io.json_fields import check_json, read_json_file

    index = require_lucene_index(path)
    file = index / META_FILE
    if not file.is_file():
        found = [name for name in (DOCID_FILE, LANGS_FILE) if (index / name).is_file()]
        if found:
            raise MlirkitError(f"{file} is missing: {index} is a BM25 index written by mlirkit ({', '.join(found)} "
                               "are there) whose analyzers and language fields meta.json records; rebuild it "
                               "(python -m mlirkit.lexical index)")
        return {}
    meta = check_json(file, read_json_file(file), _meta_shape())
    for lang, field in meta["fields"].items():
        if field != language_field(lang):
            raise MlirkitError(f"{file}: field 'fields.{lang}' must be {language_field(lang)!r}, got {field!r}")
    return meta
