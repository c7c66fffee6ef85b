"""mMARCO aligned passages for language vectors, as the SHIFT authors built their pairs table.

Construction (SHIFT ``prepare_mmarco_pairs.py``): the unique ``(query id, positive passage id)`` pairs
of ``triples.train.ids.small.tsv`` in first-seen order; for each language the positive passage from
``data/google/collections/{name}_collection.tsv`` (mMARCO v2, Google Translate) and the query from
``{name}_queries.train.tsv``. Passage and query ids are the MS MARCO ids, shared by all languages.

Files are ir_datasets' own ``mmarco/v2/<lang>`` downloads (same URLs, md5 and cache paths,
``$IR_DATASETS_HOME/mmarco/...``), so a collection already fetched through ``ir_datasets`` is reused.
English (not in ir_datasets' mMARCO v2) comes from the same repository's ``english_*`` files, cached
beside them. Lines that do not split into id and text are skipped, as SHIFT does.

Files are looked for in ``$MLIRKIT_DATA/mmarco/`` under their ir_datasets cache path or their path in the
Hugging Face repository (``data/google/collections/dutch_collection.tsv``, ...: a snapshot of the repo),
then in ir_datasets' cache.

The recipe's rows (:func:`recipe_rows`, the ``parallel_rows`` of ``mlirkit/mmarco-pairs/multi``) stream in
bounded memory: each collection is read once, keeping only the needed passages, spooled to a temporary
file with their byte offsets (one int64 per needed passage and language in memory), and then read back
one group at a time, every language of a group together. Weighting (``weighting``): ``"pairs"`` (the
default, the authors' recipe) makes one group per unique (query, positive) pair, so a passage that is the
positive of several queries counts that many times; ``"passages"`` makes one group per unique passage.

Ids: ``mlirkit/mmarco-pairs/<lang>`` (docs ``doc_id = pid``, queries ``query_id = qid``, qrels
qid -> pid) and ``mlirkit/mmarco-pairs/multi`` (every language, :class:`ParallelDoc`
``doc_id = f"{pid}/{lang}"``, no queries), each also as ``.../10k`` (the first 10,000 pairs).
"""
from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Iterator, Sequence

from ir_datasets.formats import TrecQrel

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical

from mlirkit.datasets.records import Collection
from mlirkit.io.records import Doc, ParallelDoc, Query
from mlirkit.datasets.sources import ENV_DATA, MissingDataError, SourceFile, download_file, is_offline

logger = logging.getLogger(__name__)

NAME = "mmarco-pairs"
LANGS = ("ar", "zh", "dt", "en", "fr", "de", "hi", "id", "it", "ja", "pt", "ru", "es", "vi")
FILE_NAMES = {"ar": "arabic", "zh": "chinese", "dt": "dutch", "en": "english", "fr": "french", "de": "german",
              "hi": "hindi", "id": "indonesian", "it": "italian", "ja": "japanese", "pt": "portuguese",
              "ru": "russian", "es": "spanish", "vi": "vietnamese"}
SUBSETS = {"": None, "10k": 10_000}
WEIGHTINGS = ("pairs", "passages")
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
    """Where a file is looked for: ``$MLIRKIT_DATA/mmarco/<cache_path>``, ``$MLIRKIT_DATA/mmarco/<repo path>``
    (the upstream layout, e.g. ``data/google/collections/dutch_collection.tsv``), ir_datasets' cache
    ``$IR_DATASETS_HOME/mmarco/<cache_path>`` and ``$IR_DATASETS_HOME/downloads/<md5>``."""
    cfg = _config(key)
    out = []
    if os.environ.get(ENV_DATA):
        base = Path(os.environ[ENV_DATA]).expanduser() / "mmarco"
        out.append(base / cfg["cache_path"])
        out.append(base / repo_path(cfg["url"]))
    out.append(_home() / "mmarco" / cfg["cache_path"])
    if cfg.get("expected_md5"):
        out.append(_home() / "downloads" / cfg["expected_md5"])
    return out


def repo_path(url: str) -> str:
    """The file's path in the Hugging Face repository (``data/...``) from its download URL."""
    return url.split("/resolve/main/", 1)[-1]


def file_for(key: str, *, download: bool = True) -> Path:
    cfg = _config(key)
    for p in candidates(key):
        if p.is_file():
            return p
    target = _home() / "mmarco" / cfg["cache_path"]
    sf = SourceFile(f"mmarco/{cfg['cache_path']}", cfg["url"], "mMARCO v2, unicamp-dl/mmarco", cfg.get("expected_md5"))
    if download and not is_offline():
        return download_file(sf, target)
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


# --------------------------------------------------------------------------- the recipe, streamed
class _Spool:
    """The needed passages of one language in a temporary file; ``offsets[k]`` is the byte offset of
    passage ``k`` (of the needed ids) or -1 when the collection lacks it (the last line of an id wins)."""

    def __init__(self, directory: Path, lang: str, path: Path, index: dict[str, int]) -> None:
        import numpy as np

        self.offsets = np.full(len(index), -1, dtype=np.int64)
        self.path = directory / f"{lang}.txt"
        found = 0
        with open(self.path, "wb") as out:
            for line in _lines(path):
                parts = line.rstrip("\n").split("\t", 1)
                if len(parts) != 2:
                    continue
                k = index.get(parts[0])
                if k is None:
                    continue
                found += self.offsets[k] < 0
                self.offsets[k] = out.tell()
                out.write(parts[1].replace("\r", " ").encode("utf-8") + b"\n")
        logger.info("mMARCO %s: %d of %d needed passages found in %s", lang, found, len(index), path.name)
        self._f = open(self.path, "rb")

    def text(self, k: int) -> str:
        off = int(self.offsets[k])
        if off < 0:
            return ""
        self._f.seek(off)
        return self._f.readline().decode("utf-8").rstrip("\n")

    def close(self) -> None:
        self._f.close()


def recipe_rows(limit: int | None = None, weighting: str = "pairs",
                langs: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
    """Aligned rows ``(group_id, lang, text)`` of the SHIFT authors' mMARCO recipe, grouped by id.

    Groups in the order of the unique (qid, positive pid) pairs of ``triples.train.ids.small.tsv``
    (first ``limit`` pairs). ``weighting="pairs"`` (default, as the authors' pairs table: one row per
    unique pair, so ``V_l = (1/N) sum_{(q,p)} (f(p^l) - f(p^src))`` counts a passage once per query it
    is positive for): ``group_id = f"{qid}-{pid}"``; ``weighting="passages"``: each unique passage once,
    ``group_id = pid``. A passage missing from a language's collection has no row for that language
    (the authors' table holds ``""`` there). ``lang`` is the mMARCO code (``dt`` for Dutch). Memory:
    the pair list plus one int64 per needed passage and language; the texts go through a temporary
    file (deleted at the end, also when the consumer stops early).
    """
    if weighting not in WEIGHTINGS:
        raise MlirkitError(f"unknown mMARCO weighting {weighting!r} (choose {', '.join(WEIGHTINGS)})")
    use = LANGS if langs is None else tuple(la for la in LANGS if la in set(langs) or canonical(la) in set(langs))
    if not use:
        raise MlirkitError(f"none of {', '.join(langs or ())} is an mMARCO language ({', '.join(LANGS)})")
    _check(use)
    prs = pairs(limit)
    index: dict[str, int] = {}
    for _, pid in prs:
        index.setdefault(pid, len(index))
    groups = prs if weighting == "pairs" else [(None, pid) for pid in index]
    with tempfile.TemporaryDirectory(prefix="mlirkit-mmarco-") as tmp:
        spools: list[tuple[str, _Spool]] = []
        try:
            for lang in use:
                spools.append((lang, _Spool(Path(tmp), lang, file_for(f"v2/{lang}/docs"), index)))
            for qid, pid in groups:
                k = index[pid]
                gid = pid if qid is None else f"{qid}-{pid}"
                for lang, spool in spools:
                    text = spool.text(k)
                    if text:
                        yield gid, lang, text
        finally:
            for _, spool in spools:
                spool.close()


__all__ = ["FILE_NAMES", "LANGS", "LICENCE", "SIZE", "SUBSETS", "available", "build_lang", "build_multi",
           "recipe_rows"]
