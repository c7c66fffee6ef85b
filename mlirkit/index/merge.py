"""Merge index directories (shards) into one index directory.

Shards must agree on everything that makes their vectors comparable: encoder fingerprint, dimension,
metric, normalisation and language transform (method, alpha, file hash); a shard made otherwise is
refused, naming the shard and the differing field. Document ids must be unique across shards.

Order: shards written by ``python -m mlirkit.encode --shard-id i --num-shards n`` (document ``j`` of the
corpus goes to shard ``j % n``) are interleaved back into corpus order when all ``n`` shards are given,
so the merged index equals the single-process one document for document; other shards are
concatenated in the order given.

The vectors are read back from the shards (exactly: flat or HNSW shards) and added to a new index of
the requested type (default: the shards' own type), so a compressed output index is trained on all the
documents. Compressed shards (ivf-pq) cannot be merged: each trained its own quantiser.
"""
from __future__ import annotations

import logging
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.base.vectors import check_finite
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.index.layout import TRANSFORM_FILE

logger = logging.getLogger(__name__)

#: meta.json fields that must be identical across shards
CONSISTENT_FIELDS = ("encoder", "dim", "metric", "normalized", "transform")


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _comparable(meta: dict[str, Any], name: str) -> Any:
    """A meta.json field as shards must agree on it: a transform without its record of the languages it lacks
    (each shard records those of its own documents: :func:`merged_missing_record`)."""
    value = meta.get(name)
    if name == "transform" and isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "missing_languages"}
    return value


def merged_missing_record(indexes: Sequence[Any]) -> dict[str, Any] | None:
    """The record of the languages the shards' transform lacks, merged: every shard kept them (``policy keep``:
    the union of what they kept); a shard that filled a language from its own documents is refused (a fill
    needs the whole corpus)."""
    records = [(index, (index.meta.get("transform") or {}).get("missing_languages")) for index in indexes]
    records = [(index, r) for index, r in records if r]
    if not records:
        return None
    for index, record in records:
        if record.get("filled") or record.get("policy") != "keep":
            raise MlirkitError(f"{index.path} filled the languages its transform lacks from its own documents "
                               f"({', '.join(record.get('filled') or {}) or record.get('policy')}): shards merge when "
                               f"they keep them (--missing keep), a fill needs the whole corpus")
    kept: dict[str, str] = {}
    for _, record in records:
        kept.update(record.get("kept") or {})
    return {"policy": "keep", "filled": {}, "kept": dict(sorted(kept.items()))}


def check_consistent(indexes: Sequence[Any], fields: Sequence[str] = CONSISTENT_FIELDS) -> None:
    """Refuse shards whose ``meta.json`` differ in any of ``fields`` (message names shard and field)."""
    first = indexes[0]
    for other in indexes[1:]:
        for name in fields:
            a, b = _comparable(first.meta, name), _comparable(other.meta, name)
            if a != b:
                what = {"encoder": "encoders", "transform": "transforms"}.get(name, name)
                if isinstance(a, dict) and isinstance(b, dict):
                    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                    detail = "; ".join(f"{k}: {_describe(a.get(k))} != {_describe(b.get(k))}" for k in keys)
                else:
                    detail = f"{_describe(a)} != {_describe(b)}"
                raise MlirkitError(f"{other.path} and {first.path} were made with different {what} "
                                   f"({name}: {detail})")
        if other.dim != first.dim:
            raise MlirkitError(f"{other.path} has dimension {other.dim} but {first.path} has {first.dim}")


def check_unique_ids(indexes: Sequence[Any]) -> None:
    """Refuse a document id that appears in two shards (or twice in one)."""
    where: dict[str, Path] = {}
    for index in indexes:
        for doc_id in index.docids:
            if doc_id in where:
                raise MlirkitError(f"duplicate document id {doc_id!r} in {index.path} "
                                   f"(also in {where[doc_id]})")
            where[doc_id] = index.path


def round_robin_order(indexes: Sequence[Any]) -> list[Any] | None:
    """The shards sorted by shard id when they are exactly shards ``0..n-1`` of one ``--num-shards n``
    split (so their rows interleave back into corpus order), else None."""
    shards = [index.meta.get("shard") or {} for index in indexes]
    counts = {s.get("count") for s in shards}
    if len(indexes) < 2 or len(counts) != 1:
        return None
    n = counts.pop()
    if not isinstance(n, int) or n != len(indexes) or sorted(s.get("id") for s in shards) != list(range(n)):
        return None
    ordered = sorted(indexes, key=lambda index: index.meta["shard"]["id"])
    sizes = [len(index.docids) for index in ordered]
    # shard i holds documents i, i+n, ...: sizes are non-increasing and differ by at most one
    if any(a < b for a, b in zip(sizes, sizes[1:])) or sizes[0] - sizes[-1] > 1:
        return None
    return ordered


def row_plan(indexes: Sequence[Any], interleave: bool) -> list[tuple[int, int]]:
    """``(shard, row)`` for every output row, in output order."""
    sizes = [len(index.docids) for index in indexes]
    if not interleave:
        return [(s, r) for s, size in enumerate(sizes) for r in range(size)]
    return [(s, r) for r in range(max(sizes)) for s in range(len(sizes)) if r < sizes[s]]


def merge_indexes(shard_dirs: Sequence[str | os.PathLike], output: str | os.PathLike, *, overwrite: bool = False,
                  index_type: Any = None, order: str = "auto", chunk_size: int = 65536,
                  extra_meta: dict[str, Any] | None = None, show_progress: bool = False,
                  record_sources: bool = True) -> dict[str, Any]:
    """Merge ``shard_dirs`` into ``output`` (see module docstring); returns a summary dict.

    ``order``: ``auto`` (interleave a complete ``--num-shards`` split, else concatenate), ``concat``.
    ``index_type``: output type (spec, name or None = the shards' type). ``record_sources``: list the
    shard directories in ``meta.json`` (``merged_from``).
    """
    from tqdm.auto import tqdm

    from mlirkit.base.fs import refuse_existing
    from mlirkit.index.reader import DenseIndex
    from mlirkit.index.types import IndexSpec, is_exact
    from mlirkit.index.writer import IndexWriter

    if not shard_dirs:
        raise MlirkitError("no shard directories to merge")
    if order not in ("auto", "concat"):
        raise MlirkitError(f"order must be 'auto' or 'concat', got {order!r}")
    output = Path(output)
    refuse_existing(output, overwrite, "index")
    paths = [Path(p) for p in shard_dirs]
    for path in paths:
        if path.resolve() == output.resolve():
            raise MlirkitError(f"{path} is both a shard and the output")
    if len({p.resolve() for p in paths}) != len(paths):
        raise MlirkitError("the same shard directory is given twice")
    indexes = [DenseIndex(p) for p in paths]
    for index in indexes:
        if not index.meta:
            raise MlirkitError(f"{index.path} has no meta.json (not written by mlirkit): cannot check it is "
                               f"compatible with the other shards")
    check_consistent(indexes)
    check_unique_ids(indexes)
    for index in indexes:
        if len(index.langs) != len(index.docids):  # raises on mismatch
            raise MlirkitError(f"{index.path}: langs and docid differ in length")
        if index.faiss_index.ntotal != len(index.docids):
            raise MlirkitError(f"{index.path}: index and docid differ in length")
        if not is_exact(index.faiss_index):
            raise MlirkitError(f"{index.path} is a compressed ({index.index_spec.name}) shard: each shard trained "
                               f"its own quantiser, so the codes cannot be merged; encode the shards with "
                               f"{option('index_type', 'flat')} and merge with {option('index_type', index.index_spec.name)}")
    if index_type is None:
        names = {index.index_spec.name for index in indexes}
        if len(names) != 1:
            raise MlirkitError(f"shards have different index types ({', '.join(sorted(names))}): give {option('index_type')}")
        spec = indexes[0].index_spec
    else:
        spec = IndexSpec.coerce(index_type)
    ordered = round_robin_order(indexes) if order == "auto" else None
    interleave = ordered is not None
    if interleave:
        indexes = ordered
    plan = row_plan(indexes, interleave)
    with_embeddings = all(index.has_embeddings for index in indexes)
    if not with_embeddings and any(index.has_embeddings for index in indexes):
        logger.warning("only some shards have embeddings.npy: the merged index will have none")
    transform_files = [index.path / TRANSFORM_FILE for index in indexes]
    first = indexes[0]
    meta = {k: _comparable(first.meta, k) for k in CONSISTENT_FIELDS}
    record = merged_missing_record(indexes)
    if record is not None:
        meta["transform"] = {**meta["transform"], "missing_languages": record}
    corpora = {index.meta.get("corpus") for index in indexes}
    extra = {"encoder_name": first.meta.get("encoder_name"), "encoder_options": first.meta.get("encoder_options"),
             "corpus": corpora.pop() if len(corpora) == 1 else None, "shard": {"id": 0, "count": 1},
             "merged_from": [{"path": str(index.path), "count": len(index.docids),
                              "shard": index.meta.get("shard")} for index in indexes] if record_sources else None,
             **(extra_meta or {})}
    vectors = [_RowSource(index, with_embeddings) for index in indexes]
    with IndexWriter(output, dim=first.dim, encoder=meta["encoder"], normalized=bool(meta["normalized"]),
                     transform=meta["transform"], save_embeddings=with_embeddings, overwrite=overwrite,
                     extra_meta=extra, index_type=spec) as writer, \
            tqdm(total=len(plan), unit="doc", desc="merge", disable=not show_progress) as bar:
        if meta["transform"] is not None:
            present = [f for f in transform_files if f.is_file()]
            if present:
                shutil.copyfile(present[0], writer.tmp / TRANSFORM_FILE)
            else:
                logger.warning("no shard has %s: searching the merged index cannot apply the query side",
                               TRANSFORM_FILE)
        for start in range(0, len(plan), chunk_size):
            rows = plan[start:start + chunk_size]
            ids = [indexes[s].docids[r] for s, r in rows]
            langs = [indexes[s].langs[r] for s, r in rows]
            vecs, raw = _gather(vectors, rows)
            writer.add(ids, langs, vecs, raw=raw)
            bar.update(len(rows))
    lang_counts = Counter(lang for index in indexes for lang in index.langs)
    return {"index": str(output), "documents": len(plan), "shards": len(indexes),
            "order": "interleaved" if interleave else "concatenated", "index_type": spec.name,
            "languages": dict(sorted(lang_counts.items()))}


class _RowSource:
    """Random access to one shard's indexed vectors (and raw embeddings) by row, cached per block."""

    def __init__(self, index: Any, with_embeddings: bool) -> None:
        self.index = index
        self.raw = index.embeddings(mmap=True) if with_embeddings else None

    def rows(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray | None]:
        lo, hi = min(rows), max(rows) + 1
        block = self.index.faiss_index.reconstruct_n(lo, hi - lo)
        picked = block[np.asarray(rows) - lo]
        raw = None if self.raw is None else np.asarray(self.raw[np.asarray(rows)], dtype=np.float32)
        check_finite("indexed vectors", picked, self.index.path)
        if raw is not None:
            check_finite("embeddings.npy", raw, self.index.path)
        return picked, raw


def _gather(sources: list[_RowSource], rows: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray | None]:
    by_shard: dict[int, list[int]] = {}
    for pos, (s, _) in enumerate(rows):
        by_shard.setdefault(s, []).append(pos)
    dim = sources[0].index.dim
    vecs = np.empty((len(rows), dim), dtype=np.float32)
    raw = None if sources[0].raw is None else np.empty((len(rows), dim), dtype=np.float32)
    for s, positions in by_shard.items():
        v, r = sources[s].rows([rows[p][1] for p in positions])
        vecs[positions] = v
        if raw is not None:
            raw[positions] = r
    return vecs, raw


__all__ = ["check_consistent", "check_unique_ids", "merge_indexes"]
