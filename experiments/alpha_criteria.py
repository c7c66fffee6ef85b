"""Label-free alpha criteria against labelled recall, on one bed's cached embeddings (issue 18, third round).

For the vectors of ``experiments/topic_variants.py`` (corpus, mined-c, corpus-tr, mined-c-tr, and the
in-domain pair vectors as reference) the script scores, on the dev and the test split (exact search,
the scoring of ``topic_variants.Bed``, checked there against :func:`mlirkit.eval.evaluate`):

- ``dev``: the alpha of best dev nDCG@20 (uses labels; the reference);
- ``label-free``: the global kNN gap alpha (:func:`mlirkit.transforms.alpha_select.select_alpha`, criterion ``knn-source``, the rule of that time);
- ``pseudo-recall``: :func:`experiments.pseudo_recall.select_pseudo_recall_alpha`;
- ``guarded (retrievability)`` / ``guarded (pseudo-recall)``:
  :func:`experiments.alpha_guard.select_guarded_alphas` with either guard;
- ``guarded (retrievability, dev queries)``: the retrievability guard with the dev split's English query
  embeddings as probes (``probes=``; unlabelled, the qrels are not read);

with nDCG@20 and the worst document language's recall@20 change against base on each split (labels are
used only to evaluate). "Does the criterion follow recall?": per language, Spearman's rank correlation
over the grid (0 ... 2) between the criterion's curve on the whole corpus (retrievability ``R_l(a)`` or
pseudo-recall ``PR_l(a)``, all languages at ``a``) and the labelled dev recall@20 of that language,
averaged over the languages whose dev recall is not constant.

    MLIRKIT_BACKEND=torch python -m experiments.alpha_criteria \\
        --benchmark mlirkit/ddtp-nonparallel-sorted --cache-dir work/vectors18/cache_e5 --threads 1
"""
from __future__ import annotations

from typing import Any

import numpy as np

from experiments.topic_variants import FP, GRID, Bed, open_bed, parse_args

K = 20


def _worst(per: dict[str, float], base: dict[str, float]) -> str:
    lang = min(per, key=lambda l: (per[l] - base[l], l))
    return f"{per[lang] - base[lang]:+.3f} {lang}"


def _spearman(a: list[float], b: list[float]) -> float | None:
    from scipy.stats import spearmanr

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(spearmanr(a, b).statistic)


def _retrievability(bed: Bed, params: dict[str, np.ndarray], alpha: float,
                    queries: np.ndarray | None = None) -> dict[str, float]:
    """R_l with the English documents as probes (themselves excluded), or with ``queries`` as probes."""
    docs = bed.shifted(params, alpha)
    if queries is None:
        en = np.flatnonzero(bed.lang_a == "en")
        s = docs[en] @ docs.T
        s[np.arange(len(en)), en] = -np.inf
    else:
        s = queries @ docs.T
    hit = np.zeros(len(docs), dtype=bool)
    hit[np.argpartition(-s, K - 1, axis=1)[:, :K].ravel()] = True
    return {l: float(hit[bed.lang_a == l].mean()) for l in params}


def main(argv: list[str] | None = None) -> int:
    from mlirkit.transforms import ShiftTransform
    from experiments.alpha_guard import select_guarded_alphas
    from mlirkit.transforms.alpha_select import select_alpha
    from experiments.mining_variants import fit_mined_shift
    from experiments.pseudo_recall import select_pseudo_recall_alpha
    from experiments.topic_projection import remove_topic
    from mlirkit.transforms.topic_subspace import topic_subspace

    args = parse_args(argv)
    bed = open_bed(args)
    base = {split: bed.score(None, 0.0, split) for split in ("dev", "test")}
    print(f"**{args.benchmark}**, `{args.encoder}`: base nDCG@20 dev {base['dev'][0]:.3f}, test {base['test'][0]:.3f}\n")
    auto = topic_subspace(bed.docs, bed.langs)
    systems = {
        "corpus": bed.corpus.params_,
        "mined-c": fit_mined_shift(bed.docs, bed.langs, "en", encoder=FP, selection="mutual-margin", initial=bed.corpus, center=True).params_,
        "corpus-tr": remove_topic(bed.corpus, auto).params_,
        "mined-c-tr": fit_mined_shift(bed.docs, bed.langs, "en", encoder=FP, selection="mutual-margin", initial=bed.corpus, center=True,
                                      topic_rank="auto").params_,
        "pairs-ddtp (parallel text)": bed.pairs.params_,
    }
    grid = (0.0, *GRID)
    print("| vectors | alpha rule | alpha | dev nDCG@20 | dev worst language R@20 vs base | test nDCG@20 | "
          "test worst language R@20 vs base |")
    print("|---|---|---|---|---|---|---|")
    follow: list[str] = []
    paired: list[str] = []
    probe_rows: list[str] = []
    dev_queries = bed.queries[bed.splits["dev"][0]]
    for name, params in systems.items():
        t = ShiftTransform.from_tensors({l: np.asarray(v, np.float32) for l, v in params.items()}, encoder=FP, source_lang="en")
        dev = {a: bed.score(params, a, "dev")[0] for a in GRID}
        pr = select_pseudo_recall_alpha(bed.docs, bed.langs, t, grid=grid, k=K)
        rules: dict[str, Any] = {
            "dev (labels)": max(GRID, key=lambda a: (dev[a], -a)),
            "label-free (kNN gap)": select_alpha(bed.docs, bed.langs, t, grid=grid, k=K, criterion="knn-source").alpha,
            "pseudo-recall": pr.alpha,
            "guarded (retrievability)": select_guarded_alphas(bed.docs, bed.langs, t, grid=grid, k=K).alpha_spec(),
            "guarded (pseudo-recall)": select_guarded_alphas(bed.docs, bed.langs, t, grid=grid, k=K,
                                                             criterion="pseudo-recall").alpha_spec(),
            # the dev split's English query embeddings as unlabelled probes (no qrels): docs/shift.md, "Query probes"
            "guarded (retrievability, dev queries)": select_guarded_alphas(
                bed.docs, bed.langs, t, grid=grid, k=K, probes=bed.queries[bed.splits["dev"][0]]).alpha_spec(),
        }
        for rule, alpha in rules.items():
            cells = []
            for split in ("dev", "test"):
                nd, per = bed.score(params, alpha, split)
                cells += [f"{nd:.3f}", _worst(per, base[split][1])]
            shown = (f"{alpha:g}" if not isinstance(alpha, dict) else
                     "per language " + " ".join(f"{l}={a:g}" for l, a in alpha.items() if l != "*"))
            print(f"| {name} | {rule} | {shown} | " + " | ".join(cells) + " |", flush=True)
        a_pr, a_knn = rules["pseudo-recall"], rules["label-free (kNN gap)"]
        if a_pr != a_knn:
            diff = bed.per_query(params, a_pr, "test") - bed.per_query(params, a_knn, "test")
            flips = np.random.default_rng(0).choice([-1.0, 1.0], size=(10000, len(diff)))
            p_value = float(np.mean(np.abs(flips @ diff / len(diff)) >= abs(diff.mean()) - 1e-12))
            paired.append(f"| {name} | {a_pr:g} vs {a_knn:g} | {diff.mean():+.4f} | {p_value:.3f} |")
        a_dev = rules["dev (labels)"]
        q0, qa = _retrievability(bed, params, 0.0, dev_queries), _retrievability(bed, params, a_dev, dev_queries)
        lower = ", ".join(f"{l} {qa[l] - q0[l]:+.3f}" for l in sorted(q0) if qa[l] < q0[l] - 1e-12) or "none"
        _, per_dev = bed.score(params, a_dev, "test")
        smaller_k = " / ".join(f"{max(select_guarded_alphas(bed.docs, bed.langs, t, grid=grid, k=K, retrievability_k=rk, probes=dev_queries).per_language.values()):g}"
                               for rk in (10, 5, 1))
        probe_rows.append(f"| {name} | {a_dev:g} | {bed.score(params, a_dev, 'test')[0]:.3f} | "
                          f"{min(q0.values()):.3f}-{max(q0.values()):.3f} | {lower} | {_worst(per_dev, base['test'][1])} | {smaller_k} |")
        dev_recall = {a: bed.score(params, a, "dev")[1] for a in grid}
        retr = {a: _retrievability(bed, params, a) for a in grid}
        rho: dict[str, list[float]] = {"retrievability": [], "pseudo-recall": []}
        for l in params:
            if l not in dev_recall[0.0]:
                continue
            rec = [dev_recall[a][l] for a in grid]
            for crit, curve in (("retrievability", [retr[a][l] for a in grid]),
                                ("pseudo-recall", [pr.per_language_curve.get(l, {}).get(a, np.nan) for a in grid])):
                r = None if np.isnan(curve).any() else _spearman(curve, rec)
                if r is not None:
                    rho[crit].append(r)
        follow.append(f"| {name} | " + " | ".join(
            f"{np.mean(v):+.2f} ({len(v)})" if v else "-" for v in rho.values()) + " |")
    print("\nDoes the criterion follow recall? Mean over languages of Spearman's rho between the criterion's "
          "curve and the language's dev recall@20 over the grid (languages with non-constant curves):\n")
    print("| vectors | retrievability | pseudo-recall |\n|---|---|---|")
    print("\n".join(follow))
    print("\nPseudo-recall alpha minus kNN gap alpha, test nDCG@20 per query (paired randomization, two-sided, "
          "10,000 sign flips; vectors where the two alphas differ):\n")
    print("| vectors | alphas | difference | p |\n|---|---|---|---|")
    print("\n".join(paired))
    print(f"\nQuery-probe retrievability (the {len(dev_queries)} dev English queries as probes, top {K}, whole corpus) "
          "at the labelled dev alpha against alpha 0:\n")
    print("| vectors | dev alpha | test nDCG@20 | R_l at alpha 0 (range over languages) | languages with R_l below "
          "alpha 0 (change) | test worst language R@20 vs base | largest guarded alpha, query probes, guard k 10 / 5 / 1 |"
          "\n|---|---|---|---|---|---|---|")
    print("\n".join(probe_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
