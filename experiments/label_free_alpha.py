"""The label-free alpha and languages without vectors, measured on XQuAD-R, its partly parallel variant and the
DDTP beds (beds, vectors and scoring: :mod:`experiments.xquad_beds`; every figure with the query-time shift
from one index, each query language with its own re-based shift, macro mean over query languages).

Subcommands (markdown tables on stdout; notes in experiments/notes/label_free_alpha.md):

- ``missing``: the bundled pair sets' vectors (no ar, hi, vi on XQuAD-R) with the languages they lack filled
  from the corpus or kept unshifted: nDCG@20 and recall@20 per document language at the label-free alpha
  and at the sweep's best, grouped randomization test between the two policies.
- ``rules``: for each bed and vectors (Tatoeba, bundled + fill, corpus-fitted), the sweep's best alpha and the
  label-free alphas of ``select_alpha``'s criteria (``knn``: every language's documents as probes,
  start of the plateau; ``knn-source``: source-language probes, minimum), with the regret and a grouped
  bootstrap interval of it (question groups resampled), the regret of other plateau tolerances on the same
  curve, and the sampling noise of the sweep itself.
- ``headline``: Tatoeba vectors at the label-free alpha on XQuAD-R: nDCG@20 per query language and recall@20
  per document language against base, each with a grouped randomization test.
- ``per-language``: ``knn-source``'s per-language alphas against its global alpha (why the CLI does not offer them).

    OMP_NUM_THREADS=1 python -m experiments.label_free_alpha rules --beds xquad-r xquad-r-partial ddtp ddtp-sorted \\
        --encoder multilingual-e5-small-q4 --cache-dir work/cache/emb
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any, Sequence

import numpy as np

from experiments.xquad_beds import BEDS, VECTORS, Bed, grouped_bootstrap, grouped_randomization, load_bed, vectors


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m experiments.label_free_alpha", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["missing", "rules", "headline", "per-language"])
    p.add_argument("--beds", nargs="+", default=["xquad-r"], choices=list(BEDS))
    p.add_argument("--vectors", nargs="+", default=list(VECTORS), choices=list(VECTORS))
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    p.add_argument("--cache-dir", default="work/cache/emb", help="embedding cache (encoded on first use)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bootstrap", type=int, default=2000, help="grouped bootstrap replicates")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    start = time.time()
    {"missing": cmd_missing, "rules": cmd_rules, "headline": cmd_headline, "per-language": cmd_per_language}[
        args.command](args)
    print(f"\n({args.encoder}; {time.time() - start:.0f} s)")
    return 0


def _bed(args: argparse.Namespace, name: str) -> Bed:
    bed = load_bed(name, args.encoder, args.cache_dir, args.threads)
    bed.check_against_mlirkit_eval(BEDS[name][0])
    return bed


def _grid() -> tuple[float, ...]:
    from mlirkit.transforms.alpha_select import DEFAULT_GRID

    return DEFAULT_GRID


def _best(sweep: dict[float, float]) -> float:
    return max(sweep, key=lambda a: (sweep[a], -a))


# ---------------------------------------------------------------------- missing
def cmd_missing(args: argparse.Namespace) -> None:
    from mlirkit.transforms.alpha_select import select_alpha

    for name in args.beds:
        bed = _bed(args, name)
        base = bed.run(None, 0.0)
        runs = {}
        for policy in ("corpus", "keep"):
            t = vectors(bed, "bundled", args.cache_dir, args.threads, missing=policy)
            shift = bed.shift(t)
            sweep = {a: bed.run(shift, a)["ndcg"] for a in _grid()}
            lf = select_alpha(bed.docs, bed.doc_langs, t).alpha
            runs[policy] = {"label-free": (lf, bed.run(shift, lf)), "best": (_best(sweep), bed.run(shift, _best(sweep)))}
        langs = bed.languages
        print(f"\n**{name}, bundled vectors (libreoffice-help + gettext), languages without a vector filled or kept**\n")
        print("| system | alpha | nDCG@20 | " + " | ".join(f"R@20 {la}" for la in langs) + " |")
        print("|---|---|---|" + "---|" * len(langs))
        print(f"| base | - | {base['ndcg']:.3f} | " + " | ".join(f"{base['recall_by_doc_lang'][la]:.3f}" for la in langs) + " |")
        for policy in ("corpus", "keep"):
            for which in ("label-free", "best"):
                a, r = runs[policy][which]
                cells = [f"{r['recall_by_doc_lang'][la]:.3f}{'' if r['recall_by_doc_lang'][la] >= base['recall_by_doc_lang'][la] else ' ↓'}"
                         for la in langs]
                print(f"| --missing {policy}, {which} alpha | {a:g} | {r['ndcg']:.3f} | " + " | ".join(cells) + " |")
        for which in ("label-free", "best"):
            diff, p = grouped_randomization(runs["corpus"][which][1]["per_query"], runs["keep"][which][1]["per_query"],
                                            bed.groups)
            print(f"\ncorpus minus keep ({which} alphas): nDCG@20 {diff:+.4f} (mean over queries), grouped "
                  f"randomization p {p} ({len(np.unique(bed.groups))} question groups, 10,000 sign flips)")


# ---------------------------------------------------------------------- rules
def cmd_rules(args: argparse.Namespace) -> None:
    from mlirkit.transforms.alpha_select import select_alpha

    from mlirkit.transforms.alpha_select import plateau_start

    tolerances = (0.0, 0.05, 0.2)
    print("| bed | vectors | sweep best | knn (default) | regret | 95 % interval | knn-source (before) | regret | "
          + "knn, tolerance " + " / ".join(f"{x:g}" for x in tolerances)
          + ": regret | noise: SD of the best alpha; max-minus-best interval |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.beds:
        bed = _bed(args, name)
        for kind in args.vectors:
            t = vectors(bed, kind, args.cache_dir, args.threads)
            shift = bed.shift(t)
            grid = _grid()
            per_query = {a: bed.run(shift, a)["per_query"] for a in grid}
            sweep = {a: bed.macro(v) for a, v in per_query.items()}
            best = _best(sweep)
            sel = select_alpha(bed.docs, bed.doc_langs, t)
            knn = sel.alpha
            tol = {x: plateau_start(sel.curve, x) for x in tolerances}
            old = select_alpha(bed.docs, bed.doc_langs, t, criterion="knn-source").alpha
            cols = np.stack([per_query[a] for a in grid], axis=1)  # (m, |grid|)
            boot = grouped_bootstrap(cols, bed.groups, bed.query_langs, n=args.bootstrap)
            gi = {a: i for i, a in enumerate(grid)}
            regret = boot[:, gi[knn]] - boot[:, gi[best]]
            lo, hi = np.percentile(regret, [2.5, 97.5])
            best_in_boot = np.asarray(grid)[boot.argmax(axis=1)]
            print(f"| {name} | {kind} | {best:g}: {sweep[best]:.4f} | {knn:g}: {sweep[knn]:.4f} | "
                  f"{sweep[knn] - sweep[best]:+.4f} | [{lo:+.4f}, {hi:+.4f}] | {old:g}: {sweep[old]:.4f} | "
                  f"{sweep[old] - sweep[best]:+.4f} | "
                  f"{' / '.join(f'{a:g}: {sweep[a] - sweep[best]:+.4f}' for a in tol.values())} | {best_in_boot.std():.2f}; "
                  f"[{np.percentile(boot.max(axis=1) - boot[:, gi[best]], 2.5):.4f}, "
                  f"{np.percentile(boot.max(axis=1) - boot[:, gi[best]], 97.5):.4f}] |", flush=True)


# ---------------------------------------------------------------------- headline
def cmd_headline(args: argparse.Namespace) -> None:
    from mlirkit.transforms.alpha_select import select_alpha

    for name in args.beds:
        bed = _bed(args, name)
        t = vectors(bed, "tatoeba", args.cache_dir, args.threads)
        sel = select_alpha(bed.docs, bed.doc_langs, t)
        base, shifted = bed.run(None, 0.0), bed.run(bed.shift(t), sel.alpha)
        ql = np.asarray(bed.query_langs)
        print(f"\n**{name}, SHIFT with Tatoeba vectors ({sum(t.meta['pairs'].values())} pairs), label-free alpha "
              f"{sel.alpha:g}: nDCG@20 {shifted['ndcg']:.4f} (base {base['ndcg']:.4f}), macro mean over "
              f"{len(bed.query_languages)} query languages**\n")
        print("| query language | base nDCG@20 | SHIFT | difference | grouped p |\n|---|---|---|---|---|")
        for la in bed.query_languages:
            m = ql == la
            d, p = grouped_randomization(shifted["per_query"][m], base["per_query"][m], bed.groups[m])
            print(f"| {la} | {base['by_query_lang'][la]:.3f} | {shifted['by_query_lang'][la]:.3f} | {d:+.3f} | {p} |")
        print("\n| document language | base recall@20 | SHIFT | difference | grouped p |\n|---|---|---|---|---|")
        for la in bed.languages:
            a, b = shifted["recall_per_query"][la], base["recall_per_query"][la]
            ok = ~np.isnan(a)
            d, p = grouped_randomization(a[ok], b[ok], bed.groups[ok])
            print(f"| {la} | {base['recall_by_doc_lang'][la]:.3f} | {shifted['recall_by_doc_lang'][la]:.3f} | "
                  f"{d:+.3f} | {p} |")


# ---------------------------------------------------------------------- per-language
def cmd_per_language(args: argparse.Namespace) -> None:
    from mlirkit.transforms.alpha_select import select_alpha

    print("| bed | vectors | global alpha (knn-source) | nDCG@20 | per-language alphas | nDCG@20 | difference | grouped p |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.beds:
        bed = _bed(args, name)
        for kind in args.vectors:
            t = vectors(bed, kind, args.cache_dir, args.threads)
            sel = select_alpha(bed.docs, bed.doc_langs, t, criterion="knn-source", per_language=True)
            shift = bed.shift(t)
            g, pl = bed.run(shift, sel.alpha), bed.run(shift, sel.alpha_spec())
            d, p = grouped_randomization(pl["per_query"], g["per_query"], bed.groups)
            print(f"| {name} | {kind} | {sel.alpha:g} | {g['ndcg']:.4f} | "
                  f"{', '.join(f'{la} {a:g}' for la, a in sel.per_language.items())} | {pl['ndcg']:.4f} | "
                  f"{pl['ndcg'] - g['ndcg']:+.4f} | {p} |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
