"""The top k of every score, side by side: ``numpy.argpartition`` (the only method before) against ``"auto"``
(``torch.topk`` where ``32 k <= n``), on the main job's own scores.

Scores: the DDTP part's 7,693 translated test queries x 10,887 documents (USEM, inner products, float32), as
MRC@k scores them, in blocks of ``mlirkit.eval.mrc.QUERY_BLOCK`` queries; the embeddings come from the main
job's cache (``$MLIRKIT_CACHE/benchmark/embeddings/<encoder>/``: run ``python -m mlirkit.benchmark`` once
first). Ties are broken by a fixed permutation of the columns (as by document id). k: 10 (MRC@10), 20 (PEER@20
and the label-free alpha's neighbours), 36 and 116 (the query-time shift's k + 16 candidates at k = 20 and
depth 100) and 1,000. Also timed: MRC@10's step per block before (a float64 copy of the block, then
``argpartition``) and now (the float32 block, then ``"auto"``).

Figures: process CPU seconds (set ``OMP_NUM_THREADS=1``; torch is capped at one thread here), best of
``--rounds`` interleaved rounds, their ratio, and whether every block's columns are identical.

    OMP_NUM_THREADS=1 python -m perf.top_k --output perf/results/top_k_usem.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

KS = (10, 20, 36, 116, 1000)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", default="usem", help="an encoder of the main job (its cache folder)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ks", type=int, nargs="+", default=list(KS))
    p.add_argument("--output", type=Path, default=None)
    return p.parse_args(argv)


def blocks(encoder: str) -> list[np.ndarray]:
    """The float32 score blocks of the translated queries against the corpus, as MRC@k's blocks."""
    from mlirkit.eval.mrc import QUERY_BLOCK
    from perf.shift_sweep import cached

    queries = cached(encoder, "mlirkit_ddtp-test-translations-query").astype(np.float32)
    docs = cached(encoder, "mlirkit_ddtp-corpus-doc").astype(np.float32)
    return [queries[a:a + QUERY_BLOCK] @ docs.T for a in range(0, len(queries), QUERY_BLOCK)]


def cpu_seconds(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def side_by_side(name: str, old: Callable[[np.ndarray], np.ndarray], new: Callable[[np.ndarray], np.ndarray],
                 score_blocks: list[np.ndarray], rounds: int) -> dict[str, Any]:
    """Best-of-rounds CPU seconds of ``old`` and ``new`` over every block, interleaved, their ratio, and whether
    their outputs are equal (``numpy.array_equal``: bit for bit)."""
    old_s, new_s, same = [], [], True
    for _ in range(rounds):
        before, seconds = cpu_seconds(lambda: [old(b) for b in score_blocks])
        old_s.append(seconds)
        after, seconds = cpu_seconds(lambda: [new(b) for b in score_blocks])
        new_s.append(seconds)
        same = same and all(np.array_equal(x, y) for x, y in zip(before, after))
    row = {"old_cpu_s": round(min(old_s), 3), "new_cpu_s": round(min(new_s), 3),
           "ratio": round(min(old_s) / max(min(new_s), 1e-9), 2), "identical": same}
    print(f"{name}: before {row['old_cpu_s']} CPU s, now {row['new_cpu_s']} CPU s ({row['ratio']}x); "
          f"identical: {same}", flush=True)
    return row


def save(result: dict[str, Any], path: Path | None) -> None:
    """Write ``result`` as JSON to ``path`` (None: nowhere)."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from mlirkit.base.threads import torch_threads
    from mlirkit.base.top_k import top_k_columns

    score_blocks = blocks(args.encoder)
    n_docs = score_blocks[0].shape[1]
    rank = np.random.default_rng(0).permutation(n_docs)
    rows = sum(len(b) for b in score_blocks)
    print(f"{rows} queries x {n_docs} documents, {len(score_blocks)} blocks, torch {torch.__version__}", flush=True)
    result: dict[str, Any] = {"queries": rows, "documents": n_docs, "rounds": args.rounds, "top_k": {}}
    with torch_threads(1):
        for k in args.ks:
            result["top_k"][str(k)] = side_by_side(
                f"top {k}", lambda b: top_k_columns(b, k, rank, method="argpartition"),
                lambda b: top_k_columns(b, k, rank), score_blocks, args.rounds)
        result["mrc_step"] = side_by_side(
            "MRC@10 step (block copy + top 10)",
            lambda b: top_k_columns(b.astype(np.float64), 10, rank, method="argpartition"),
            lambda b: top_k_columns(b, 10, rank), score_blocks, args.rounds)
    save(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
