"""Distributed encoding on Ray (``python -m mlirkit.encode --engine ray``), same output as one process.

Plan (one Ray Data job):

1. The driver streams the corpus through :func:`mlirkit.io.corpus.read_corpus` -- the very reader the
   single-process path uses, so parsing, language defaults and error messages (file:line) are the
   same -- and cuts it into blocks of ``block_size`` consecutive documents. Each block becomes one
   Arrow table (columns ``row``, ``doc_id``, ``text``, ``lang``; ``row`` = position in the corpus)
   put into the Ray object store; ``ray.data.from_arrow_refs`` makes them a Dataset.
2. ``map_batches`` runs :class:`EncodeActor` in an actor pool (``--num-workers`` actors, each with
   ``--num-gpus-per-worker`` GPUs): an actor loads the encoder and the language transform once, then
   for each block runs :class:`~mlirkit.encode.indexer.Indexer` -- encoder, transform by document
   language, L2 normalisation -- into a flat shard directory named by its row range
   (``rows-<start>-<stop>``).
3. The driver checks that the returned row ranges tile ``[0, n)`` exactly, then merges the shards in
   row order with :func:`mlirkit.index.merge.merge_indexes`, which also builds the requested index
   type (trained types are trained once, on all documents, in the shifted space).

Exactly once: a shard's name depends only on its rows, and shards are written atomically (temporary
directory, then rename), so a task that Ray retries after a worker crash rewrites the same shard (or
finds it complete and skips it) and a crashed attempt leaves no finished-looking shard. Ray Data
restarts failed actors and retries their tasks (``max_restarts=-1``, ``max_task_retries=-1``).

The shard directory must be on a file system every worker can write and the driver can read (the
output's parent by default; NFS or similar on a multi-node cluster).
"""
from __future__ import annotations

import copy
import logging
import os
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.fs import made_directory
from mlirkit.base.option_names import option
from mlirkit.encoders.base import Encoder
from mlirkit.io.records import Doc
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.defaults import DEFAULT_ALPHA

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)

SHARD_PREFIX = "rows-"


def shard_name(start: int, stop: int) -> str:
    return f"{SHARD_PREFIX}{start:012d}-{stop:012d}"


def encoder_factory(name: str, encoder_class: str | None = None, **options: Any) -> Callable[[], Encoder]:
    """A picklable recipe that loads an encoder inside a Ray actor."""
    from mlirkit.encoders import load_encoder

    return partial(load_encoder, name, encoder_class, **options)


def contiguous_runs(rows: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges ``[i, j)`` of ``rows`` over which the values increase by exactly one."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    edges = [0, *breaks.tolist(), len(rows)]
    return list(zip(edges[:-1], edges[1:]))


class EncodeActor:
    """Ray Data actor: loads the encoder (and transform) once, writes one flat shard per row range."""

    def __init__(self, make_encoder: Callable[[], Encoder], shard_root: str, transform: LanguageTransform | None,
                 alpha: Alpha, strict: bool, force: bool, save_embeddings: bool,
                 chunk_size: int, encoder_batch_size: int | None, meta: dict[str, Any],
                 crash_once_marker: str | None = None, indexer_options: dict[str, Any] | None = None) -> None:
        self.encoder = make_encoder()
        self.transform = transform  # loaded once by the driver, shipped to every actor
        self.shard_root = Path(shard_root)
        self.alpha = alpha
        self.strict = strict
        self.force = force
        self.save_embeddings = save_embeddings
        self.chunk_size = chunk_size
        self.encoder_batch_size = encoder_batch_size
        self.meta = meta
        self.indexer_options = indexer_options or {}  # further Indexer keyword arguments (e.g. langid_threshold)
        self.crash_once_marker = crash_once_marker  # tests only: kill this worker once after a write

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list]:
        out: dict[str, list] = {"start": [], "stop": [], "path": [], "count": [], "skipped": []}
        for i, j in contiguous_runs(batch["row"]):
            start, stop = int(batch["row"][i]), int(batch["row"][j - 1]) + 1
            docs = [Doc(str(d), str(t), str(lang)) for d, t, lang in
                    zip(batch["doc_id"][i:j], batch["text"][i:j], batch["lang"][i:j])]
            path = self.shard_root / shard_name(start, stop)
            skipped = _shard_complete(path, docs)
            if not skipped:
                self._write(path, docs, start, stop)
            out["start"].append(start)
            out["stop"].append(stop)
            out["path"].append(str(path))
            out["count"].append(len(docs))
            out["skipped"].append(skipped)
            self._maybe_crash()
        return out

    def _write(self, path: Path, docs: list[Doc], start: int, stop: int) -> None:
        from mlirkit.encode.indexer import Indexer

        Indexer(path, self.encoder, transform=self.transform, alpha=self.alpha, save_embeddings=self.save_embeddings,
                overwrite=True, batch_size=self.encoder_batch_size, chunk_size=self.chunk_size, strict=self.strict,
                force=self.force, show_progress=False, encoder_name=self.meta.get("encoder_name"),
                encoder_options=self.meta.get("encoder_options"),
                extra_meta={"rows": [start, stop]}, **self.indexer_options).index(docs)

    def _maybe_crash(self) -> None:
        marker = self.crash_once_marker
        if marker and not os.path.exists(marker):
            Path(marker).write_text(str(os.getpid()))
            os._exit(1)


def _loaded(transform: LanguageTransform | str | os.PathLike | None) -> LanguageTransform | None:
    """The transform, loaded if a path, with an absolute :attr:`~LanguageTransform.path` (workers copy the file)."""
    from mlirkit.transforms.transform import LanguageTransform

    if transform is None:
        return None
    if not isinstance(transform, LanguageTransform):
        from mlirkit.transforms.io import load_transform

        transform = load_transform(transform)
    if transform.path is None:
        raise MlirkitError("the transform must be saved to a file before it is used on Ray")
    transform = copy.copy(transform)
    transform.path = Path(transform.path).resolve()
    return transform


def _shard_complete(path: Path, docs: list[Doc]) -> bool:
    """A shard left by an earlier attempt that holds exactly these documents (a retry skips it)."""
    from mlirkit.index.layout import DOCID_FILE, META_FILE

    if not (path / META_FILE).is_file() or not (path / DOCID_FILE).is_file():
        return False
    try:
        ids = (path / DOCID_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return ids == [d.doc_id for d in docs]


def check_tiling(results: list[dict[str, Any]], total: int) -> list[dict[str, Any]]:
    """The shard results sorted by row, each row range once; refuse gaps and overlaps."""
    unique: dict[tuple[int, int], dict[str, Any]] = {}
    for r in results:
        unique[(int(r["start"]), int(r["stop"]))] = r  # a retried range reports the same shard again
    ordered = [unique[key] for key in sorted(unique)]
    expected = 0
    for r in ordered:
        if int(r["start"]) != expected:
            kind = "overlap" if int(r["start"]) < expected else "gap"
            raise MlirkitError(f"Ray encoding returned an {kind} at corpus row {min(expected, int(r['start']))}")
        expected = int(r["stop"])
    if expected != total:
        raise MlirkitError(f"Ray encoding covered {expected} of {total} documents")
    return ordered


def user_error(exc: BaseException) -> MlirkitError | None:
    """The :class:`MlirkitError` behind an exception Ray raised on the driver (``RayTaskError.cause``,
    ``__cause__``, ``__context__``), or None."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        cause = getattr(e, "cause", None)
        if type(e) is MlirkitError or (isinstance(e, MlirkitError) and cause is None):
            return e
        todo.extend([cause if isinstance(cause, BaseException) else None, e.__cause__, e.__context__])
    # an actor that died in its constructor reaches the driver as ActorDiedError with the text only
    marker = f"{MlirkitError.__module__}.{MlirkitError.__name__}: "
    text = str(exc)
    if marker in text:
        return MlirkitError(text.rsplit(marker, 1)[1].strip().splitlines()[0])
    return None


@dataclass
class RayOptions:
    address: str | None = None
    num_workers: int = 1
    num_gpus_per_worker: float = 0.0
    num_cpus_per_worker: float = 1.0
    block_size: int = 10_000
    shard_root: str | None = None


def encode_with_ray(docs: Iterable[Doc], index_dir: str | os.PathLike, *, make_encoder: Callable[[], Encoder],
                    encoder_name: str | None = None, encoder_options: dict[str, Any] | None = None,
                    transform: LanguageTransform | str | os.PathLike | None = None, alpha: AlphaLike = DEFAULT_ALPHA,
                    strict: bool = False, force: bool = False, save_embeddings: bool = False,
                    overwrite: bool = False, index_type: Any = None, chunk_size: int = 2048,
                    batch_size: int | None = None, options: RayOptions | None = None,
                    extra_meta: dict[str, Any] | None = None, show_progress: bool = True,
                    indexer_options: dict[str, Any] | None = None,
                    _crash_once_marker: str | None = None) -> dict[str, Any]:
    """Encode ``docs`` into ``index_dir`` on a Ray cluster (see module docstring); returns a summary.

    ``make_encoder`` is a picklable zero-argument callable run once in each actor (e.g.
    :func:`encoder_factory`); ``transform`` is a transform or its file, loaded once here and sent to every
    worker (its file must be readable by every worker, which copies it into its shard); ``indexer_options`` are
    passed on to each actor's :class:`~mlirkit.encode.indexer.Indexer`.
    """
    try:
        import pyarrow as pa
        import ray
    except ImportError:
        raise MlirkitError(f"{option('engine', 'ray')} needs Ray: pip install 'mlirkit[ray]'") from None
    from mlirkit.base.fs import refuse_existing
    from mlirkit.index.merge import merge_indexes

    options = options or RayOptions()
    if options.num_workers < 1:
        raise MlirkitError(f"{option('num_workers')} must be >= 1, got {options.num_workers}")
    if options.num_gpus_per_worker < 0:
        raise MlirkitError(f"{option('num_gpus_per_worker')} must be >= 0, got {options.num_gpus_per_worker}")
    if options.block_size < 1:
        raise MlirkitError(f"block size must be >= 1, got {options.block_size}")
    index_dir = Path(index_dir)
    refuse_existing(index_dir, overwrite, "index")
    alpha = Alpha.coerce(alpha)
    transform = _loaded(transform)  # fails fast on a bad file, before starting workers
    start_time = time.perf_counter()
    started_here = False
    if not ray.is_initialized():
        ray.init(address=options.address, include_dashboard=False, log_to_driver=False,
                 **({"num_cpus": max(1, int(options.num_workers * options.num_cpus_per_worker))}
                    if options.address is None else {}))
        started_here = True
    parent = Path(options.shard_root) if options.shard_root else index_dir.parent
    with made_directory(parent):  # created for the shards; removed again (while empty) when the encode fails
        shard_root = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.ray-shards-", dir=parent))
        try:
            refs, total, lang_counts = [], 0, Counter()
            block: list[Doc] = []

            def flush() -> None:
                nonlocal total
                table = pa.table({"row": np.arange(total, total + len(block), dtype=np.int64),
                                  "doc_id": [d.doc_id for d in block], "text": [d.text for d in block],
                                  "lang": [d.lang for d in block]})
                refs.append(ray.put(table))
                total += len(block)
                block.clear()

            for doc in docs:
                block.append(doc)
                lang_counts[doc.lang] += 1
                if len(block) >= options.block_size:
                    flush()
            if block:
                flush()
            if total == 0:
                raise MlirkitError("no documents to index")
            if transform is not None:  # a block sees part of the corpus: a fill from it would differ
                from mlirkit.encode.indexer import refuse_partial_fill

                refuse_partial_fill(transform, [la for la, n in lang_counts.items() for _ in range(n)],
                                    (indexer_options or {}).get("missing"), "Ray")
                indexer_options = {**(indexer_options or {}), "missing": "keep"}  # nothing to fill, or keep asked
            logger.info("encoding %d documents in %d blocks on Ray with %d workers", total, len(refs), options.num_workers)
            meta = {"encoder_name": encoder_name, "encoder_options": encoder_options or {}}
            ds = ray.data.from_arrow_refs(refs)
            encoded = ds.map_batches(
                EncodeActor, batch_size=None, batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=options.num_workers),
                num_gpus=options.num_gpus_per_worker or None, num_cpus=options.num_cpus_per_worker,
                fn_constructor_kwargs=dict(make_encoder=make_encoder, shard_root=str(shard_root),
                                           transform=transform, alpha=alpha, strict=strict, force=force,
                                           save_embeddings=save_embeddings, chunk_size=chunk_size,
                                           encoder_batch_size=batch_size, meta=meta,
                                           crash_once_marker=_crash_once_marker, indexer_options=indexer_options))
            try:
                results = encoded.take_all()
            except Exception as e:  # an actor's MlirkitError (bad encoder name, transform mismatch, ...) stays one line
                cause = user_error(e)
                if cause is None:
                    raise
                raise MlirkitError(str(cause)) from None
            ordered = check_tiling(results, total)
            encode_seconds = time.perf_counter() - start_time
            summary = merge_indexes([r["path"] for r in ordered], index_dir, overwrite=overwrite, index_type=index_type,
                                    order="concat", show_progress=show_progress, record_sources=False,
                                    extra_meta={**meta, **(extra_meta or {}),
                                                "engine": {"name": "ray", "workers": options.num_workers,
                                                           "gpus_per_worker": options.num_gpus_per_worker,
                                                           "blocks": len(ordered)}})
        finally:
            shutil.rmtree(shard_root, ignore_errors=True)
            if started_here:
                ray.shutdown()
    seconds = time.perf_counter() - start_time
    summary.update({"documents": total, "blocks": len(ordered), "retried_blocks_skipped":
                    sum(bool(r["skipped"]) for r in results), "encode_seconds": round(encode_seconds, 2),
                    "seconds": round(seconds, 2), "docs_per_second": round(total / seconds, 1) if seconds else 0.0,
                    "languages": dict(sorted(lang_counts.items()))})
    return summary


__all__ = ["RayOptions", "check_tiling", "encode_with_ray", "encoder_factory"]
