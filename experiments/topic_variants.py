"""Label-free language-vector variants on one bed's cached embeddings: what separates topic from language?

For a bed whose embeddings are in the cache of ``experiments/language_vectors.py`` (same ``--cache-dir``,
same encoder settings), every variant below is scored at the alpha chosen on the dev split and at the
global kNN label-free alpha (:func:`mlirkit.transforms.alpha_select.select_alpha`, criterion ``knn-source``, grid 0, 0.2 ... 2.0,
k = 20), test split reported. Scoring is exact cosine search over the whole corpus (English queries,
documents shifted and normalised as ``mlirkit.search`` scores them); nDCG@20 = DCG@20 / ideal DCG@20
with binary gains; the script first checks that its base and corpus-vector nDCG@20 equal
:func:`mlirkit.eval.evaluate`'s on the same runs. Rows:

- ``corpus``: ``mu_l - mu_en``; ``mined-c``: :func:`~mlirkit.transforms.mining.fit_mined_shift` (centred);
  ``pairs-ddtp``: SHIFT on 50 in-domain DDTP pairs per language (the reference; uses parallel text);
- ``corpus-tr r=R`` / ``mined-c-tr``: :mod:`mlirkit.transforms.topic_subspace` (``auto`` and a rank sweep);
- ``ridge c=C``: ``lambda (S_w + lambda I)^-1 V_l`` with ``lambda = C tr(S_w)/d`` (shrinkage LDA);
  ``fisher c=C``: the rank-1 shift along ``u = (S_w + lambda I)^-1 V_l`` removing the mean difference
  along ``u``; ``ridge EB``: ``lambda`` by empirical Bayes (``V_l ~ N(0, tau^2 I + kappa S_w)``, marginal
  likelihood maximised over ``tau^2, kappa``);
- ``mine csls``: the mining loop with CSLS (Conneau et al. 2018, ``2 cos - r_x - r_y``, kept when >= 0)
  instead of the ratio margin; ``mine trim``: mined pairs kept only when their difference's cosine with
  the current vector is above the median (robust refit);
- ``mine all-languages``: each document of language l paired with its nearest shifted document of
  *any* other language m, ``V_l = mean(x - y + V_m)`` (multi-language consistency), projected out of
  the topic subspace;
- ``pairs-ddtp-tr r=R``: the reference vectors projected, and the share of each vector's energy in the
  top-r within-language directions;
- ``corpus-tr auto, per-language test``: only the languages whose own share in the subspace exceeds the
  Beta null's ``1 - level`` quantile projected;
- a paired randomization test (and bootstrap interval) of the topic-robust vectors at the label-free
  alpha against the pair vectors at their dev alpha, per-query nDCG@20 on the test split.

    MLIRKIT_BACKEND=torch python -m experiments.topic_variants \\
        --benchmark mlirkit/ddtp-nonparallel-sorted --cache-dir work/vectors18/cache_e5 --threads 1
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

import numpy as np

GRID = tuple(round(0.2 * i, 1) for i in range(1, 11))
FP = {"class": "topic-variants"}


def parse_args(argv: list[str] | None = None, *, description: str | None = None,
               extend: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    """The bed's options; a script built on :class:`Bed` passes its ``description`` and ``extend`` adds its own."""
    p = argparse.ArgumentParser(description=description or __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    if extend is not None:
        extend(p)
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    p.add_argument("--benchmark", default="mlirkit/ddtp-nonparallel-sorted")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--pairs", type=int, default=50)
    p.add_argument("--min-docs", type=int, default=15)
    p.add_argument("--cache-dir", required=True)
    p.add_argument("--corpus-from", default=None,
                   help="take the document embeddings from this pooled bed's cache entry (as language_vectors.py)")
    p.add_argument("--threads", type=int, default=None)
    return p.parse_args(argv)


class Bed:
    """Cached document / query embeddings of one bed, its splits, and exact-search scoring."""

    def __init__(self, args: argparse.Namespace) -> None:
        from mlirkit.benchmark.cache import EmbeddingCache
        from mlirkit.benchmark.config import DEFAULT_FIT_SOURCES, BenchmarkConfig
        from mlirkit.benchmark.data import load_benchmark, load_parallel
        from mlirkit.benchmark.steps import fit_transforms
        from mlirkit.encoders import load_encoder
        from experiments.corpus_variants import fit_corpus_shift

        config = BenchmarkConfig(encoders=(args.encoder,), quick=args.quick, benchmark=args.benchmark,
                                 max_pairs=args.pairs, quick_pairs=args.pairs)
        data = load_benchmark(args.benchmark, ("en",), quick_groups=config.quick_groups if args.quick else None)
        options = {"threads": args.threads} if args.threads else {}
        if args.encoder != "usem":
            options.update(max_length=256, batch_size=32)
        encoder = load_encoder(args.encoder, **options)
        cache = EmbeddingCache(args.cache_dir, show_progress=False)
        self.data = data
        if getattr(args, "corpus_from", None):
            pooled = load_benchmark(args.corpus_from, ("en",))
            pooled_embs = cache.embed(encoder, args.encoder, f"{pooled.name}-corpus", "doc",
                                      [d.text for d in pooled.docs], [d.lang for d in pooled.docs])
            row = {d.doc_id: i for i, d in enumerate(pooled.docs)}
            self.docs = pooled_embs[[row[d.doc_id] for d in data.docs]].astype(np.float64)
        else:
            self.docs = cache.embed(encoder, args.encoder, f"{data.name}-corpus", "doc", [d.text for d in data.docs],
                                    [d.lang for d in data.docs]).astype(np.float64)
        self.langs = [d.lang for d in data.docs]
        self.lang_a = np.asarray(self.langs)
        queries = [q for s in data.splits.values() for q in s.queries]
        q = cache.embed(encoder, args.encoder, f"{data.name}-queries", "query", [x.text for x in queries],
                        [x.lang for x in queries])
        self.queries = q / np.linalg.norm(q, axis=1, keepdims=True)
        qrow = {x.query_id: i for i, x in enumerate(queries)}
        drow = {d.doc_id: i for i, d in enumerate(data.docs)}
        self.splits = {name: ([qrow[x.query_id] for x in sp.queries],
                              [[drow[d] for d, r in sp.qrels.get(x.query_id, {}).items() if r > 0 and d in drow]
                               for x in sp.queries]) for name, sp in data.splits.items()}
        self.corpus = fit_corpus_shift(self.docs, self.langs, "en", encoder=FP, min_docs=args.min_docs)
        ps = load_parallel("ddtp", DEFAULT_FIT_SOURCES["ddtp"], source_lang="en", target_langs=data.languages,
                           pairs_per_lang=config.pairs_per_lang)
        pe = cache.embed(encoder, args.encoder, "parallel-ddtp", "doc", ps.texts, ps.langs)
        self.pairs = fit_transforms(ps, pe, FP, config)["shift"]

    def shifted(self, params: dict[str, np.ndarray], alpha: Any) -> np.ndarray:
        x = self.docs.copy()
        for lang, v in params.items():
            a = alpha.get(lang, alpha.get("*", 0.0)) if isinstance(alpha, dict) else alpha
            x[self.lang_a == lang] -= a * np.asarray(v, dtype=np.float64)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def top20(self, params: dict[str, np.ndarray] | None, alpha: Any, split: str) -> np.ndarray:
        d = self.docs / np.linalg.norm(self.docs, axis=1, keepdims=True) if params is None else self.shifted(params, alpha)
        rows, _ = self.splits[split]
        return np.argsort(-(self.queries[rows] @ d.T), axis=1, kind="stable")[:, :20]

    def per_query(self, params: dict[str, np.ndarray] | None, alpha: Any, split: str) -> np.ndarray:
        """nDCG@20 of every query of ``split``."""
        top = self.top20(params, alpha, split)
        _, rel = self.splits[split]
        out = []
        for i, r in enumerate(rel):
            rank = {int(j): p for p, j in enumerate(top[i])}
            ideal = sum(1 / np.log2(p + 2) for p in range(min(len(r), 20)))
            out.append(sum(1 / np.log2(rank[j] + 2) for j in r if j in rank) / ideal if ideal else 0.0)
        return np.asarray(out)

    def score(self, params: dict[str, np.ndarray] | None, alpha: Any, split: str) -> tuple[float, dict[str, float]]:
        """``(nDCG@20, recall@20 per document language)``."""
        top = self.top20(params, alpha, split)
        _, rel = self.splits[split]
        ndcg, hits, lang = [], [], []
        for i, r in enumerate(rel):
            rank = {int(j): p for p, j in enumerate(top[i])}
            dcg = sum(1 / np.log2(rank[j] + 2) for j in r if j in rank)
            ideal = sum(1 / np.log2(p + 2) for p in range(min(len(r), 20)))
            ndcg.append(dcg / ideal if ideal else 0.0)
            for j in r:
                hits.append(j in rank)
                lang.append(self.langs[j])
        hits_a, lang_a = np.asarray(hits), np.asarray(lang)
        return float(np.mean(ndcg)), {l: float(hits_a[lang_a == l].mean()) for l in sorted(set(lang))}

    def check_against_mlirkit_eval(self) -> None:
        """This scoring equals :func:`mlirkit.eval.evaluate`'s nDCG@20 (base and corpus vectors at 1)."""
        from mlirkit.eval import evaluate

        sp = self.data.splits["test"]
        doc_ids = [d.doc_id for d in self.data.docs]
        runs = {}
        for name, params in (("base", None), ("corpus", self.corpus.params_)):
            top = self.top20(params, 1.0, "test")
            runs[name] = {q.query_id: {doc_ids[j]: 20.0 - p for p, j in enumerate(top[i])}
                          for i, q in enumerate(sp.queries)}
        ev = evaluate(sp.qrels, runs, ["ndcg@20"], significance=None)
        for name, params in (("base", None), ("corpus", self.corpus.params_)):
            mine = self.score(params, 1.0, "test")[0]
            assert abs(ev.value(name, "ndcg@20") - mine) < 1e-9, (name, ev.value(name, "ndcg@20"), mine)
        print(f"scoring checked against mlirkit.eval.evaluate (test nDCG@20 base {self.score(None, 1, 'test')[0]:.3f})")


def open_bed(args: argparse.Namespace) -> Bed:
    """The bed of ``args`` (``--threads`` also caps OpenMP), its scoring checked against :func:`mlirkit.eval.evaluate`."""
    import os

    if args.threads:
        os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    bed = Bed(args)
    bed.check_against_mlirkit_eval()
    return bed


def label_free_alpha(bed: Bed, params: dict[str, np.ndarray], grid: tuple[float, ...] = GRID) -> float:
    """The global kNN label-free alpha (:func:`mlirkit.transforms.alpha_select.select_alpha`, criterion ``knn-source``, k = 20) on
    0 and ``grid`` (default 0.2 ... 2.0)."""
    from mlirkit.transforms.alpha_select import select_alpha
    from mlirkit.transforms import ShiftTransform

    t = ShiftTransform.from_tensors({l: np.asarray(v, np.float32) for l, v in params.items()}, encoder=FP, source_lang="en")
    return select_alpha(bed.docs, bed.langs, t, grid=(0.0, *grid), k=20, criterion="knn-source").alpha


def within_cov(bed: Bed) -> np.ndarray:
    from mlirkit.transforms.topic_subspace import within_language_covariance

    return within_language_covariance(bed.docs, bed.langs)[0]


def report(bed: Bed, name: str, params: dict[str, np.ndarray], base_recall: dict[str, float]) -> None:
    from mlirkit.transforms.alpha_select import select_alpha
    from mlirkit.transforms import ShiftTransform

    dev = {a: bed.score(params, a, "dev")[0] for a in GRID}
    best = max(GRID, key=lambda a: (dev[a], -a))
    t = ShiftTransform.from_tensors({l: np.asarray(v, np.float32) for l, v in params.items()}, encoder=FP, source_lang="en")
    lf = select_alpha(bed.docs, bed.langs, t, grid=(0.0, *GRID), k=20, criterion="knn-source").alpha
    cells = []
    for a in (best, lf):
        nd, per = bed.score(params, a, "test")
        drop = {l: base_recall[l] - per[l] for l in per}
        worst = max(drop, key=drop.get)
        cells.append(f"{a:g}: {nd:.3f} | {-drop[worst]:+.3f} {worst}")
    lf_dev = bed.score(params, lf, "dev")[0]
    print(f"| {name} | {dev[best]:.3f} | {lf_dev:.3f} | " + " | ".join(cells) + " |", flush=True)


def ridge(bed: Bed, vecs: dict[str, np.ndarray], c: float, fisher: bool = False) -> dict[str, np.ndarray]:
    s = within_cov(bed)
    lam = c * np.trace(s) / s.shape[0]
    inv = np.linalg.inv(s + lam * np.eye(s.shape[0]))
    out = {}
    for lang, v in vecs.items():
        v = np.asarray(v, dtype=np.float64)
        if fisher:
            u = inv @ v
            out[lang] = u * (v @ u) / (u @ u)
        else:
            out[lang] = lam * inv @ v
    return out


def eb_ridge_c(bed: Bed, vecs: dict[str, np.ndarray]) -> float:
    """``c`` of the empirical-Bayes lambda (``V_l ~ N(0, tau^2 I + kappa S_w)``), in units of ``tr(S_w)/d``."""
    from scipy.optimize import minimize

    s = within_cov(bed)
    sig, u = np.linalg.eigh(s)
    sig = np.maximum(sig, 0.0)
    p2 = (np.stack([np.asarray(v, np.float64) for v in vecs.values()]) @ u) ** 2  # (L, d)

    def nll(t: np.ndarray) -> float:
        c = np.exp(t[0]) + np.exp(t[1]) * sig
        return float(0.5 * (p2 / c).sum() + 0.5 * len(p2) * np.log(c).sum())

    r = minimize(nll, [np.log(p2.mean()), 0.0], method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-9})
    tau2, kappa = np.exp(r.x)
    return float(tau2 / kappa / (np.trace(s) / s.shape[0]))


def mine_variant(bed: Bed, score: str, trim: bool) -> dict[str, np.ndarray]:
    """The centred mining loop with CSLS or the ratio margin, optionally a trimmed refit."""
    from mlirkit.transforms.mining import knn_inner_product

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    src = bed.docs[bed.lang_a == "en"]
    c = src.mean(axis=0)
    y = unit(src - c)
    out = {}
    for lang, v0 in bed.corpus.params_.items():
        x_raw = bed.docs[bed.lang_a == lang]
        v = np.asarray(v0, dtype=np.float64)
        for _ in range(10):
            x = unit(x_raw - v - c)
            s_t, i_t = knn_inner_product(x, y, 4)
            s_s, i_s = knn_inner_product(y, x, 4)
            r_t, r_s = s_t.mean(1), s_s.mean(1)
            if score == "csls":
                m_t, m_s, th = 2 * s_t - r_t[:, None] - r_s[i_t], 2 * s_s - r_s[:, None] - r_t[i_s], 0.0
            else:
                m_t, m_s, th = s_t / ((r_t[:, None] + r_s[i_t]) / 2), s_s / ((r_s[:, None] + r_t[i_s]) / 2), 1.0
            best_t = i_t[np.arange(len(x)), m_t.argmax(1)]
            best_s = i_s[np.arange(len(y)), m_s.argmax(1)]
            rows = np.flatnonzero(best_s[best_t] == np.arange(len(x)))
            rows = rows[m_t[rows].max(1) >= th]
            if len(rows) < 10:
                break
            diff = x_raw[rows] - src[best_t[rows]]
            if trim:
                agree = diff @ v / np.linalg.norm(diff, axis=1) / np.linalg.norm(v)
                diff = diff[agree >= np.median(agree)]
            new = diff.mean(axis=0)
            change = np.linalg.norm(new - v) / np.linalg.norm(v)
            v = new
            if change < 1e-3:
                break
        out[lang] = v
    return out


def mine_all_languages(bed: Bed, start: dict[str, np.ndarray], project: Callable[[np.ndarray], np.ndarray],
                       k: int) -> dict[str, np.ndarray]:
    """``V_l = mean over x in l and its k nearest shifted documents y of other languages m of (x - y + V_m)``."""
    dim = bed.docs.shape[1]
    v = {l: np.zeros(dim) for l in set(bed.langs)}
    v.update({l: np.asarray(x, np.float64) for l, x in start.items()})
    other = bed.lang_a[:, None] != bed.lang_a[None, :]
    for _ in range(10):
        off = np.stack([v[l] for l in bed.langs])
        z = bed.docs - off
        z = z - z.mean(axis=0)
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        sim = np.where(other, z @ z.T, -np.inf)
        nn = np.argsort(-sim, axis=1)[:, :k]
        new = {l: np.zeros(dim) for l in v}
        for lang in v:
            if lang == "en":
                continue
            rows = np.flatnonzero(bed.lang_a == lang)
            new[lang] = project(np.mean([bed.docs[i] - bed.docs[j] + off[j] for i in rows for j in nn[i]], axis=0))
        change = max(np.linalg.norm(new[l] - v[l]) / max(np.linalg.norm(v[l]), 1e-12) for l in v if l != "en")
        v = new
        if change < 1e-3:
            break
    return {l: x for l, x in v.items() if l != "en"}


def main(argv: list[str] | None = None) -> int:
    from mlirkit.transforms.alpha_select import select_alpha
    from experiments.mining_variants import fit_mined_shift
    from mlirkit.transforms import ShiftTransform
    from experiments.topic_projection import remove_topic
    from mlirkit.transforms.topic_subspace import topic_subspace

    args = parse_args(argv)
    bed = Bed(args)
    bed.check_against_mlirkit_eval()
    base_nd, base_recall = bed.score(None, 1.0, "test")
    print(f"**{bed.data.name}**{' (quick slice)' if args.quick else ''}, `{args.encoder}`: test nDCG@20 base "
          f"{base_nd:.3f}, dev {bed.score(None, 1.0, 'dev')[0]:.3f}\n")
    print("| variant | dev nDCG@20 at the dev alpha | dev nDCG@20 at the label-free alpha | test at the dev alpha: "
          "nDCG@20 | worst language R@20 vs base | test at the label-free alpha: nDCG@20 | worst language |")
    print("|---|---|---|---|---|---|---|")
    corpus = {l: v.astype(np.float64) for l, v in bed.corpus.params_.items()}
    pairs = {l: v.astype(np.float64) for l, v in bed.pairs.params_.items()}
    mined = fit_mined_shift(bed.docs, bed.langs, "en", encoder=FP, selection="mutual-margin", initial=bed.corpus,
                            center=True).params_
    auto = topic_subspace(bed.docs, bed.langs)
    report(bed, "corpus", corpus, base_recall)
    report(bed, "mined-c", mined, base_recall)
    report(bed, "pairs-ddtp (parallel text)", pairs, base_recall)
    report(bed, f"corpus-tr auto (r={auto.rank})", remove_topic(bed.corpus, auto).params_, base_recall)
    tr = fit_mined_shift(bed.docs, bed.langs, "en", encoder=FP, selection="mutual-margin", initial=bed.corpus,
                         center=True, topic_rank="auto")
    report(bed, f"mined-c-tr auto (r={auto.rank})", tr.params_, base_recall)
    from scipy.stats import beta

    dim = bed.docs.shape[1]
    for level in (0.05, 0.01):  # per-language skew test: project a language when its own share is significant
        crit = beta.ppf(1 - level, auto.rank / 2, (dim - auto.rank) / 2)
        per = {l: auto.project_out(v) if auto.energy_in(v) > crit else v for l, v in corpus.items()}
        report(bed, f"corpus-tr auto, per-language test at {level:g} ({sum(auto.energy_in(v) > crit for v in corpus.values())}"
                    f" of {len(corpus)} projected)", per, base_recall)
    for r in (10, 20, 40):
        report(bed, f"corpus-tr r={r}", remove_topic(bed.corpus, topic_subspace(bed.docs, bed.langs, r)).params_,
               base_recall)
    for c in (0.2, 0.5, 1.0, 2.0):
        report(bed, f"ridge c={c:g}", ridge(bed, corpus, c), base_recall)
    report(bed, "fisher c=1", ridge(bed, corpus, 1.0, fisher=True), base_recall)
    c_eb = eb_ridge_c(bed, corpus)
    report(bed, f"ridge EB (c={c_eb:.3g})", ridge(bed, corpus, c_eb), base_recall)
    report(bed, "mine csls", mine_variant(bed, "csls", trim=False), base_recall)
    report(bed, "mine ratio, trimmed refit", mine_variant(bed, "ratio", trim=True), base_recall)
    start = remove_topic(bed.corpus, auto).params_
    for k in (1, 4):
        report(bed, f"mine all-languages k={k}, topic-robust", mine_all_languages(bed, start, auto.project_out, k),
               base_recall)
    print()
    for r in (10, 20, 40):
        sub = topic_subspace(bed.docs, bed.langs, r)
        report(bed, f"pairs-ddtp-tr r={r} (parallel text)", remove_topic(bed.pairs, sub).params_, base_recall)
    print()
    # paired randomization test (two-sided, 10,000 sign flips) against the pair vectors at their dev alpha
    rng = np.random.default_rng(0)
    ref_alpha = max(GRID, key=lambda a: (bed.score(pairs, a, "dev")[0], -a))
    ref = bed.per_query(pairs, ref_alpha, "test")
    for name, params in (("corpus-tr auto", remove_topic(bed.corpus, auto).params_), ("mined-c-tr auto", tr.params_)):
        t = ShiftTransform.from_tensors({l: np.asarray(v, np.float32) for l, v in params.items()}, encoder=FP, source_lang="en")
        lf = select_alpha(bed.docs, bed.langs, t, grid=(0.0, *GRID), k=20, criterion="knn-source").alpha
        diff = bed.per_query(params, lf, "test") - ref
        flips = np.abs((rng.choice([-1.0, 1.0], size=(10000, len(diff))) * diff).mean(axis=1))
        boot = rng.choice(diff, size=(5000, len(diff))).mean(axis=1)
        print(f"{name} at the label-free alpha {lf:g} minus pairs-ddtp at the dev alpha {ref_alpha:g}: "
              f"{diff.mean():+.4f} nDCG@20 (test), p = {np.mean(flips >= abs(diff.mean())):.3f}, "
              f"bootstrap 95 % interval [{np.quantile(boot, 0.025):+.4f}, {np.quantile(boot, 0.975):+.4f}]")
    print()
    for r in (10, 20, 40):
        sub = topic_subspace(bed.docs, bed.langs, r)
        print(f"energy in the top {r} within-language directions (mean over languages; random direction "
              f"{r / bed.docs.shape[1]:.3f}): pairs-ddtp {np.mean([sub.energy_in(v) for v in pairs.values()]):.3f}, "
              f"corpus {np.mean([sub.energy_in(v) for v in corpus.values()]):.3f}, "
              f"mined-c {np.mean([sub.energy_in(v) for v in mined.values()]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
