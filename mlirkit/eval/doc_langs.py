"""Document languages ``{docid: lang}`` for evaluation, from whichever source the user has.

- an mlirkit index directory (``docid`` + ``langs``, read by :class:`mlirkit.index.DenseIndex`);
- a two-column TSV ``docid<TAB>lang`` (``.tsv``/``.txt``, optionally ``.gz``);
- a corpus with a ``lang`` field (BEIR / Pyserini JSONL, 3-column TSV, or an ir_datasets id),
  read by :func:`mlirkit.io.corpus.read_corpus`.
"""
from __future__ import annotations

import gzip
import os
from pathlib import Path

from mlirkit.base.errors import MlirkitError, format_error


def read_doc_langs(source: str | os.PathLike) -> dict[str, str]:
    """``{docid: lang}`` from an index directory, a ``docid<TAB>lang`` TSV or a corpus (see module doc)."""
    path = Path(source)
    if path.is_dir():
        from mlirkit.index import DenseIndex

        index = DenseIndex(path)
        if not (path / "langs").is_file():
            raise MlirkitError(f"{path}: index has no 'langs' file (not written by mlirkit?); "
                               "give a corpus or a docid<TAB>lang TSV instead")
        docids, langs = index.docids, index.langs
        out = dict(zip(docids, langs))
        if len(out) != len(docids):
            raise MlirkitError(f"{path}: duplicate document ids in 'docid'")
        return out
    if path.is_file() and _is_two_column_tsv(path):
        return _read_tsv(path)
    from mlirkit.io.corpus import read_corpus

    out: dict[str, str] = {}
    for doc in read_corpus(source, skip_empty=True):
        out[doc.doc_id] = doc.lang
    if not out:
        raise MlirkitError(f"{source}: no documents")
    return out


def _open(path: Path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rt", encoding="utf-8") if magic == b"\x1f\x8b" else open(path, encoding="utf-8")


def _is_two_column_tsv(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    if not name.endswith((".tsv", ".txt")):
        return False
    try:
        with _open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    return len(line.rstrip("\r\n").split("\t")) == 2
    except UnicodeDecodeError:
        return False
    return False


def _read_tsv(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with _open(path) as f:
        for line_no, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 2:
                raise format_error(path, line_no, f"expected 2 tab-separated columns (docid, lang), got {len(cols)}")
            docid, lang = cols[0].strip(), cols[1].strip()
            if not docid or not lang:
                raise format_error(path, line_no, "empty document id or language")
            if docid in out:
                raise format_error(path, line_no, f"duplicate document id {docid!r}")
            out[docid] = lang
    if not out:
        raise MlirkitError(f"{path}: no documents")
    return out


__all__ = ["read_doc_langs"]
