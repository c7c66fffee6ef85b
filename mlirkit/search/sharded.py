"""Search several index directories as one: ``faiss.IndexShards`` over (memory-mapped) shards.

Each shard is opened with ``faiss.read_index(..., IO_FLAG_MMAP_IFC)`` when ``mmap`` (the vectors,
graph storage or inverted lists stay in the page cache: a node holds only what queries touch, and
several processes share one copy). ``IndexShards`` with ``successive_ids`` numbers shard ``s``'s rows
after those of shards ``0..s-1``, so a hit's row maps to the concatenated ``docid`` lists; its
result merge keeps the ``k`` best of the per-shard ``k`` best, so for exact shards the result equals
a search of one index holding all the vectors.

Thread budget: FAISS parallelises each search over queries with OpenMP; ``threads`` caps it while the
index is searched (:func:`mlirkit.base.threads.faiss_threads`, restored afterwards). Shards are searched
one after another by default (``parallel_shards=False``): the OpenMP threads of the worker threads ``IndexShards`` would start do
not inherit the cap, so shard-parallel search uses up to ``shards x cores`` threads. Queries go in
batches of ``batch_size`` so the ``batch x k`` result buffers stay small.
"""
from __future__ import annotations

import logging
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.threads import faiss_threads

logger = logging.getLogger(__name__)


class ShardedIndex:
    """Index directories searched as one index; quacks like :class:`~mlirkit.index.reader.DenseIndex`
    (``docids``, ``langs``, ``meta``, ``dim``, ``encoder``, ``transform``, ``faiss_index``, ``path``
    = the first shard, whose ``transform.safetensors`` gives the query side).

    Shards must share encoder, dimension, normalisation and transform (checked as for merging) and
    document ids must be unique across them. Shards may be of different index types.
    """

    def __init__(self, paths: Sequence[str | os.PathLike], *, mmap: bool = True, threads: int | None = None,
                 parallel_shards: bool = False, check_ids: bool = True, **search_params: Any) -> None:
        from mlirkit.index.merge import check_consistent, check_unique_ids
        from mlirkit.index.reader import DenseIndex

        if not paths:
            raise MlirkitError("no index directories given")
        if len({Path(p).resolve() for p in paths}) != len(paths):
            raise MlirkitError("the same index directory is given twice")
        self.shards = [DenseIndex(p, mmap=mmap) for p in paths]
        if len(self.shards) > 1:
            for shard in self.shards:
                if not shard.meta:
                    raise MlirkitError(f"{shard.path} has no meta.json: cannot check it matches the other shards")
            check_consistent(self.shards)
            if check_ids:
                check_unique_ids(self.shards)
        self.path = self.shards[0].path
        self.meta = self.shards[0].meta
        self.threads = threads
        self.parallel_shards = parallel_shards
        self.search_params = search_params

    @property
    def dim(self) -> int:
        return self.shards[0].dim

    @property
    def encoder(self) -> dict[str, Any] | None:
        return self.shards[0].encoder

    @property
    def transform(self) -> dict[str, Any] | None:
        return self.shards[0].transform

    @cached_property
    def docids(self) -> list[str]:
        return [doc_id for shard in self.shards for doc_id in shard.docids]

    @cached_property
    def langs(self) -> list[str]:
        return [lang for shard in self.shards for lang in shard.langs]

    @cached_property
    def faiss_index(self):
        import faiss

        from mlirkit.index.types import set_search_params

        subs = []
        for shard in self.shards:
            sub = shard.faiss_index
            set_search_params(sub, None, **self.search_params)
            subs.append(sub)
        if len(subs) == 1:
            return subs[0]
        index = faiss.IndexShards(self.dim, self.parallel_shards, True)
        for sub in subs:
            index.add_shard(sub)
        self._subs = subs  # the Python objects own the shard indexes: keep them alive
        return index

    def search(self, vectors: np.ndarray, k: int, batch_size: int = 1024) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, rows)`` of shape ``(n, k)``, rows into :attr:`docids` (-1 = no hit), in batches."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise MlirkitError(f"query vectors of shape {vectors.shape} for an index of dimension {self.dim}")
        with faiss_threads(self.threads):
            return self._search(self.faiss_index, vectors, k, batch_size)

    @staticmethod
    def _search(index: Any, vectors: np.ndarray, k: int, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, index.ntotal)
        scores = np.empty((len(vectors), k), dtype=np.float32)
        rows = np.empty((len(vectors), k), dtype=np.int64)
        for start in range(0, len(vectors), batch_size):
            scores[start:start + batch_size], rows[start:start + batch_size] = index.search(
                vectors[start:start + batch_size], k)
        return scores, rows


def open_index(paths: Sequence[str | os.PathLike] | str | os.PathLike, *, mmap: bool = False,
               threads: int | None = None, skip_incomplete: bool = False, **search_params: Any):
    """One directory -> :class:`DenseIndex` (search parameters applied); several -> :class:`ShardedIndex`.

    ``threads`` caps FAISS's threads while the index is searched (:meth:`ShardedIndex.search`,
    :class:`~mlirkit.search.searcher.Searcher`), restored afterwards; a CLI's ``--threads`` sets it
    process-wide instead (:func:`mlirkit.base.threads.set_threads`).

    A directory holding no ``index`` file but ``shard-*`` subdirectories is opened as those shards (a
    sharded layout: ``OUT/shard-000``, ``OUT/shard-001``, ...). A shard that is incomplete (no ``index`` or
    no ``docid`` file), or missing (its ``meta.json`` ``shard`` records say ``count`` shards, fewer are
    there), is an error naming it and what is missing: a search over the others would be a partial run
    that looks complete. ``skip_incomplete=True`` (``--skip-incomplete-shards``) searches the others and
    warns how many documents were left out (:func:`complete_shards`)."""
    from mlirkit.index.layout import FAISS_FILE

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if len(paths) == 1 and not (paths[0] / FAISS_FILE).exists():
        subdirs = sorted(p for p in paths[0].glob("shard-*") if p.is_dir())
        if subdirs:
            paths = subdirs
    if len(paths) > 1:
        paths = complete_shards(paths, skip_incomplete)
    if len(paths) == 1:
        from mlirkit.index.reader import DenseIndex
        from mlirkit.index.types import set_search_params

        index = DenseIndex(paths[0], mmap=mmap, threads=threads)
        if any(v is not None for v in search_params.values()):
            set_search_params(index.faiss_index, None, **search_params)
        return index
    return ShardedIndex(paths, mmap=mmap, threads=threads, **search_params)


def complete_shards(paths: Sequence[Path], skip: bool = False) -> list[Path]:
    """The shard directories of ``paths`` that hold ``index`` and ``docid``, checked against the shard
    records of their ``meta.json`` (``{"id": i, "count": n}``: ids ``0..n-1`` all present). An incomplete
    or missing shard raises :class:`MlirkitError` (which shard, what is missing) unless ``skip``: then it is
    left out and one warning says how many shards and documents (``docid`` lines, else ``meta.json``'s
    ``count``) were skipped."""
    from mlirkit.index.layout import DOCID_FILE, FAISS_FILE, META_FILE
    from mlirkit.index.reader import read_meta

    problems: list[tuple[str, int | None]] = []  # (what is wrong, documents lost or None if unknown)
    kept: list[Path] = []
    ids: dict[int, int] = {}  # recorded shard id -> shard count
    for path in paths:
        meta = read_meta(path / META_FILE) if (path / META_FILE).is_file() else {}
        shard = meta.get("shard") if isinstance(meta.get("shard"), dict) else {}
        if isinstance(shard.get("count"), int) and shard["count"] > 1 and isinstance(shard.get("id"), int):
            ids[shard["id"]] = shard["count"]
        missing = [f for f in (FAISS_FILE, DOCID_FILE) if not (path / f).is_file()]
        if missing:
            docs = _count_lines(path / DOCID_FILE) if (path / DOCID_FILE).is_file() else meta.get("count")
            problems.append((f"shard {path} has no {' and no '.join(repr(m) for m in missing)} file",
                             docs if isinstance(docs, int) else None))
        else:
            kept.append(path)
    counts = set(ids.values())
    if len(counts) == 1:
        count = counts.pop()
        absent = [i for i in range(count) if i not in ids]
        if absent:
            problems.append((f"shard{'s' if len(absent) > 1 else ''} {', '.join(map(str, absent))} of {count} "
                             f"(meta.json 'shard' records) {'are' if len(absent) > 1 else 'is'} missing", None))
    if not problems:
        return list(paths)
    if not skip:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise MlirkitError(f"{problems[0][0]}{more}: searching the other shards would leave its documents out; "
                           "complete it, or give --skip-incomplete-shards (Python: skip_incomplete=True) to search "
                           "without it")
    if not kept:
        raise MlirkitError(f"{problems[0][0]}: no complete shard left to search")
    known = sum(n for _, n in problems if n is not None)
    unknown = sum(1 for _, n in problems if n is None)
    logger.warning("skipped %d incomplete or missing shard(s) holding %d document(s)%s: %s", len(problems), known,
                   f" plus the documents of {unknown} shard(s) of unknown size" if unknown else "",
                   "; ".join(w for w, _ in problems))
    return kept


def _count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


__all__ = ["ShardedIndex", "open_index"]
