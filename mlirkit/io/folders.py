"""Input folders: a BEIR dataset folder and a Pyserini JsonCollection folder.

- **BEIR dataset folder** (what ``beir.util.download_and_unzip`` leaves): ``corpus.jsonl``,
  ``queries.jsonl`` and ``qrels/test.tsv`` (each optionally ``.gz``). As ``--corpus`` it is its
  ``corpus.jsonl``, as ``--topics`` its ``queries.jsonl``, as ``--qrels`` its ``qrels/test.tsv``
  (the test split, as BEIR's ``GenericDataLoader(...).load(split="test")``).
- **Pyserini JsonCollection folder** (what ``pyserini.encode --corpus DIR`` / ``-input DIR`` take): a
  directory of ``.jsonl`` / ``.json`` files (optionally ``.gz``), read in file-name order; a
  ``.json`` file is JSON lines, or one JSON array of objects, as Pyserini's JsonCollection
  allows. Subdirectories are not read.

:func:`folder_kind` names the form (or raises, saying what a folder needs); the readers in
:mod:`mlirkit.io.corpus`, :mod:`mlirkit.io.topics` and :mod:`mlirkit.io.qrels` dispatch on it.
"""
from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.io.files import open_text, read_jsonl_objects

JSON_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")


class FolderKind(str, Enum):
    BEIR = "beir"
    JSON_COLLECTION = "jsoncollection"


def _first_existing(folder: Path, *names: str) -> Path | None:
    for name in names:
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    return None


def json_collection_files(folder: str | os.PathLike) -> list[Path]:
    """The ``.jsonl``/``.json`` (``.gz``) files of a JsonCollection folder, sorted by name."""
    folder = Path(folder)
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.lower().endswith(JSON_SUFFIXES))


def folder_kind(folder: str | os.PathLike) -> FolderKind:
    """BEIR (has ``corpus.jsonl``) or JsonCollection (has ``.jsonl``/``.json`` files), else an error."""
    from mlirkit.io.index_files import FAISS_FILE

    folder = Path(folder)
    if _first_existing(folder, "corpus.jsonl") is not None:
        return FolderKind.BEIR
    if (folder / FAISS_FILE).exists():
        raise MlirkitError(f"{folder} is an index directory, not a corpus, topics or qrels folder")
    if json_collection_files(folder):
        return FolderKind.JSON_COLLECTION
    raise MlirkitError(f"{folder}: a directory, but neither a BEIR dataset folder (corpus.jsonl, queries.jsonl, "
                       "qrels/test.tsv) nor a Pyserini JsonCollection folder (.jsonl/.json files)")


def corpus_files(folder: str | os.PathLike) -> list[Path]:
    """The files that hold a folder's documents."""
    folder = Path(folder)
    if folder_kind(folder) is FolderKind.BEIR:
        return [_first_existing(folder, "corpus.jsonl")]
    return json_collection_files(folder)


def beir_file(folder: str | os.PathLike, part: str) -> Path:
    """``queries.jsonl`` (part "queries") or ``qrels/test.tsv`` (part "qrels") of a BEIR folder."""
    folder = Path(folder)
    names = {"queries": ("queries.jsonl",), "qrels": ("qrels/test.tsv",)}[part]
    path = _first_existing(folder, *names)
    if path is None:
        what = "topics" if part == "queries" else "qrels"
        raise MlirkitError(f"{folder}: a directory without {names[0]} (as {what}, a BEIR dataset folder needs "
                           f"{names[0]}; a JsonCollection folder holds documents only)")
    return path


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of a JSON lines file, or of a ``.json`` file holding one JSON array."""
    if path.name.lower().endswith((".json", ".json.gz")):
        with open_text(path) as f:
            head = f.read(4096).lstrip()
        if head.startswith("["):
            with open_text(path) as f:
                try:
                    data = json.load(f)
                except json.JSONDecodeError as e:
                    raise format_error(path, e.lineno, f"invalid JSON ({e.msg} at column {e.colno})") from None
            for i, obj in enumerate(data, start=1):
                if not isinstance(obj, dict):
                    raise MlirkitError(f"{path}: element {i} of the JSON array is not an object")
                yield i, obj
            return
    yield from read_jsonl_objects(path)


__all__ = ["FolderKind", "beir_file", "corpus_files", "folder_kind", "iter_json_objects", "json_collection_files"]
