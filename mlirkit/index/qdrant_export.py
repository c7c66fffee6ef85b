"""An mlirkit index directory as a Qdrant Edge shard (``qdrant-edge-py``, the ``qdrant`` extra).

The output directory holds ``shard/`` (a Qdrant Edge shard: the server's segment format), ``mlirkit_qdrant.json``
(what the shard is: the source index's ``meta.json`` with its encoder and transform records, the vector
names, the shift's languages) and, for a SHIFT index, the index's transform file and ``shift.safetensors``
(the shift with the document languages it had no vector for filled as the index's policy says).

One point per document, id = row, payload ``{"docid", "lang"}`` (``lang`` a keyword payload index), and,
all with ``Distance.Dot``:

- ``indexed``: the FAISS index's vectors as they are (plain or index-time shifted);
- ``shift`` (a SHIFT index with ``embeddings.npy``): ``[d, e_l]``, the raw document and the one-hot code of
  its language among the shift's ``M`` languages (zeros: never shifted). A query of language ``s`` sends
  ``[q, alpha_l (q.V_s - q.V_l) for each l]``, so that ``score = q.(d - alpha_l V_l + alpha_l V_s) = q.d'_s``,
  the query-time shift's inner product (:mod:`mlirkit.search.query_shift`) with alpha chosen at query time.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

SHARD_FORMAT = "mlirkit-qdrant-shard"
SHARD_FORMAT_VERSION = 1
SHARD_META_FILE = "mlirkit_qdrant.json"
SHARD_DIR = "shard"
SHIFT_FILE = "shift.safetensors"
INDEXED_VECTOR = "indexed"
SHIFT_VECTOR = "shift"
#: points per upsert
BATCH = 2048


def shift_languages(transform) -> list[str]:
    """The shift's languages in the order of the one-hot code: the pivot (``V = 0``) first."""
    return [transform.source_lang, *transform.languages]


def export_qdrant(index_dir: str | os.PathLike, output: str | os.PathLike, *, overwrite: bool = False) -> dict[str, Any]:
    """Write a Qdrant Edge shard of the index at ``index_dir`` into ``output`` (atomically); a summary."""
    import qdrant_edge as qd

    from mlirkit.base.fs import atomic_directory
    from mlirkit.base.langs import UNKNOWN, canonical
    from mlirkit.index.layout import TRANSFORM_FILE
    from mlirkit.index.reader import DenseIndex
    from mlirkit.transforms import load_transform
    from mlirkit.transforms.hybrid import fill_missing_from_corpus
    from mlirkit.transforms.io import save_transform

    index = DenseIndex(index_dir)
    indexed = np.asarray(index.indexed_vectors(), dtype=np.float32)
    docids, langs = index.docids, index.langs
    meta_transform = index.transform or {}
    shift = None
    if meta_transform.get("method") == "shift" and index.has_embeddings:
        policy = (meta_transform.get("missing_languages") or {}).get("policy")
        shift = fill_missing_from_corpus(load_transform(index.path / TRANSFORM_FILE), index.embeddings(), langs,
                                         policy=policy, origin=str(index.path))
    elif meta_transform.get("method") == "shift":
        logger.warning("%s has no embeddings.npy: the shard has no %r vector (no query-time shift)", index.path,
                       SHIFT_VECTOR)
    vectors = {INDEXED_VECTOR: qd.EdgeVectorParams(size=indexed.shape[1], distance=qd.Distance.Dot)}
    shift_langs: list[str] = []
    if shift is not None:
        shift_langs = shift_languages(shift)
        code_of = {la: k for k, la in enumerate(shift_langs)}
        codes = np.array([code_of.get(canonical(la) or UNKNOWN, -1) for la in langs])
        raw = np.asarray(index.embeddings(), dtype=np.float32)
        vectors[SHIFT_VECTOR] = qd.EdgeVectorParams(size=raw.shape[1] + len(shift_langs), distance=qd.Distance.Dot)
    with atomic_directory(output, overwrite, kind="qdrant-shard") as tmp:
        shard = qd.EdgeShard.create(str(tmp / SHARD_DIR), qd.EdgeConfig(vectors=vectors))
        try:
            for a in range(0, len(docids), BATCH):
                points = []
                for i in range(a, min(a + BATCH, len(docids))):
                    vec = {INDEXED_VECTOR: indexed[i].tolist()}
                    if shift is not None:
                        onehot = np.zeros(len(shift_langs), dtype=np.float32)
                        if codes[i] >= 0:
                            onehot[codes[i]] = 1.0
                        vec[SHIFT_VECTOR] = np.concatenate([raw[i], onehot]).tolist()
                    points.append(qd.Point(i, vec, {"docid": docids[i], "lang": langs[i]}))
                shard.update(qd.UpdateOperation.upsert_points(points))
            shard.update(qd.UpdateOperation.create_field_index("lang", qd.PayloadSchemaType.Keyword))
            shard.flush()
        finally:
            shard.close()
        if meta_transform:
            (tmp / TRANSFORM_FILE).write_bytes((index.path / TRANSFORM_FILE).read_bytes())
        if shift is not None:
            save_transform(shift, tmp / SHIFT_FILE)
        summary = {"format": SHARD_FORMAT, "format_version": SHARD_FORMAT_VERSION, "source_index": str(index.path),
                   "documents": len(docids), "vectors": {k: v.size for k, v in vectors.items()},
                   "shift_languages": shift_langs, "qdrant_edge": _qdrant_version(), "index_meta": index.meta}
        (tmp / SHARD_META_FILE).write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    return {k: v for k, v in summary.items() if k != "index_meta"} | {"output": str(output)}


def _qdrant_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qdrant-edge-py")
    except PackageNotFoundError:
        return None


def read_shard_meta(path: str | os.PathLike) -> dict[str, Any]:
    """``mlirkit_qdrant.json`` of a shard directory, checked (one line naming the file and field)."""
    file = Path(path) / SHARD_META_FILE
    if not file.is_file():
        raise MlirkitError(f"{path} is not an mlirkit Qdrant shard (no {SHARD_META_FILE}; write one with "
                           f"python -m mlirkit.index qdrant)")
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise MlirkitError(f"{file}: not JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != SHARD_FORMAT:
        raise MlirkitError(f"{file}: field 'format' must be {SHARD_FORMAT!r}")
    for field in ("documents", "vectors", "shift_languages", "index_meta"):
        if field not in meta:
            raise MlirkitError(f"{file}: missing field {field!r}")
    return meta


__all__ = ["INDEXED_VECTOR", "SHARD_DIR", "SHARD_FORMAT", "SHARD_META_FILE", "SHIFT_FILE", "SHIFT_VECTOR",
           "export_qdrant", "read_shard_meta", "shift_languages"]
