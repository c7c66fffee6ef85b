"""How deep must a run be for MRC@k to be computed from it?

MRC@k (:mod:`mlirkit.eval.mrc`) needs, for a query ``q_a`` and each translation ``q_b`` of it, ``q_a``'s
scores on ``top_k(q_a) ∪ top_k(q_b)``. A run of ``q_a`` holds them when it is at least as deep as the
deepest rank, in ``q_a``'s ranking, of a document of a translation's top k. This script measures that
depth per query from every score (the main job's cached embeddings, cosine, as its ``base`` system ranks)
and prints its distribution and the share of queries a run of a given depth serves.

    python -m experiments.mrc_depth --collections mlirkit/xquad-r/multi --encoders multilingual-e5-small-q4 usem
"""
from __future__ import annotations

import argparse

import numpy as np

DEPTHS = (10, 20, 100, 1000)


def needed_depth(scores: np.ndarray, pa: np.ndarray, pb: np.ndarray, k: int, id_rank: np.ndarray) -> np.ndarray:
    """(Q,) per query the depth its run needs (0: no translation), ties broken by document id as in a run."""
    order = np.lexsort((np.broadcast_to(id_rank, scores.shape), -scores), axis=1)
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(scores.shape[1])[None, :].repeat(len(scores), 0), axis=1)
    top = order[:, :k]
    deepest = position[pa[:, None], top[pb]].max(axis=1) + 1  # q_a's rank of q_b's top k
    out = np.zeros(len(scores), dtype=np.int64)
    np.maximum.at(out, pa, np.maximum(deepest, k))
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.mrc_depth", description=__doc__.split("\n\n")[0])
    p.add_argument("--collections", nargs="+", default=["mlirkit/xquad-r/multi"])
    p.add_argument("--encoders", nargs="+", default=["multilingual-e5-small-q4", "usem"])
    p.add_argument("--k", type=int, default=10)
    return p


def main(argv: list[str] | None = None) -> int:
    from mlirkit.base.cache import cache_dir
    from mlirkit.benchmark.average_precision import id_ranks
    from mlirkit.benchmark.cache import EmbeddingCache
    from mlirkit.benchmark.config import BenchmarkConfig
    from mlirkit.benchmark.steps import cache_variant
    from mlirkit.benchmark.xquad import load_collection
    from mlirkit.encoders import load_encoder
    from mlirkit.eval.mrc import parallel_pairs

    args = build_parser().parse_args(argv)
    config = BenchmarkConfig()
    variant = cache_variant(config.with_(languages=None))
    cache = EmbeddingCache(cache_dir("benchmark", "embeddings"), show_progress=False)
    print("| collection | encoder | queries | median | 90 % | 99 % | deepest | "
          + " | ".join(f"served by depth {d}" for d in DEPTHS) + " |")
    print("|---|---|---|---|---|---|---|" + "---|" * len(DEPTHS))
    for dataset in args.collections:
        coll = load_collection(dataset)
        part = dataset.split("/")[1]
        queries = coll.topics.queries
        q_langs = [q.lang for q in queries]
        pa, pb = parallel_pairs([q.group_id for q in queries], q_langs)
        for name in args.encoders:
            encoder = load_encoder(name, **config.xquad_options_for(name))
            docs = cache.embed(encoder, name, f"{part}-corpus{variant}", "doc", [d.text for d in coll.docs],
                               coll.doc_langs, reuse=True)
            qe = cache.embed(encoder, name, f"{part}-queries{variant}", "query", [q.text for q in queries], q_langs,
                             reuse=True)
            docs = docs / np.linalg.norm(docs, axis=1, keepdims=True)
            depth = needed_depth(qe @ docs.T, pa, pb, args.k, id_ranks(coll.doc_ids))
            counted = depth[depth > 0]
            q50, q90, q99 = np.percentile(counted, [50, 90, 99])
            served = [f"{(counted <= d).mean():.1%}" for d in DEPTHS]
            print(f"| {dataset} | {name} | {len(counted):,} | {q50:.0f} | {q90:.0f} | {q99:.0f} | {counted.max():,} | "
                  + " | ".join(served) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
