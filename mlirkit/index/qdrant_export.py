"""An mlirkit index directory as a Qdrant Edge shard (``qdrant-edge-py``, the ``qdrant`` extra).

The output directory holds ``shard/`` (a Qdrant Edge shard: the server's segment format), ``mlirkit_qdrant.json``
(what the shard is: the source index's ``meta.json`` with its encoder and transform records, the vector
names, the document languages and their counts), the index's transform file when it has one and, with
``embeddings.npy``, ``lang_means.npy`` (the untransformed mean of each document language, in the order of
``doc_languages``: what a query-time shift needs to fill the languages it has no vector for).

One point per document, id = row, payload ``{"docid", "lang"}`` (``lang`` a keyword payload index), and,
all with ``Distance.Dot``:

- ``indexed``: the FAISS index's vectors as they are (plain or index-time shifted);
- ``shift`` (an index with ``embeddings.npy``): ``[d, c e_j]``, the raw document and the one-hot code of its
  language among the index's ``J`` document languages, scaled by ``c`` (:data:`CODE_SCALE`). With a shift (pivot
  ``p``, ``V_p = 0``) a query of language ``s`` sends ``[q, alpha_l m_l (q.V_s - q.V_l) / c for each language l]``
  (``m_l = 0``: never shifted), so ``score = q.(d - alpha_l m_l V_l + alpha_l m_l V_s) = q.d'_s``: the query-time
  shift's inner product (:mod:`mlirkit.search.query_shift`), with the transform and alpha chosen at query time.
  The score does not depend on ``c``; the HNSW graph does: with ``c = 1`` two documents of one language are
  nearer by 1 than any two of different languages, the graph links within a language only, and its recall@10
  of the shift's inner product on XQuAD-R was 0.77 at ``hnsw_ef`` 32; with ``c = 0.01``, 0.98 (docs/scale.md).

The shard's HNSW graph is built at export (``optimize()``; Qdrant's defaults ``m`` 16, ``ef_construct`` 100, every
segment indexed): a search with ``hnsw_ef`` uses it for a segment of more than ``full_scan_threshold`` KB of
vectors (Qdrant's default 10,000: about 6,500 384-dimensional documents), and scans smaller ones exactly.
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
SHARD_FORMAT_VERSION = 2
SHARD_META_FILE = "mlirkit_qdrant.json"
SHARD_DIR = "shard"
LANG_MEANS_FILE = "lang_means.npy"
INDEXED_VECTOR = "indexed"
SHIFT_VECTOR = "shift"
#: the scale of the language code in the ``shift`` vectors (1 in format 1 shards; the module docstring)
CODE_SCALE = 0.01
#: points per upsert
BATCH = 2048
#: the HNSW graph built at export (Qdrant's defaults) and the segment size above which a search uses it (KB)
HNSW_M, HNSW_EF_CONSTRUCT, FULL_SCAN_THRESHOLD_KB = 16, 100, 10_000


def export_qdrant(index_dir: str | os.PathLike, output: str | os.PathLike, *, overwrite: bool = False) -> dict[str, Any]:
    """Write a Qdrant Edge shard of the index at ``index_dir`` into ``output`` (atomically); a summary."""
    import qdrant_edge as qd

    from mlirkit.base.fs import atomic_directory
    from mlirkit.index.layout import TRANSFORM_FILE
    from mlirkit.index.reader import DenseIndex
    from mlirkit.transforms.corpus_fit import language_means

    index = DenseIndex(index_dir)
    indexed = np.asarray(index.indexed_vectors(), dtype=np.float32)
    docids, langs = index.docids, index.langs
    doc_langs = sorted(set(langs))
    vectors = {INDEXED_VECTOR: qd.EdgeVectorParams(size=indexed.shape[1], distance=qd.Distance.Dot)}
    raw = None
    if index.has_embeddings:
        raw = np.asarray(index.embeddings(), dtype=np.float32)
        code_of = {la: j for j, la in enumerate(doc_langs)}
        codes = np.array([code_of[la] for la in langs])
        means, counts = language_means(raw, langs)
        mean_rows = np.stack([np.asarray(means.get(la, np.zeros(raw.shape[1])), dtype=np.float64) for la in doc_langs])
        vectors[SHIFT_VECTOR] = qd.EdgeVectorParams(size=raw.shape[1] + len(doc_langs), distance=qd.Distance.Dot)
    else:
        counts = {}
        logger.warning("%s has no embeddings.npy: the shard has no %r vector (no query-time shift)", index.path,
                       SHIFT_VECTOR)
    with atomic_directory(output, overwrite, kind="qdrant-shard") as tmp:
        config = qd.EdgeConfig(vectors=vectors, hnsw_config=qd.HnswIndexConfig(
            m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT, full_scan_threshold=FULL_SCAN_THRESHOLD_KB),
            optimizers=qd.EdgeOptimizersConfig(indexing_threshold=1))  # 1 KB: every segment gets its graph
        shard = qd.EdgeShard.create(str(tmp / SHARD_DIR), config)
        try:
            for a in range(0, len(docids), BATCH):
                points = []
                for i in range(a, min(a + BATCH, len(docids))):
                    vec = {INDEXED_VECTOR: indexed[i].tolist()}
                    if raw is not None:
                        onehot = np.zeros(len(doc_langs), dtype=np.float32)
                        if codes[i] >= 0:
                            onehot[codes[i]] = CODE_SCALE
                        vec[SHIFT_VECTOR] = np.concatenate([raw[i], onehot]).tolist()
                    points.append(qd.Point(i, vec, {"docid": docids[i], "lang": langs[i]}))
                shard.update(qd.UpdateOperation.upsert_points(points))
            shard.update(qd.UpdateOperation.create_field_index("lang", qd.PayloadSchemaType.Keyword))
            shard.flush()
            shard.optimize()  # the HNSW graph (and the payload index) of the whole segment
        finally:
            shard.close()
        if index.transform:
            (tmp / TRANSFORM_FILE).write_bytes((index.path / TRANSFORM_FILE).read_bytes())
        if raw is not None:
            np.save(tmp / LANG_MEANS_FILE, mean_rows)
        summary = {"format": SHARD_FORMAT, "format_version": SHARD_FORMAT_VERSION, "source_index": str(index.path),
                   "documents": len(docids), "vectors": {k: v.size for k, v in vectors.items()},
                   "doc_languages": doc_langs, "code_scale": CODE_SCALE,
                   "hnsw": {"m": HNSW_M, "ef_construct": HNSW_EF_CONSTRUCT, "full_scan_threshold_kb": FULL_SCAN_THRESHOLD_KB},
                   "lang_counts": {la: int(n) for la, n in counts.items()}, "qdrant_edge": _qdrant_version(), "index_meta": index.meta}
        (tmp / SHARD_META_FILE).write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    return {k: v for k, v in summary.items() if k != "index_meta"} | {"output": str(output)}


def _qdrant_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qdrant-edge-py")
    except PackageNotFoundError:
        return None


def read_shard_meta(path: str | os.PathLike) -> dict[str, Any]:
    """``mlirkit_qdrant.json`` of a shard directory, checked field by field (one line naming the file and field):
    ``documents`` >= 1, ``vectors`` {name: size >= 1}, ``doc_languages`` language codes, ``lang_counts``
    {language: count} (when the index had embeddings: over ``doc_languages`` but ``und``, summing to ``documents``
    less the undetermined ones)."""
    from mlirkit.base.langs import UNKNOWN
    from mlirkit.io.json_fields import (NON_NEGATIVE_INT, POSITIVE_INT, check_json, list_of, map_of, read_json_file,
                                        record, value)

    file = Path(path) / SHARD_META_FILE
    if not file.is_file():
        if os.path.lexists(file):
            raise MlirkitError(f"{file}: not a regular file")
        raise MlirkitError(f"{path} is not an mlirkit Qdrant shard (no {SHARD_META_FILE}; write one with "
                           f"python -m mlirkit.index qdrant)")
    if file.stat().st_size > MAX_META_BYTES:
        raise MlirkitError(f"{file}: larger than {MAX_META_BYTES // 2**20} MiB: not a shard's metadata")
    meta = read_json_file(file)
    if not isinstance(meta, dict) or meta.get("format") != SHARD_FORMAT:
        raise MlirkitError(f"{file}: field 'format' must be {SHARD_FORMAT!r}")
    for field in ("documents", "vectors", "doc_languages", "lang_counts", "index_meta"):
        if field not in meta:
            raise MlirkitError(f"{file}: missing field {field!r}")
    lang = value("string", test=_is_lang, what="a language code")
    check_json(file, meta, record({
        "documents": POSITIVE_INT, "vectors": map_of(POSITIVE_INT), "doc_languages": list_of(lang),
        "lang_counts": map_of(NON_NEGATIVE_INT), "index_meta": value("object")}))
    counts, known = meta["lang_counts"], [la for la in meta["doc_languages"] if la != UNKNOWN]
    total = sum(counts.values())
    if counts and (sorted(counts) != known or total > meta["documents"]
                   or (total != meta["documents"] and known == meta["doc_languages"])):
        raise MlirkitError(f"{file}: fields 'doc_languages', 'lang_counts' and 'documents' disagree (lang_counts "
                           f"counts the documents of each language but {UNKNOWN!r}, sorted as doc_languages)")
    if len(set(meta["doc_languages"])) != len(meta["doc_languages"]):
        raise MlirkitError(f"{file}: field 'doc_languages' names a language twice")
    return meta


#: the largest ``mlirkit_qdrant.json`` read (it holds the index's meta.json: a few kB)
MAX_META_BYTES = 64 * 2**20


def _is_lang(value: str) -> bool:
    from mlirkit.base.langs import check_lang

    try:
        return check_lang(value, "") == value
    except MlirkitError:
        return False


__all__ = ["CODE_SCALE", "INDEXED_VECTOR", "LANG_MEANS_FILE", "SHARD_DIR", "SHARD_FORMAT", "SHARD_META_FILE", "SHIFT_VECTOR",
           "export_qdrant", "read_shard_meta"]
