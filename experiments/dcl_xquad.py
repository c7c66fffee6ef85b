"""DCL on XQuAD-R's zero-shot split beside SHIFT and the post-hoc methods: one table, on CPU.

``python -m experiments.dcl_xquad --work DIR [--seeds 0 1 2 3 4] [--steps 150] [--batch 8] ...``

Setting (``mlirkit/xquad-r-zs``, docs/datasets.md): DCL is trained from the offline multilingual-e5-small
on English question -> paragraph supervision from 24 seeded XQuAD-R articles, Tatoeba pairs with English
for ar de es zh (parallel text) and the training articles' sentences in hi ru vi (monolingual text
only), and evaluated on the other 24 articles: 960 paragraphs pooled over 8 languages, 629 questions
in each of the 8 languages (5,032 queries).

Rows:

- ``e5-small``: the untrained backbone;
- post-hoc on e5-small (:mod:`mlirkit.transforms`): ``shift-tatoeba`` (SHIFT vectors from the same
  Tatoeba pairs DCL trains on, ar de es zh; hi ru vi filled from the corpus, the default missing-language
  policy), ``shift-corpus`` (vectors from the test corpus's language means), both with the label-free
  alpha (:func:`mlirkit.transforms.alpha_select.select_alpha`); ``centering``, ``lir``, ``lsar``,
  ``leace`` fitted on the test corpus's document embeddings and their languages, alpha 1 (the
  published methods), applied to documents and queries;
- DCL, the rows of the DCL paper's Table 3 as components added to the base fine-tune
  (:data:`experiments.dcl_ablation.TABLE3`): ``dcl-base`` (retrieval loss only), ``dcl-disentangler``
  (+ W_l, L_orth), ``dcl-hsa`` (+ HSA), ``dcl-ldcl`` (+ L_LDCL), ``dcl-full``; each over ``--seeds``;
- ``dcl-full+shift``: SHIFT (Tatoeba vectors, corpus fill, label-free alpha) fitted in each full
  model's retrieval space.

CPU mode: the backbone is frozen (``--top-layers 0``: only W_s and W_l are trained; ``--top-layers K``
trains the top K layers too), its states are cached once (:mod:`mlirkit.train.feature_cache`) for the
training texts and once for the evaluation texts, and every row reads them.

Output: ``WORK/results.json`` (per row and seed: metrics, per-query scores, alpha, seconds), the
markdown tables on stdout (main table with p against e5-small; pairwise grouped tests; gains by
resource level and by Glottolog family of the query language), ``WORK/fig3-full.png`` (PCA of
h, W_s h, W_l h of the test paragraphs from the first full model, coloured by language) and
``WORK/model-full/`` (that model, a DCL encoder directory). A rerun on the same WORK reuses every
finished row. p values: two-sided Fisher randomization test (10,000 permutations) on per-question means
(the 8 translations of a question are one unit; per-query scores of a trained row averaged over seeds),
uncorrected.
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from mlirkit.base.cli import configure_logging, run_cli

logger = logging.getLogger(__name__)

METRICS = ("ndcg@20", "tlr@20", "samelang@20", "mrr@10", "peer@20", "mrc@10")
POSTHOC = ("shift-tatoeba", "shift-corpus", "centering", "lir", "lsar", "leace")
DCL_ROWS = ("base", "disentangler", "hsa", "ldcl", "full")
LABELS = {"e5-small": "e5-small (untrained)", "shift-tatoeba": "SHIFT, Tatoeba vectors (ar de es zh; hi ru vi from corpus)",
          "shift-corpus": "SHIFT, corpus vectors", "centering": "centering", "lir": "LIR (r = 1)",
          "lsar": "LSAR", "leace": "LEACE", "dcl-base": "DCL rows: base fine-tune (retrieval loss, W_s)",
          "dcl-disentangler": "+ disentangler (W_l, L_orth)", "dcl-hsa": "+ disentangler + HSA",
          "dcl-ldcl": "+ disentangler + LDCL", "dcl-full": "DCL full",
          "dcl-full+shift": "DCL full + SHIFT (Tatoeba vectors)"}
RESOURCE = {"en": "en (supervised)", "ar": "parallel text", "de": "parallel text", "es": "parallel text",
            "zh": "parallel text", "hi": "monolingual only", "ru": "monolingual only", "vi": "monolingual only"}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m experiments.dcl_xquad", description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="working directory (data, caches, models, results)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--rows", nargs="+", default=list(DCL_ROWS), choices=DCL_ROWS, help="DCL rows trained")
    p.add_argument("--top-layers", type=int, default=0, help="trained top layers (0 = frozen backbone, heads only)")
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--batch", type=int, default=8, help="retrieval examples, parallel pairs, monolingual sentences per step")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--head-lr", type=float, default=1e-3)
    p.add_argument("--lambda-d", type=float, default=0.1)
    p.add_argument("--max-length", type=int, default=64, help="training queries and sentences (tokens)")
    p.add_argument("--doc-max-length", type=int, default=256, help="training paragraphs (tokens)")
    p.add_argument("--eval-max-length", type=int, default=256, help="evaluation texts (tokens)")
    p.add_argument("--max-pairs", type=int, default=300, help="Tatoeba pairs per parallel language (0 = all)")
    p.add_argument("--max-mono", type=int, default=300, help="monolingual sentences per language (0 = all)")
    p.add_argument("--cache-dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    p.add_argument("--permutations", type=int, default=10000)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    return p.parse_args(argv)


# ----------------------------------------------------------------------------- the test bed
class Bed:
    """The test split (docs, queries, qrels) and the Tatoeba pairs SHIFT is fitted on."""

    def __init__(self, parallel_path: str) -> None:
        from mlirkit.datasets import xquad_r_zs

        col = xquad_r_zs.load_test(None)
        self.docs, self.queries = col.docs, col.queries
        self.qrels: dict[str, dict[str, int]] = {}
        for r in col.qrels:
            self.qrels.setdefault(r.query_id, {})[r.doc_id] = r.relevance
        self.doc_ids = [d.doc_id for d in self.docs]
        self.doc_langs = [d.lang for d in self.docs]
        self.qids = [q.query_id for q in self.queries]
        self.q_langs = [q.lang for q in self.queries]
        self.groups = [q.group_id for q in self.queries]
        rows = [json.loads(x) for x in open(parallel_path, encoding="utf-8")]
        self.pair_texts = [r["text"] for r in rows]
        self.pair_langs = [r["lang"] for r in rows]
        self.pair_groups = [r["id"] for r in rows]


class Space:
    """One retrieval space: normalised document, query and Tatoeba-pair vectors."""

    def __init__(self, d: np.ndarray, q: np.ndarray, pairs: np.ndarray) -> None:
        from mlirkit.base.vectors import l2_normalize

        self.d, self.q, self.pairs = l2_normalize(d), l2_normalize(q), l2_normalize(pairs)


def score(bed: Bed, d: np.ndarray, q: np.ndarray, k: int = 100) -> dict[str, Any]:
    """Metrics (macro over query languages) and per-query scores of one space."""
    from mlirkit.eval.api import evaluate
    from mlirkit.eval.mrc import mrc_from_embeddings

    s = q @ d.T
    top = np.argsort(-s, axis=1, kind="stable")[:, :k]
    run = {qid: {bed.doc_ids[j]: float(s[i, j]) for j in top[i]} for i, qid in enumerate(bed.qids)}
    mrc = mrc_from_embeddings(q, d, bed.qids, bed.q_langs, bed.groups, bed.doc_ids, 10)
    res = evaluate(bed.qrels, {"run": run}, list(METRICS), doc_langs=dict(zip(bed.doc_ids, bed.doc_langs)),
                   query_langs=dict(zip(bed.qids, bed.q_langs)), significance=None,
                   query_groups=dict(zip(bed.qids, bed.groups)), precomputed={"mrc@10": {"run": mrc}})
    return {"metrics": {m: res.value("run", m) for m in METRICS},
            "per_query": {m: {q_: round(float(v), 6) for q_, v in res.per_query["run"][m].items()} for m in METRICS}}


def posthoc(method: str, bed: Bed, sp: Space) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(docs, queries) after ``method`` fitted in the space ``sp``, and what was chosen."""
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.transforms.alpha_select import select_alpha
    from mlirkit.transforms.centering import CenteringTransform
    from mlirkit.transforms.hybrid import fill_missing_from_corpus
    from mlirkit.transforms.leace import LEACETransform
    from mlirkit.transforms.lir import LIRTransform
    from mlirkit.transforms.lsar import LSARTransform
    from mlirkit.transforms.shift_transform import ShiftTransform

    info: dict[str, Any] = {}
    if method == "shift-tatoeba":
        t = ShiftTransform("en").fit(sp.pairs, bed.pair_langs, bed.pair_groups)
        t = fill_missing_from_corpus(t, sp.d, bed.doc_langs)
    elif method == "shift-corpus":
        t = ShiftTransform("en", vectors="corpus").fit(sp.d, bed.doc_langs)
    else:
        cls = {"centering": CenteringTransform, "lir": LIRTransform, "lsar": LSARTransform, "leace": LEACETransform}
        t = cls[method]("en").fit(sp.d, bed.doc_langs)
    alpha = 1.0
    if method.startswith("shift"):
        sel = select_alpha(sp.d, bed.doc_langs, t)
        alpha = sel.alpha
        info["alpha_curve"] = {f"{a:g}": round(v, 5) for a, v in sel.curve.items()}
    info["alpha"] = alpha
    d = l2_normalize(t.transform(sp.d, bed.doc_langs, "doc", alpha=alpha))
    q = l2_normalize(t.transform(sp.q, bed.q_langs, "query", alpha=alpha))
    return d, q, info


# ----------------------------------------------------------------------------- statistics and tables
def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), (float(v.std(ddof=1)) if len(v) > 1 else 0.0)


def seed_mean(runs: dict[str, Any], metric: str) -> dict[str, float]:
    """Per-query scores averaged over a row's seeds (queries scored in every seed)."""
    per = [r["per_query"][metric] for r in runs.values()]
    common = set.intersection(*[set(p) for p in per])
    return {q: float(np.mean([p[q] for p in per])) for q in common}


def grouped_p(a: dict[str, float], b: dict[str, float], groups: dict[str, str], n_perm: int) -> tuple[float, str]:
    """Mean difference a - b and the grouped randomization test's p (unit = a question's translations)."""
    from mlirkit.eval.significance import format_p, randomization_test, unit_means

    common = sorted(set(a) & set(b))
    d = np.array([a[q] - b[q] for q in common])
    res = randomization_test(unit_means(d, [groups[q] for q in common]), n_permutations=n_perm)
    return float(d.mean()), format_p(res.p, res.resolution)


def _p(text: str) -> str:
    return f"p {text.strip()}" if text.strip().startswith("<") else f"p = {text.strip()}"


def tables(results: dict[str, dict[str, Any]], bed: Bed, n_perm: int) -> str:
    from mlirkit.eval.groups import group_scores
    from mlirkit.eval.means import macro_mean

    groups = dict(zip(bed.qids, bed.groups))
    q_lang = dict(zip(bed.qids, bed.q_langs))
    order = [r for r in ("e5-small", *POSTHOC, *(f"dcl-{v}" for v in DCL_ROWS), "dcl-full+shift") if r in results]
    ref = "e5-small"
    out = ["| row | seeds | alpha | " + " | ".join(METRICS) + " |", "|---|---|---|" + "---|" * len(METRICS)]
    for row in order:
        runs = results[row]
        cells = []
        for m in METRICS:
            mu, sd = mean_sd([r["metrics"][m] for r in runs.values()])
            cell = f"{mu:.4f} ± {sd:.4f}" if len(runs) > 1 else f"{mu:.4f}"
            if row != ref:
                cell += f" ({_p(grouped_p(seed_mean(runs, m), seed_mean(results[ref], m), groups, n_perm)[1])})"
            cells.append(cell)
        alphas = sorted({r.get("alpha", 1.0) for r in runs.values()})
        a_text = "/".join(f"{a:g}" for a in alphas) if row.startswith("shift") or row.endswith("+shift") else "-"
        out.append(f"| {LABELS[row]} | {len(runs)} | {a_text} | " + " | ".join(cells) + " |")
    pairs = [("dcl-full", "shift-tatoeba"), ("dcl-full", "shift-corpus"), ("dcl-full+shift", "shift-tatoeba"),
             ("dcl-full+shift", "dcl-full"), ("dcl-full", "dcl-base"), ("dcl-hsa", "dcl-disentangler"),
             ("dcl-ldcl", "dcl-disentangler"), ("dcl-disentangler", "dcl-base")]
    out += ["", "Grouped tests between rows (mean difference a - b over queries, p):", "",
            "| a | b | " + " | ".join(METRICS) + " |", "|---|---|" + "---|" * len(METRICS)]
    for a, b in pairs:
        if a in results and b in results:
            cells = []
            for m in METRICS:
                diff, p = grouped_p(seed_mean(results[a], m), seed_mean(results[b], m), groups, n_perm)
                cells.append(f"{diff:+.4f} ({_p(p)})")
            out.append(f"| {LABELS[a]} | {LABELS[b]} | " + " | ".join(cells) + " |")

    def by_level(row: str, m: str) -> dict[str, float]:
        pq = seed_mean(results[row], m)
        levels: dict[str, list[float]] = {}
        langs: dict[str, list[str]] = {}
        for q, v in pq.items():
            levels.setdefault(RESOURCE[q_lang[q]], []).append(v)
            langs.setdefault(RESOURCE[q_lang[q]], []).append(q_lang[q])
        return {lv: macro_mean(np.array(levels[lv]), langs[lv]) for lv in levels}

    level_names = ("en (supervised)", "parallel text", "monolingual only")
    gain_rows = [r for r in (*(f"dcl-{v}" for v in DCL_ROWS), "dcl-full+shift", "shift-tatoeba", "shift-corpus")
                 if r in results]
    for m in ("ndcg@20", "samelang@20"):
        base = by_level(ref, m)
        out += ["", f"{m} by resource level of the query language (macro over languages; e5-small, then the "
                "change against it; parallel text = ar de es zh, monolingual only = hi ru vi):", "",
                "| row | " + " | ".join(level_names) + " |", "|---|" + "---|" * len(level_names),
                f"| {LABELS[ref]} | " + " | ".join(f"{base[lv]:.4f}" for lv in level_names) + " |"]
        for row in gain_rows:
            v = by_level(row, m)
            out.append(f"| {LABELS[row]} | " + " | ".join(f"{v[lv] - base[lv]:+.4f}" for lv in level_names) + " |")
    per_query = {row: {"ndcg@20": seed_mean(results[row], "ndcg@20")} for row in (ref, *gain_rows)}
    fam = group_scores(per_query, q_lang, "family")
    out += ["", "nDCG@20 by Glottolog family of the query language (`--group-by family`; macro over the "
            "family's languages; e5-small, then the change against it):", "",
            "| row | " + " | ".join(f"{g} ({fam.loc[g, ('', 'languages')]})" for g in fam.index) + " |",
            "|---|" + "---|" * len(fam.index),
            f"| {LABELS[ref]} | " + " | ".join(f"{fam.loc[g, (ref, 'ndcg@20')]:.4f}" for g in fam.index) + " |"]
    for row in gain_rows:
        out.append(f"| {LABELS[row]} | " + " | ".join(
            f"{fam.loc[g, (row, 'ndcg@20')] - fam.loc[g, (ref, 'ndcg@20')]:+.4f}" for g in fam.index) + " |")
    return "\n".join(out)


# ----------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging()
    import torch

    from experiments.dcl_ablation import ModelFactory, train_config
    from mlirkit.datasets import xquad_r_zs
    from mlirkit.train.analysis import dcl_components, plot_dcl_components
    from mlirkit.train.feature_cache import TextInput, build_feature_cache, embed_cached
    from mlirkit.train.trainer import FINAL_DIR, Trainer

    if args.threads:
        torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    clock: dict[str, list[float]] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        w, c = time.time(), time.process_time()
        value = fn()
        t = clock.setdefault(name, [0.0, 0.0])
        t[0] += time.time() - w
        t[1] += time.process_time() - c
        return value

    files = timed("data", lambda: xquad_r_zs.write_training_data(work / "data", args.max_pairs, args.max_mono))
    data = {"triples": files["triples"], "parallel": files["parallel"], "mono": files["monolingual"]}
    bed = timed("data", lambda: Bed(files["parallel"]))
    results_path = work / "results.json"
    results: dict[str, dict[str, Any]] = json.loads(results_path.read_text()) if results_path.is_file() else {}

    def save() -> None:
        tmp = results_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results) + "\n")
        tmp.replace(results_path)

    # the options train_config reads (the ablation script's names)
    targs = argparse.Namespace(work=str(work), max_length=args.max_length, doc_max_length=args.doc_max_length,
                               batch=args.batch, lr=args.lr, head_lr=args.head_lr, steps=args.steps, freeze_layers=0,
                               mode="cached", top_layers=args.top_layers, lambda_d=args.lambda_d,
                               cache_dtype=args.cache_dtype)
    factory = timed("load backbone", ModelFactory)
    untrained = factory.make(train_config(targs, "base", data, 0).with_updates(use_disentangler=False))
    texts = {"doc": [d.text for d in bed.docs], "query": [q.text for q in bed.queries], "pairs": bed.pair_texts}
    inputs = [TextInput(t, untrained.config.doc_prefix, args.eval_max_length) for t in texts["doc"] + texts["pairs"]]
    inputs += [TextInput(t, untrained.config.query_prefix, args.eval_max_length) for t in texts["query"]]
    first = len(untrained.backbone.encoder.layer) - args.top_layers
    cache = timed("feature cache (evaluation texts)", lambda: build_feature_cache(
        untrained, inputs, work / "feature-cache", layer=first, dtype=args.cache_dtype, show_progress=False))

    def hidden(model: Any) -> dict[str, np.ndarray]:
        """Pooled backbone output h of every evaluation text (the frozen part is shared by every row)."""
        return {k: dcl_components(model, texts[k], side="query" if k == "query" else "doc", cache=cache,
                                  max_length=args.eval_max_length)["base"] for k in texts}

    def space(model: Any, h: dict[str, np.ndarray] | None) -> Space:
        """r(x) = W_s h; with trained top layers h itself changes, so the texts are embedded again."""
        if args.top_layers == 0 and h is not None:
            with torch.no_grad():
                rep = {k: model.semantic_rep(torch.from_numpy(v)).numpy() for k, v in h.items()}
            return Space(rep["doc"], rep["query"], rep["pairs"])
        emb = {k: embed_cached(model, cache, texts[k], side="query" if k == "query" else "doc",
                               max_length=args.eval_max_length) for k in texts}
        return Space(emb["doc"], emb["query"], emb["pairs"])

    h0 = timed("evaluate", lambda: hidden(untrained)) if args.top_layers == 0 else None
    base_space = space(untrained, h0)
    if "e5-small" not in results:
        results["e5-small"] = {"0": timed("evaluate", lambda: score(bed, base_space.d, base_space.q))}
        save()
    for method in POSTHOC:
        if method not in results:
            d, q, info = timed("post-hoc fit", lambda: posthoc(method, bed, base_space))
            results[method] = {"0": {**timed("evaluate", lambda: score(bed, d, q)), **info}}
            logger.info("%s: %s", method, results[method]["0"]["metrics"])
            save()
    for variant in args.rows:
        row = f"dcl-{variant}"
        for seed in args.seeds:
            if str(seed) in results.get(row, {}) and (variant != "full" or str(seed) in results.get(row + "+shift", {})):
                continue
            cfg = train_config(targs, variant, data, seed)
            tr = Trainer(cfg, model=factory.make(cfg))
            t0 = time.time()
            final = timed(f"train {variant}", lambda: tr.train(overwrite=True, show_progress=False))
            train_s = time.time() - t0
            model = tr.model
            sp = space(model, h0)
            results.setdefault(row, {})[str(seed)] = {**timed("evaluate", lambda: score(bed, sp.d, sp.q)),
                                                      "train_seconds": round(train_s, 1)}
            logger.info("%s seed %d: %s (train %.0f s)", row, seed, results[row][str(seed)]["metrics"], train_s)
            if variant == "full":
                d, q, info = timed("post-hoc fit", lambda: posthoc("shift-tatoeba", bed, sp))
                results.setdefault(row + "+shift", {})[str(seed)] = {**timed("evaluate", lambda: score(bed, d, q)), **info}
                if seed == args.seeds[0]:
                    comps = dcl_components(model, texts["doc"], cache=cache, max_length=args.eval_max_length)
                    for path in plot_dcl_components(comps, bed.doc_langs, work / "fig3-full", max_points=2000,
                                                    overwrite=True):
                        logger.info("wrote %s", path)
                    shutil.rmtree(work / "model-full", ignore_errors=True)
                    shutil.move(str(final), str(work / "model-full"))
            save()
            shutil.rmtree(Path(cfg.output_dir) / FINAL_DIR, ignore_errors=True)  # 470 MB each; results are kept
    print(tables(results, bed, args.permutations))
    print("\nwall / CPU seconds by phase (this invocation): "
          + "; ".join(f"{k} {w:.0f} / {c:.0f}" for k, (w, c) in clock.items()))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(run_cli(main))
