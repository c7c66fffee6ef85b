"""MRC@k's score blocks in the main job's DDTP part, side by side: one product per query language (before) against
one product per block where every language shares the document side (``retrieval.score_rows`` now: every
method but SHIFT).

Scores: the DDTP part's 7,693 translated test queries (``mlirkit/ddtp/multi/test``, 14 languages) x 10,887
documents, the base system (normalised inner products), in MRC@k's blocks (``QUERY_BLOCK`` queries, a
question's versions together); embeddings from the main job's cache (run ``python -m mlirkit.benchmark`` once
first). Figures: process CPU seconds over every block, best of ``--rounds`` interleaved rounds, their ratio,
and whether every score is bit-identical.

    OMP_NUM_THREADS=1 python -m perf.score_blocks --output perf/results/score_blocks_usem.json
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", default="usem", help="an encoder of the main job (its cache folder)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import mlirkit.datasets  # noqa: F401  (registers the ids)
    from mlirkit.benchmark.retrieval import Condition, encode_side, score_rows
    from mlirkit.eval.mrc import QUERY_BLOCK
    from mlirkit.io.topics import read_topics
    from perf.shift_sweep import cached
    from perf.top_k import save, side_by_side

    topics = read_topics("mlirkit/ddtp/multi/test")
    queries = cached(args.encoder, "mlirkit_ddtp-test-translations-query")
    docs = cached(args.encoder, "mlirkit_ddtp-corpus-doc")
    if len(topics) != len(queries):
        raise SystemExit(f"{len(topics)} topics for {len(queries)} cached query embeddings")
    langs = np.array([q.lang for q in topics], dtype=object)
    order = np.argsort(np.array([q.group_id for q in topics], dtype=object), kind="stable")  # questions together
    blocks = [order[a:a + QUERY_BLOCK] for a in range(0, len(order), QUERY_BLOCK)]
    doc_langs = ["und"] * len(docs)
    doc_side = encode_side(docs, doc_langs, "doc", None, 1.0)

    def per_language(rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), len(docs)), dtype=np.float32)
        for lang in sorted(set(langs[rows])):
            at = np.flatnonzero(langs[rows] == lang)
            out[at] = encode_side(queries[rows[at]], [lang] * len(at), "query", None, 1.0) @ doc_side.T
        return out

    now = score_rows(Condition("base"), docs, doc_langs, queries, list(langs))
    print(f"{len(queries)} queries ({len(set(langs))} languages) x {len(docs)} documents, {len(blocks)} blocks",
          flush=True)
    row = side_by_side("MRC@k's score blocks, base: a product per language (before), one product (now)",
                       per_language, now, blocks, args.rounds)
    result: dict[str, Any] = {"queries": len(queries), "documents": len(docs), "blocks": len(blocks),
                              "languages": len(set(langs)), **row}
    save(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
