"""Paired tests between language-vector systems on one bed's cached embeddings (issue 18, fourth round).

For the bed of ``experiments/topic_variants.py`` (same ``--cache-dir`` and encoder settings; scoring of
``topic_variants.Bed``, checked there against :func:`mlirkit.eval.evaluate`), the union-kNN mined vectors
(:func:`mlirkit.transforms.mining.fit_mined_shift` with ``center=True, selection="union-knn"``; ``mined-u-trt``:
with the topic projection under the skew test, ``topic_rank="auto", topic_test_level=0.01``) are compared
per query on the test split with corpus vectors and the mutual-margin mined vectors (``mined-c``, itself
compared with corpus vectors), each
at its global kNN label-free alpha (:func:`mlirkit.transforms.alpha_select.select_alpha`, grid 0, 0.2 ... 2.0),
and with the in-domain pair vectors at their dev alpha (the issue's reference). Per comparison: the mean
nDCG@20 difference, a two-sided paired randomization test (10,000 sign flips) and a bootstrap 95 %
interval (5,000 resamples of the queries). Alphas on the grid 0.2 ... 2.0 of the other benchmark tables, or
with ``--fine-grid`` on ``mlirkit.shift select-alpha``'s default grid (0 ... 2.0 by 0.1), for the label-free
and the dev alpha alike.

    MLIRKIT_BACKEND=torch python -m experiments.paired_vectors \\
        --benchmark mlirkit/ddtp-nonparallel-sorted --cache-dir work/vectors18/cache_e5 --threads 1
"""
from __future__ import annotations

import argparse

import numpy as np

from experiments.topic_variants import FP, GRID, label_free_alpha, open_bed
from experiments.topic_variants import parse_args as _bed_args


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    def extend(p: argparse.ArgumentParser) -> None:
        p.add_argument("--fine-grid", action="store_true",
                       help="alphas on mlirkit.shift select-alpha's default grid (0 ... 2 by 0.1)")

    return _bed_args(argv, description=__doc__, extend=extend)


def main(argv: list[str] | None = None) -> int:
    from experiments.mining_variants import fit_mined_shift

    from mlirkit.transforms.alpha_select import DEFAULT_GRID

    args = parse_args(argv)
    fine = args.fine_grid
    bed = open_bed(args)
    grid = tuple(a for a in DEFAULT_GRID if a > 0) if fine else GRID

    def label_free(params: dict[str, np.ndarray]) -> float:
        return label_free_alpha(bed, params, grid)

    def dev(params: dict[str, np.ndarray]) -> float:
        return max(grid, key=lambda a: (bed.score(params, a, "dev")[0], -a))

    mine = {"initial": bed.corpus, "center": True, "encoder": FP}
    corpus = bed.corpus.params_
    mined_c = fit_mined_shift(bed.docs, bed.langs, "en", selection="mutual-margin", **mine).params_
    mined_u = fit_mined_shift(bed.docs, bed.langs, "en", selection="union-knn", **mine).params_
    mined_ut = fit_mined_shift(bed.docs, bed.langs, "en", selection="union-knn", topic_rank="auto",
                               topic_test_level=0.01, **mine).params_
    rng = np.random.default_rng(0)
    name = (f"{args.encoder}, {args.benchmark}{' (quick slice)' if args.quick else ''}"
            + (", alphas on the CLI's default grid (0.1 steps)" if fine else ""))
    print(f"\n**{name}**\n\n| comparison (test nDCG@20) | first | second | difference | p | bootstrap 95 % interval |"
          "\n|---|---|---|---|---|---|")
    for (a_name, a, a_alpha), (b_name, b, b_alpha) in (
            (("mined-c", mined_c, label_free(mined_c)), ("corpus", corpus, label_free(corpus))),
            (("mined-u", mined_u, label_free(mined_u)), ("corpus", corpus, label_free(corpus))),
            (("mined-u-trt", mined_ut, label_free(mined_ut)), ("corpus", corpus, label_free(corpus))),
            (("mined-u", mined_u, label_free(mined_u)), ("mined-c", mined_c, label_free(mined_c))),
            (("mined-u-trt", mined_ut, label_free(mined_ut)), ("in-domain pairs (dev alpha)", bed.pairs.params_,
                                                               dev(bed.pairs.params_)))):
        first, second = bed.per_query(a, a_alpha, "test"), bed.per_query(b, b_alpha, "test")
        diff = first - second
        flips = np.abs((rng.choice([-1.0, 1.0], size=(10000, len(diff))) * diff).mean(axis=1))
        boot = rng.choice(diff, size=(5000, len(diff))).mean(axis=1)
        print(f"| {a_name} at {a_alpha:g} minus {b_name} at {b_alpha:g} | {first.mean():.4f} | {second.mean():.4f} | "
              f"{diff.mean():+.4f} | "
              f"{np.mean(flips >= abs(diff.mean()) - 1e-12):.3f} | "
              f"[{np.quantile(boot, 0.025):+.4f}, {np.quantile(boot, 0.975):+.4f}] |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
