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

import json
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


def read_meta(path: str | Path) -> dict[str, Any]:
    """The index's ``meta.json``, or ``{}`` for a Lucene index mlirkit did not write (e.g. Pyserini's)."""
    file = require_lucene_index(path) / META_FILE
    if not file.is_file():
        return {}
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MlirkitError(f"{file}: not valid JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != LUCENE_INDEX_FORMAT:
        raise MlirkitError(f"{file}: field 'format' is not {LUCENE_INDEX_FORMAT!r}")
    return meta
