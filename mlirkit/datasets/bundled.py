"""The bundled offline collections (real human translations from Debian 12, in ``resources/``).

- ``mlirkit/ddtp/<lang>`` (+ ``/dev``, ``/test``; ``<lang>`` = ``multi`` for every query language):
  Debian package descriptions. Query = the short description in ``<lang>`` (id ``q/{group}/{lang}``,
  a :class:`~mlirkit.io.records.ParallelQuery` whose ``group_id`` is the description group);
  corpus = the long descriptions of every language version of every description group, pooled (id
  ``{group}/{lang}``); relevant = every language version of the query's description. The corpus is the
  whole pool in every split; dev/test split the description *groups* (so a split's queries never
  share a group with the other split's).
- ``mlirkit/parallel/{libreoffice-help,gettext,ddtp}``: aligned groups for fitting transforms (docs
  only, :class:`~mlirkit.datasets.records.ParallelDoc` with ``doc_id = f"{group_id}/{lang}"``);
  ``parallel/ddtp`` holds descriptions that are not in the benchmark (nor near-duplicates of it).

Language codes are those of the source data with region variants folded: ``pt-BR`` -> ``pt``,
``zh-CN`` -> ``zh`` (``nl`` stays ``nl``). Built by ``scripts/build_bundled.py``; counts in
``resources/manifest.json``; licences and sources in ``resources/README.md``.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterator

from ir_datasets.formats import TrecQrel

from mlirkit.base.errors import format_error

from mlirkit.datasets._io import read_jsonl
from mlirkit.datasets.resources import manifest, resource
from mlirkit.datasets.records import Collection
from mlirkit.io.records import Doc, ParallelDoc, ParallelQuery

DDTP_FILE = "ddtp/benchmark.jsonl.gz"
PARALLEL_FILES = {"libreoffice-help": "parallel/libreoffice-help.jsonl.gz",
                  "gettext": "parallel/gettext.jsonl.gz",
                  "ddtp": "parallel/ddtp.jsonl.gz"}
SPLITS = ("dev", "test")
PARALLEL_LICENCES = {
    "libreoffice-help": "MPL-2.0 (LibreOffice 7.4 help; some files Apache-2.0)",
    "gettext": "licence of each package's catalog (GPL/LGPL/BSD/MIT/PostgreSQL; see resources/README.md)",
    "ddtp": "package metadata of Debian 12 (licence of each package); translations via Debian DDTP",
}
DDTP_LICENCE = PARALLEL_LICENCES["ddtp"]


@functools.lru_cache(maxsize=1)
def ddtp_records() -> tuple[dict, ...]:
    path = resource(DDTP_FILE)
    out = []
    for line, obj in read_jsonl(path):
        for key in ("id", "lang", "short", "long", "split"):
            if not isinstance(obj.get(key), str):
                raise format_error(path, line, f"missing field {key!r}")
        out.append(obj)
    return tuple(out)


def ddtp_langs() -> tuple[str, ...]:
    langs = manifest().get("files", {}).get(DDTP_FILE, {}).get("langs")
    return tuple(sorted(langs)) if langs else tuple(sorted({r["lang"] for r in ddtp_records()}))


def build_ddtp(query_lang: str | None, split: str | None = None) -> Collection:
    """``query_lang=None``: queries in every language; ``split``: None (all), "dev" or "test"."""
    records = ddtp_records()
    docs = [Doc(f"{r['id']}/{r['lang']}", r["long"], r["lang"]) for r in records]
    members: dict[str, list[str]] = defaultdict(list)
    for d, r in zip(docs, records):
        members[r["id"]].append(d.doc_id)
    return Collection(docs, *ddtp_queries(records, query_lang, split, members.__getitem__))


def ddtp_queries(records, query_lang: str | None, split: str | None,
                 relevant: Callable[[str], list[str]]) -> tuple[list[ParallelQuery], list[TrecQrel]]:
    """DDTP queries (short descriptions, id ``q/<group>/<lang>``, ``group_id`` = the description group:
    the translations of one description are one group) of ``query_lang`` (None: all) and
    ``split`` (None: all), with binary qrels on ``relevant(group id)``."""
    queries, qrels = [], []
    for r in records:
        if (query_lang is not None and r["lang"] != query_lang) or (split is not None and r["split"] != split):
            continue
        qid = f"q/{r['id']}/{r['lang']}"
        queries.append(ParallelQuery(qid, r["short"], r["lang"], r["id"]))
        qrels.extend(TrecQrel(qid, did, 1, "0") for did in relevant(r["id"]))
    return queries, qrels


def parallel_file_rows(name: str) -> Iterator[tuple[str, str, str]]:
    path = resource(PARALLEL_FILES[name])
    yield from read_aligned_jsonl(path)


def read_aligned_jsonl(path: Path) -> Iterator[tuple[str, str, str]]:
    """``(group_id, lang, text)`` from an aligned JSONL(.gz) file with fields ``id``, ``lang``, ``text``."""
    for line, obj in read_jsonl(path):
        for key in ("id", "lang", "text"):
            if not isinstance(obj.get(key), str) or not obj[key]:
                raise format_error(path, line, f"missing or empty string field {key!r}")
        yield obj["id"], obj["lang"], obj["text"]


def build_parallel(name: str) -> Collection:
    return Collection([ParallelDoc(f"{gid}/{lang}", text, lang, gid) for gid, lang, text in parallel_file_rows(name)])


__all__ = ["DDTP_FILE", "DDTP_LICENCE", "PARALLEL_FILES", "PARALLEL_LICENCES", "SPLITS", "build_ddtp",
           "build_parallel", "ddtp_langs", "ddtp_queries", "ddtp_records", "parallel_file_rows",
           "read_aligned_jsonl"]
