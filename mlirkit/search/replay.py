"""The searcher a run came from, rebuilt from the run's provenance sidecar (:mod:`mlirkit.io.provenance`).

What ``python -m mlirkit.search`` records beside a run (the index directories with each ``meta.json``'s
sha256, the encoder's fingerprint digest, the query-time shift's settings) is enough to score any query
against any document as that search did, e.g. for MRC@k on runs too shallow to hold the union of the
translations' top k (``python -m mlirkit.eval --mrc-from-index``). Nothing is guessed: a run without a
sidecar, a sidecar written for other bytes, an index whose ``meta.json`` changed, an encoder rebuilt from the
index with another fingerprint (the run was searched with other encoder options) or a query-time shift whose
transform cannot be found again is one error saying so; a path the sidecar names is read only when it is a
regular file of plausible size. :func:`mlirkit.eval.mrc.mrc_from_searcher` then checks the run's scores and its
top k against the recomputed ranking. The encoder comes from the index's ``meta.json`` as
``mlirkit.search`` builds it without ``--encoder``; options that run a model's own code are never taken
from a data file (:func:`mlirkit.search.searcher.encoder_for_index`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.search.searcher import Searcher


#: the largest ``meta.json`` and query-shift transform a sidecar may name (real ones: kB and a few MB)
MAX_META_BYTES = 64 * 2**20
MAX_TRANSFORM_BYTES = 4 * 2**30


def _check_plausible(run: Path, path: Path, limit: int) -> None:
    """A path a sidecar names is read only when it is a regular file of at most ``limit`` bytes."""
    import stat

    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        raise MlirkitError(f"{run}: its provenance names {path}, which is not a regular file of at most "
                           f"{limit // 2**20} MiB: not read")


def _index_paths(run: Path, index: dict[str, Any]) -> list[Path]:
    """The index directories a sidecar names, each checked against the ``meta.json`` sha256 it records."""
    from mlirkit.index.layout import META_FILE
    from mlirkit.io.files import file_sha256

    entries = index.get("shards") or ([index] if index.get("path") else [])
    if not entries:
        raise MlirkitError(f"{run}: its provenance names no index (not a run of mlirkit.search)")
    paths = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise MlirkitError(f"{run}: its provenance names an index without a path")
        path = Path(entry["path"])
        meta = path / META_FILE
        if not meta.is_file():
            raise MlirkitError(f"{run}: the index it was searched in, {path}, is not there (paths are as the "
                               f"search was given them; run from the same directory)")
        _check_plausible(run, meta, MAX_META_BYTES)
        if not entry.get("meta_sha256"):
            raise MlirkitError(f"{run}: its provenance records no meta_sha256 of {meta}: which index it was "
                               "searched in cannot be checked")
        if file_sha256(meta) != entry["meta_sha256"]:
            raise MlirkitError(f"{run}: {meta} changed since the run was searched (sha256 differs from its provenance)")
        paths.append(path)
    return paths


def _shift_options(run: Path, query_shift: dict[str, Any] | None) -> dict[str, Any]:
    """The Searcher keywords of the query-time shift a sidecar records (none without one)."""
    if not query_shift:
        return {}
    settings = query_shift.get("settings")
    if not isinstance(settings, dict):
        raise MlirkitError(f"{run}: searched with the query-time shift, whose settings its provenance does not "
                           "record (the Pyserini wrapper, or an earlier mlirkit); search again with mlirkit.search")
    if not settings.get("own_transform") and not settings.get("transform"):
        raise MlirkitError(f"{run}: searched with a query-time shift transform given as an object, not a file; "
                           "it cannot be found again")
    if settings.get("transform"):
        if not Path(settings["transform"]).exists():
            raise MlirkitError(f"{run}: the query-time shift's transform {settings['transform']} is not there")
        _check_plausible(run, Path(settings["transform"]), MAX_TRANSFORM_BYTES)
    return {"query_shift": settings.get("metric") or "cosine", "alpha": settings.get("alpha"),
            "transform": settings.get("transform"), "candidates": settings.get("candidates"),
            "missing": settings.get("missing")}


def searcher_for_run(run_path: str | os.PathLike, *, threads: int | None = None) -> Searcher:
    """A :class:`Searcher` that scores as the search that wrote ``run_path`` did (see the module docstring)."""
    from mlirkit.io.provenance import describe_file, sidecar_path
    from mlirkit.search.sharded import open_index

    run = Path(run_path)
    described = describe_file(run)
    if "provenance_stale" in described:
        raise MlirkitError(f"{run}: its provenance sidecar {described['provenance_stale']} was written for other "
                           "bytes (the run was replaced); the index it came from is unknown")
    sidecar = described.get("provenance")
    if sidecar is None:
        raise MlirkitError(f"{run}: no provenance sidecar ({sidecar_path(run).name}) names the index it came from "
                           "(write runs with mlirkit.search)")
    if sidecar.get("bm25"):
        raise MlirkitError(f"{run}: a BM25 run (mlirkit.lexical search), not a dense search; for MRC write it with "
                           "--hits <corpus size>")
    index = open_index(_index_paths(run, sidecar.get("index") or {}), threads=threads)
    searcher = Searcher(index, threads=threads, **_shift_options(run, sidecar.get("query_shift")))
    recorded = (sidecar.get("encoder") or {}).get("digest")
    if recorded and searcher.encoder.digest != recorded:
        raise MlirkitError(f"{run}: was searched with encoder {recorded[:12]}, the index's meta.json rebuilds "
                           f"{searcher.encoder.digest[:12]} (other encoder options); score it in Python with "
                           "mlirkit.eval.mrc.mrc_from_index(..., encoder=...)")
    shift = (sidecar.get("query_shift") or {}).get("transform_sha256")
    if shift and searcher.shift is not None and getattr(searcher.shift.transform, "sha256", None) != shift:
        raise MlirkitError(f"{run}: the query-time shift's transform changed since the run was searched")
    return searcher


__all__ = ["searcher_for_run"]
