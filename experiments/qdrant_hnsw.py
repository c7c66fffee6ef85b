"""HNSW recall of a Qdrant Edge shard against its exact search, and the depth of the cosine re-scoring.

On one bed (:mod:`experiments.xquad_beds`), two mlirkit indexes are written from the cached embeddings and
exported to shards (:func:`mlirkit.index.qdrant_export.export_qdrant`, HNSW ``m`` 16, ``ef_construct`` 100):
``base`` (the normalised documents, with ``embeddings.npy``) and ``pivot`` (index-time SHIFT: ``normalize(d -
alpha V_l)``). For a sample of queries, recall@10 of the HNSW search (``hnsw_ef``) against the exact search of the
same shard, for

- ``plain``: the base shard's ``indexed`` vectors;
- ``index-time``: the pivot shard, queries ``normalize(q - alpha V_s)``;
- ``ip``: the query-time shift's inner product on the base shard's ``shift`` vectors (exact inside the engine);
- ``cosine``: the query-time shift's cosine, re-scored with the certified depth (module docstring of
  :mod:`mlirkit.search.qdrant_searcher`).

Then the cosine re-scoring at fixed depths (``candidates``), exact and HNSW, against the exact cosine; the
certified depth each query needed; the exact cosine checked against numpy's exhaustive
:class:`~mlirkit.search.query_shift.QueryTimeShift`; milliseconds per query (one thread, side by side).
The export's ``full_scan_threshold`` is set to 1 KB here, so that every search with ``hnsw_ef`` walks the graph
(with Qdrant's default, 10,000 KB, a segment of XQuAD-R's 1,920 paragraphs is scanned exactly).

    python -m experiments.qdrant_hnsw --bed xquad-r --transform vectors/e5-tatoeba.shift --cache-dir CACHE \\
        --work WORK --output experiments/results/qdrant_hnsw_xquad-r.json
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from experiments.same_language_cost import bed_of, bed_parser
from experiments.xquad_beds import Bed

K = 10
EFS = (16, 32, 64, 128, 256)
DEPTHS = (10, 20, 50, 100, 200, 500, 1000)
HNSW_EF_FOR_DEPTHS = 64


def write_shards(bed: Bed, transform: Any, alpha: float, work: Path) -> dict[str, Path]:
    """The ``base`` and ``pivot`` indexes of ``bed`` and their shards under ``work``."""
    from mlirkit.index import qdrant_export
    from mlirkit.index.writer import IndexWriter

    qdrant_export.FULL_SCAN_THRESHOLD_KB = 1  # every hnsw_ef search walks the graph (module docstring)
    unit = bed.docs / np.linalg.norm(bed.docs, axis=1, keepdims=True)
    out = {}
    for name, vectors in (("base", unit), ("pivot", pivot_docs(bed, transform, alpha))):
        with IndexWriter(work / f"{name}.index", dim=bed.docs.shape[1], encoder=bed.fingerprint, normalized=True,
                         save_embeddings=True, overwrite=True) as w:
            w.add(bed.doc_ids, bed.doc_langs, vectors.astype(np.float32), raw=bed.docs.astype(np.float32))
        qdrant_export.export_qdrant(work / f"{name}.index", work / f"{name}.qdrant", overwrite=True)
        out[name] = work / f"{name}.qdrant"
    return out


def _vectors(transform: Any, langs: list[str]) -> np.ndarray:
    vec = {transform.source_lang: np.zeros(transform.dim), **{la: transform.params_[la] for la in transform.languages}}
    return np.stack([vec.get(la, np.zeros(transform.dim)) for la in langs])


def pivot_docs(bed: Bed, transform: Any, alpha: float) -> np.ndarray:
    y = bed.docs - alpha * _vectors(transform, bed.doc_langs)
    return y / np.linalg.norm(y, axis=1, keepdims=True)


def overlap(a: list[list[Any]], b: list[list[Any]]) -> float:
    """Mean over queries of |top k of a & top k of b| / k."""
    return float(np.mean([len({h.doc_id for h in x} & {h.doc_id for h in y}) / K for x, y in zip(a, b)]))


def timed(searcher: Any, queries: np.ndarray, langs: list[str] | None) -> tuple[list[Any], float]:
    t = time.perf_counter()
    hits = searcher.search_vectors(queries, K, langs)
    return hits, 1000 * (time.perf_counter() - t) / len(queries)


def main() -> None:
    p = bed_parser(__doc__)
    p.add_argument("--queries", type=int, default=1000, help="queries sampled (seed 0)")
    p.add_argument("--work", required=True, help="directory for the indexes and shards")
    args = p.parse_args()
    from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard
    from mlirkit.transforms import load_transform

    bed = bed_of(args)
    t = load_transform(args.transform)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    shards = {name: QdrantShard(path) for name, path in write_shards(bed, t, args.alpha, work).items()}
    export_s = time.perf_counter() - started  # every searcher below shares these two open shards
    rows = np.sort(np.random.default_rng(0).choice(len(bed.queries), min(args.queries, len(bed.queries)), replace=False))
    Q = bed.queries[rows].astype(np.float32)
    ql = [bed.query_langs[i] for i in rows]
    Qp = Q - args.alpha * _vectors(t, ql)
    Qp = (Qp / np.linalg.norm(Qp, axis=1, keepdims=True)).astype(np.float32)
    encoder = SimpleNamespace(dim=bed.docs.shape[1], fingerprint=bed.fingerprint, digest="", name=args.encoder)
    modes = {"plain": (shards["base"], {}, Q, None), "index-time": (shards["pivot"], {}, Qp, None),
             "ip": (shards["base"], {"query_shift": "ip", "transform": args.transform, "alpha": args.alpha}, Q, ql),
             "cosine": (shards["base"], {"query_shift": "cosine", "transform": args.transform, "alpha": args.alpha}, Q, ql)}
    recall: dict[str, Any] = {}
    exact: dict[str, list[Any]] = {}
    for mode, (shard, options, queries, langs) in modes.items():
        exact[mode], ms = timed(QdrantSearcher(shard, encoder, **options), queries, langs)
        recall[mode] = {"exact_ms_per_query": ms}
        for ef in EFS:
            hits, ms = timed(QdrantSearcher(shard, encoder, hnsw_ef=ef, **options), queries, langs)
            recall[mode][f"ef={ef}"] = {"recall@10": overlap(hits, exact[mode]), "ms_per_query": ms}
        print(mode, json.dumps(recall[mode]))
    # the exact cosine (certified depth) against numpy's exhaustive query-time shift
    top = bed.top(bed.shift(t), args.alpha, K)[rows]
    same = sum([h.doc_id for h in hits] == [bed.doc_ids[j] for j in want] for hits, want in zip(exact["cosine"], top))
    # the depth each query needed, and fixed depths
    cos = {"transform": args.transform, "alpha": args.alpha}
    counting = QdrantSearcher(shards["base"], encoder, query_shift="cosine", **cos)
    depths: list[int] = []
    query = counting._query
    counting._query = lambda v, using, limit, with_vector=False: (depths.append(limit), query(v, using, limit, with_vector))[1]
    needed = []
    for q, la in zip(Q, ql):
        depths.clear()
        counting.search_vectors(q[None], K, [la])
        needed.append(max(depths))
    everything, ms_all = timed(QdrantSearcher(shards["base"], encoder, query_shift="cosine", candidates=len(bed.doc_ids),
                                              **cos), Q, ql)
    fixed = {}
    for depth in DEPTHS:
        row = {}
        for label, ef in (("exact", None), (f"ef={HNSW_EF_FOR_DEPTHS}", HNSW_EF_FOR_DEPTHS)):
            hits, ms = timed(QdrantSearcher(shards["base"], encoder, query_shift="cosine", candidates=depth, hnsw_ef=ef,
                                            **cos), Q, ql)
            row[label] = {"recall@10": overlap(hits, exact["cosine"]), "ms_per_query": ms}
        fixed[depth] = row
        print("depth", depth, json.dumps(row))
    hnsw_certified, ms_hc = timed(QdrantSearcher(shards["base"], encoder, query_shift="cosine",
                                                 hnsw_ef=HNSW_EF_FOR_DEPTHS, **cos), Q, ql)
    out = {"bed": args.bed, "encoder": args.encoder, "transform": args.transform, "alpha": args.alpha, "k": K,
           "documents": len(bed.doc_ids), "queries_sampled": len(rows), "export_seconds_both_shards": export_s,
           "hnsw": {"m": 16, "ef_construct": 100, "full_scan_threshold_kb": 1},
           "code_scale": shards["base"].shard_meta.get("code_scale", 1.0), "recall_vs_exact": recall,
           "cosine_exact_equals_numpy_top10": int(same),
           "cosine_every_document": {"recall@10": overlap(everything, exact["cosine"]), "ms_per_query": ms_all},
           "certified_depth": {"mean": float(np.mean(needed)), "median": float(np.median(needed)),
                               "p95": float(np.percentile(needed, 95)), "max": int(max(needed)),
                               "counts": {str(d): int(c) for d, c in zip(*np.unique(needed, return_counts=True))},
                               "ms_per_query": recall["cosine"]["exact_ms_per_query"]},
           "cosine_fixed_depth": fixed,
           f"cosine_certified_ef={HNSW_EF_FOR_DEPTHS}": {"recall@10": overlap(hnsw_certified, exact["cosine"]),
                                                         "ms_per_query": ms_hc}}
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k in ("cosine_exact_equals_numpy_top10", "cosine_every_document",
                                                            "certified_depth")}))


if __name__ == "__main__":
    main()
