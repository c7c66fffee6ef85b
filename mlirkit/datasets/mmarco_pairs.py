"""mMARCO aligned passages for language vectors, as the SHIFT authors built their pairs table.

Construction (SHIFT ``prepare_mmarco_pairs.py``): the unique ``(query id, positive passage id)`` pairs
of ``triples.train.ids.small.tsv`` in first-seen order; for each language the positive passage from
``data/google/collections/{name}_collection.tsv`` (mMARCO v2, Google Translate) and the query from
``{name}_queries.train.tsv``. Passage and query ids are the MS MARCO ids, shared by all languages.

Files are ir_datasets' own ``mmarco/v2/<lang>`` downloads (same URLs, md5 and cache paths,
``$IR_DATASETS_HOME/mmarco/...``), so a collection already fetched through ``ir_datasets`` is reused.
English (not in ir_datasets' mMARCO v2) comes from the same repository's ``english_*`` files, cached
beside them. Lines that do not split into id and text are skipped, as SHIFT does.

Ids: ``mlirkit/mmarco-pairs/<lang>`` (docs ``doc_id = pid``, queries ``query_id = qid``, qrels
qid -> pid) and ``mlirkit/mmarco-pairs/multi`` (every language, :class:`ParallelDoc`
``doc_id = f"{pid}/{lang}"``, no queries), each also as ``.../10k`` (the first 10,000 pairs).
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from mlirkit.datasets.records import Collection, TrecQrel
from mlirkit.io.records import Doc, ParallelDoc, Query
from mlirkit.datasets.sources import ENV_DATA, MissingDataError, SourceFile, _download, is_offline

logger = logging.getLogger(__name__)

NAME = "mmarco-pairs"
LANGS = ("ar", "zh", "dt", "en", "fr", "de", "hi", "id", "it", "ja", "pt", "ru", "es", "vi")
FILE_NAMES = {"ar": "arabic", "zh": "chinese", "dt": "dutch", "en": "english", "fr": "french", "de": "german",
              "hi": "hindi", "id": "indonesian", "it": "italian", "ja": "japanese", "pt": "portuguese",
              "ru": "russian", "es": "spanish", "vi": "vietnamese"}
SUBSETS = {"": None, "10k": 10_000}
LICENCE = "mMARCO (unicamp-dl/mmarco; licence not stated, MS MARCO terms apply)"
SIZE = "about 533k pairs (passages per language); /10k: 10,000"
HF = "https://huggingface.co/datasets/unicamp-dl/mmarco/resolve/main/data"
_EN = {
    "v2/en/docs": {"url": f"{HF}/google/collections/english_collection.tsv", "cache_path": "v2/english_collection.tsv"},
    "v2/en/queries/train": {"url": f"{HF}/google/queries/train/english_queries.train.tsv",
                            "cache_path": "v2/english.queries.train.tsv"},
}


def _config(key: str) -> dict:
    if key in _EN:
        return _EN[key]
    from ir_datasets.util import DownloadConfig

    return DownloadConfig.context("mmarco").contents()[key]


def _home() -> Path:
    return Path(os.environ.get("IR_DATASETS_HOME") or Path.home() / ".ir_datasets")


def candidates(key: str) -> list[Path]:
    """Where a file is looked for: ``$MLIRKIT_DATA/mmarco/<cache_path>``, ir_datasets' cache
    ``$IR_DATASETS_HOME/mmarco/<cache_path>`` and ``$IR_DATASETS_HOME/downloads/<md5>``."""
    cfg = _config(key)
    out = []
    if os.environ.get(ENV_DATA):
        out.append(Path(os.environ[ENV_DATA]).expanduser() / "mmarco" / cfg["cache_path"])
    out.append(_home() / "mmarco" / cfg["cache_path"])
    if cfg.get("expected_md5"):
        out.append(_home() / "downloads" / cfg["expected_md5"])
    return out


def file_for(key: str, *, download: bool = True) -> Path:
    cfg = _config(key)
    for p in candidates(key):
        if p.is_file():
            return p
    target = _home() / "mmarco" / cfg["cache_path"]
    sf = SourceFile(f"mmarco/{cfg['cache_path']}", cfg["url"], "mMARCO v2, unicamp-dl/mmarco", cfg.get("expected_md5"))
    if download and not is_offline():
        return _download(sf, target)
    raise MissingDataError(
        f"missing file {Path(cfg['cache_path']).name} (mMARCO{', offline mode' if is_offline() else ''}): "
        f"get it from {cfg['url']} and put it at {target}"
        + (f" or {candidates(key)[0]}" if os.environ.get(ENV_DATA) else f" or ${ENV_DATA}/mmarco/{cfg['cache_path']}")
        + "; see docs/datasets.md")


def keys(lang: str) -> list[str]:
    return ["train/triples", f"v2/{lang}/docs", f"v2/{lang}/queries/train"]


def available(lang: str | None) -> bool:
    langs = LANGS if lang is None else (lang,)
    return all(any(p.is_file() for p in candidates(k)) for la in langs for k in keys(la))


def _lines(path: Path):
    from tqdm import tqdm

    size = path.stat().st_size
    with open(path, "rb") as f, tqdm(total=size, unit="B", unit_scale=True, desc=path.name, disable=None,
                                      leave=False) as bar:
        for raw in f:
            bar.update(len(raw))
            yield raw.decode("utf-8", errors="replace")


def _tsv(path: Path, wanted: set[str]) -> dict[str, str]:
    out = {}
    for line in _lines(path):
        parts = line.rstrip("\n").split("\t", 1)
        if len(parts) == 2 and parts[0] in wanted:
            out[parts[0]] = parts[1]
    return out


def pairs(limit: int | None) -> list[tuple[str, str]]:
    """Unique (qid, positive pid) of the training triples in first-seen order (first ``limit``)."""
    seen, out = set(), []
    for line in _lines(file_for("train/triples")):
        cols = line.split()
        if len(cols) < 2:
            continue
        pair = (cols[0], cols[1])
        if pair not in seen:
            seen.add(pair)
            out.append(pair)
            if limit is not None and len(out) >= limit:
                break
    return out


def _check(langs: tuple[str, ...]) -> None:
    """Fail before any long streaming when a file is missing and cannot be downloaded."""
    if is_offline():
        for lang in langs:
            for k in keys(lang):
                file_for(k, download=False)


def build_lang(lang: str, limit: int | None) -> Collection:
    _check((lang,))
    prs = pairs(limit)
    pids = list(dict.fromkeys(p for _, p in prs))
    qids = list(dict.fromkeys(q for q, _ in prs))
    passages = _tsv(file_for(f"v2/{lang}/docs"), set(pids))
    queries = _tsv(file_for(f"v2/{lang}/queries/train"), set(qids))
    return Collection([Doc(p, passages[p], lang) for p in pids if p in passages],
                      [Query(q, queries[q], lang) for q in qids if q in queries],
                      [TrecQrel(q, p, 1, "0") for q, p in prs if q in queries and p in passages])


def build_multi(limit: int | None) -> Collection:
    _check(LANGS)
    pids = list(dict.fromkeys(p for _, p in pairs(limit)))
    docs = []
    for lang in LANGS:
        passages = _tsv(file_for(f"v2/{lang}/docs"), set(pids))
        docs.extend(ParallelDoc(f"{p}/{lang}", passages[p], lang, p) for p in pids if p in passages)
    return Collection(docs)
