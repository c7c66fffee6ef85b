"""BM25, dense, dense + SHIFT and their fusions on DDTP and XQuAD-R: what fusion does to language bias.

Systems (every run 100 deep; queries in every language of the bed, against the pooled corpus):

- ``bm25``: :mod:`mlirkit.lexical` (Anserini's analyzer of each document's and each query's language; the
  ``standard`` fallback for cs, sk, vi, which Anserini has none for; BM25 with each document language's
  own statistics, the default; the pooled statistics are measured beside it);
- ``dense``: multilingual-e5-small (the project's default encoder and backend), flat cosine;
- ``dense+shift``: the same index, each query scored with the SHIFT of its own language (the query-time
  shift, docs/shift.md), language vectors fitted on Tatoeba pairs (``mlirkit/parallel/tatoeba``, 200 per
  language, English pivot);
- ``rrf(X)``, ``wsum(X)``: ``X`` = ``dense`` or ``dense+shift`` fused with ``bm25`` by ranx (RRF with
  k = 60; min-max normalised weighted sum with weights tuned by ``ranx.optimize_fusion``);
- ``slots-rrf``, ``slots-wsum``: the language-preserving fusion (:func:`mlirkit.fuse.keep_languages`)
  of ``rrf(dense+shift)`` / ``wsum(dense+shift)``, anchored on ``dense+shift``.

DDTP (``mlirkit/ddtp/multi``, 14 languages): the dev split chooses SHIFT's alpha (macro nDCG@20 over query
languages, grid 0.2 ... 2.0) and the wsum weights (ranx's grid, step 0.1, nDCG@20); the test split is
reported. XQuAD-R (``mlirkit/xquad-r/multi``: 8 languages x 240 paragraphs, 1,190 questions in each
language): no XQuAD-R label is used, alpha and weights come from DDTP dev. Metrics: nDCG@20, Recall@100,
TLR@20, same-language@20, per query language and their mean over query languages; paired randomization
tests with the question as unit (the topics' ``group_id``: the translations of one question or
description move together), Holm-corrected, of every system against ``dense+shift`` and of the two
language-preserving fusions against the best plain fusion (by DDTP dev nDCG@20), with a 95 % grouped
bootstrap interval of their nDCG@20 difference (a non-inferiority margin).

    OMP_NUM_THREADS=1 python -m experiments.lexical_fusion --work work/lexfuse \\
        --output experiments/results/lexical_fusion.json

Indexes, query vectors, the transform and every run (TREC) are kept under ``--work`` and reused.
``--markdown RESULT.json`` prints the tables of a finished run.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger("lexical_fusion")

METRICS = ("ndcg@20", "recall@100", "tlr@20", "samelang@20")
DEPTH = 100
ALPHAS = tuple(round(0.2 * i, 1) for i in range(1, 11))
BEDS = {
    "ddtp": {"corpus": "mlirkit/ddtp/multi", "dev": "mlirkit/ddtp/multi/dev", "test": "mlirkit/ddtp/multi/test"},
    "xquad-r": {"corpus": "mlirkit/xquad-r/multi", "test": "mlirkit/xquad-r/multi"},
}
#: the document languages of both beds (one transform serves both)
ALL_LANGS = ["ar", "cs", "de", "en", "es", "fr", "hi", "it", "ja", "ko", "pl", "pt", "ru", "sk", "uk", "vi", "zh"]
PLAIN = ("rrf(dense)", "wsum(dense)", "rrf(dense+shift)", "wsum(dense+shift)")
SYSTEMS = ("bm25", "dense", "dense+shift", *PLAIN, "slots-rrf", "slots-wsum")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, default=Path("work/lexfuse"), help="indexes, vectors, runs (reused)")
    p.add_argument("--output", type=Path, default=None, help="result JSON (a .md beside it)")
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    p.add_argument("--pairs", default="mlirkit/parallel/tatoeba", help="parallel set the SHIFT vectors are fitted on")
    p.add_argument("--max-pairs", type=int, default=200, help="pairs per language")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--permutations", type=int, default=1000)
    p.add_argument("--markdown", type=Path, default=None, help="print the tables of a finished run's JSON and stop")
    return p.parse_args(argv)


# ----------------------------------------------------------------------------- inputs
def topics(dataset_id: str):
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    return read_topics(dataset_id), read_qrels(dataset_id)


def bm25_index(corpus: str, path: Path, threads: int) -> float:
    """Build (once) the BM25 index; seconds spent (0 when reused)."""
    from mlirkit.lexical import build_bm25_index

    if (path / "meta.json").is_file():
        return 0.0
    start = time.perf_counter()
    build_bm25_index(corpus, path, fallback_analyzer="standard", threads=threads, show_progress=True)
    return time.perf_counter() - start


def dense_index(corpus: str, path: Path, encoder: str, threads: int) -> None:
    from mlirkit.encode.cli import main as encode

    if not (path / "meta.json").is_file():
        assert encode(["--corpus", corpus, "--index", str(path), "--encoder", encoder, "--save-embeddings",
                       "--threads", str(threads)]) == 0


def query_vectors(searcher, queries, path: Path) -> np.ndarray:
    """The encoder's query vectors (cached in ``path``, keyed by the query ids)."""
    ids = [q.query_id for q in queries]
    meta = path.with_suffix(".json")
    if path.is_file() and meta.is_file() and json.loads(meta.read_text()) == ids:
        return np.load(path)
    vectors = np.concatenate([searcher.encode_queries(queries[i:i + 256]) for i in range(0, len(queries), 256)])
    np.save(path, vectors)
    meta.write_text(json.dumps(ids))
    return vectors


def pairs_file(source: str, langs: list[str], per_lang: int, path: Path) -> Path:
    """The first ``per_lang`` groups of every language of ``langs`` in the parallel set ``source`` (English
    and that language), as an aligned JSON Lines file the fit reads."""
    from mlirkit.io.sources import load_ir_dataset

    if path.is_file():
        return path
    wanted = set(langs) - {"en"}
    groups: dict[str, dict[str, str]] = defaultdict(dict)
    per: dict[str, int] = defaultdict(int)
    for doc in load_ir_dataset(source).docs_iter():
        lang = doc.group_id.split("/")[0]
        if lang in wanted and (doc.group_id in groups or per[lang] < per_lang):
            if doc.group_id not in groups:
                per[lang] += 1
            groups[doc.group_id][doc.lang] = doc.text
    missing = sorted(wanted - set(per))
    if missing:
        raise SystemExit(f"{source} has no pairs for {', '.join(missing)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": g, "lang": la, "text": t}, ensure_ascii=False) + "\n"
                            for g, texts in groups.items() for la, t in texts.items()), encoding="utf-8")
    return path


def fit_transform(args: argparse.Namespace, path: Path, langs: list[str]) -> Path:
    """SHIFT vectors (English pivot) of ``langs`` from ``--max-pairs`` pairs per language of ``--pairs``."""
    from mlirkit.shift.cli import main as shift

    if not path.is_file():
        pairs = pairs_file(args.pairs, langs, args.max_pairs, path.with_suffix(".pairs.jsonl"))
        assert shift(["fit", "--method", "shift", "--pairs", str(pairs), "--source-lang", "en",
                      "--encoder", args.encoder, "--threads", str(args.threads), "--output", str(path)]) == 0
    return path


# ----------------------------------------------------------------------------- runs
def write(run: dict, path: Path, tag: str) -> dict:
    from mlirkit.io.trec import write_run

    path.parent.mkdir(parents=True, exist_ok=True)
    write_run(run, path, tag=tag, overwrite=True, depth=DEPTH)
    return run


def cached_run(path: Path, make) -> dict[str, dict[str, float]]:
    from mlirkit.io.trec import read_run

    if path.is_file():
        return read_run(path)
    return write(make(), path, path.stem.replace("+", "_"))


def dense_runs(index: Path, transform: Path, queries, vectors, alphas, runs_dir: Path, split: str):
    """``{"dense": run, alpha: run, ...}``: the plain and the query-time-shifted dense runs."""
    from mlirkit.search import Searcher

    langs = [q.lang for q in queries]

    def to_run(hits):
        return {q.query_id: {h.doc_id: h.score for h in hs} for q, hs in zip(queries, hits)}

    out = {"dense": cached_run(runs_dir / f"{split}-dense.trec",
                               lambda: to_run(Searcher(index).search_vectors(vectors, DEPTH)))}
    for a in alphas:
        out[a] = cached_run(runs_dir / f"{split}-dense+shift-{a}.trec", lambda a=a: to_run(
            Searcher(index, query_shift="cosine", transform=str(transform), alpha=a).search_vectors(vectors, DEPTH, langs)))
    return out


def fused_runs(dense: dict, shifted: dict, bm25: dict, doc_langs: dict, weights: dict) -> dict[str, dict]:
    from mlirkit.fuse import fuse, keep_languages

    def plain(method, x, key):
        params = {"weights": weights[key]} if method == "wsum" else {}
        return fuse([x, bm25], method=method, norm="min-max", params=params, allow_missing=True)

    out = {}
    for key, x in (("dense", dense), ("dense+shift", shifted)):
        for method in ("rrf", "wsum"):
            out[f"{method}({key})"] = plain(method, x, key)
    out["slots-rrf"] = keep_languages(out["rrf(dense+shift)"], shifted, doc_langs)
    out["slots-wsum"] = keep_languages(out["wsum(dense+shift)"], shifted, doc_langs)
    return {name: _top(run.to_dict()) for name, run in out.items()}


def _top(run: dict) -> dict:
    return {q: dict(sorted(d.items(), key=lambda x: (-x[1], x[0]))[:DEPTH]) for q, d in run.items() if d}


# ----------------------------------------------------------------------------- evaluation
def per_language(qrels, runs: dict, queries, doc_langs) -> dict[str, dict[str, dict[str, float]]]:
    """``{system: {metric: {lang | "mean": value}}}``: per query language, and their mean."""
    from mlirkit.eval import evaluate

    lang_of = {q.query_id: q.lang for q in queries}
    res = evaluate(qrels, runs, list(METRICS), doc_langs=doc_langs, query_langs=lang_of, significance=None)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in runs:
        out[name] = {}
        for metric in METRICS:
            by_lang: dict[str, list[float]] = defaultdict(list)
            for qid, v in res.per_query[name][metric].items():
                by_lang[lang_of[qid]].append(v)
            cells = {la: float(np.mean(v)) for la, v in sorted(by_lang.items())}
            cells["mean"] = float(np.mean(list(cells.values())))
            out[name][metric] = cells
    return out


def significance(qrels, runs: dict, queries, doc_langs, baseline: str, permutations: int) -> dict[str, Any]:
    """Grouped paired randomization tests of every run against ``baseline`` (the topics' question = unit), Holm."""
    from mlirkit.eval import evaluate
    from mlirkit.eval.query_groups import topic_groups

    res = evaluate(qrels, runs, list(METRICS), doc_langs=doc_langs, query_langs={q.query_id: q.lang for q in queries},
                   significance="fisher", baseline=baseline, n_permutations=permutations,
                   query_groups=topic_groups(queries))
    out: dict[str, Any] = {"unit": res.info.get("test_unit"), "tests": []}
    for c in res.significance:
        out["tests"].append({k: _plain(v) for k, v in vars(c).items()})
    return out


def difference_ci(qrels, a: dict, b: dict, queries, replicates: int = 2000) -> dict[str, Any]:
    """nDCG@20 of ``a`` minus ``b``: the mean over query languages and its 95 % interval from ``replicates``
    grouped bootstrap samples (a question group, all its translations, is drawn as one;
    :func:`experiments.xquad_beds.grouped_bootstrap`), for a non-inferiority margin."""
    from experiments.xquad_beds import grouped_bootstrap
    from mlirkit.eval import evaluate
    from mlirkit.eval.query_groups import topic_groups

    per_query = evaluate(qrels, {"a": a, "b": b}, ["ndcg@20"], significance=None).per_query
    qids = sorted(per_query["a"]["ndcg@20"])
    lang_of, group_of = {q.query_id: q.lang for q in queries}, topic_groups(queries)
    diff = np.array([per_query["a"]["ndcg@20"][q] - per_query["b"]["ndcg@20"][q] for q in qids])
    reps = grouped_bootstrap(diff, np.array([group_of[q] for q in qids]), [lang_of[q] for q in qids],
                             n=replicates)[:, 0]
    by_lang: dict[str, list[float]] = defaultdict(list)
    for q, d in zip(qids, diff):
        by_lang[lang_of[q]].append(d)
    return {"difference": float(np.mean([np.mean(v) for v in by_lang.values()])),
            "ci95": [float(np.quantile(reps, 0.025)), float(np.quantile(reps, 0.975))], "replicates": replicates}


def _plain(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value


def macro(scores: dict[str, float]) -> float:
    return scores["mean"]


# ----------------------------------------------------------------------------- main
def run_bed(args, bed: str, chosen: dict | None) -> dict[str, Any]:
    from mlirkit.io.doc_langs import read_doc_langs
    from mlirkit.lexical import Bm25Searcher
    from mlirkit.search import Searcher

    spec = BEDS[bed]
    work = args.work / bed
    runs_dir = work / "runs"
    seconds = {"bm25_index": bm25_index(spec["corpus"], work / "bm25", args.threads)}
    dense_index(spec["corpus"], work / "dense", args.encoder, args.threads)
    doc_langs = read_doc_langs(work / "bm25")
    transform = fit_transform(args, args.work / "tatoeba.shift", ALL_LANGS)
    searcher = Searcher(work / "dense")
    result: dict[str, Any] = {"bed": bed, "corpus": spec["corpus"], "documents": len(doc_langs), "seconds": seconds}
    splits = ["dev", "test"] if "dev" in spec else ["test"]
    for split in splits:
        queries, qrels = topics(spec[split])
        vectors = query_vectors(searcher, queries, work / f"qvec-{split}.npy")
        with Bm25Searcher(work / "bm25") as bm25_searcher:
            bm25 = cached_run(runs_dir / f"{split}-bm25.trec",
                              lambda: bm25_searcher.search(queries, k=DEPTH, threads=args.threads, show_progress=True))
        with Bm25Searcher(work / "bm25", statistics="pooled") as pooled_searcher:
            pooled = cached_run(runs_dir / f"{split}-bm25-pooled.trec",
                                lambda: pooled_searcher.search(queries, k=DEPTH, threads=args.threads))
        alphas = ALPHAS if chosen is None else (chosen["alpha"],)
        dense = dense_runs(work / "dense", transform, queries, vectors, alphas, runs_dir, split)
        if chosen is None:  # DDTP dev: choose alpha, then the weights
            grid = per_language(qrels, {str(a): dense[a] for a in alphas}, queries, doc_langs)
            alpha_scores = {a: macro(grid[str(a)]["ndcg@20"]) for a in alphas}
            alpha = max(alphas, key=lambda a: (alpha_scores[a], -a))
            from mlirkit.fuse import tune

            weights = {key: tune(qrels, [x, bm25], method="wsum", norm="min-max", metric="ndcg@20",
                                 allow_missing=True)["weights"]
                       for key, x in (("dense", dense["dense"]), ("dense+shift", dense[alpha]))}
            chosen = {"alpha": alpha, "alpha_dev_ndcg20": alpha_scores, "weights": weights}
            dev_fused = fused_runs(dense["dense"], dense[alpha], bm25, doc_langs, weights)
            dev_scores = per_language(qrels, dev_fused, queries, doc_langs)
            chosen["best_plain"] = max(PLAIN, key=lambda s: macro(dev_scores[s]["ndcg@20"]))
            chosen["dev_ndcg20"] = {s: macro(dev_scores[s]["ndcg@20"]) for s in dev_fused}
            result["chosen_on_dev"] = chosen
            continue
        shifted = dense[chosen["alpha"]]
        fused = fused_runs(dense["dense"], shifted, bm25, doc_langs, chosen["weights"])
        for name, run in fused.items():
            write(run, runs_dir / f"{split}-{name.replace('(', '-').replace(')', '')}.trec",
                  name.replace("(", "-").replace(")", "").replace("+", "_"))
        runs = {"bm25": bm25, "dense": dense["dense"], "dense+shift": shifted, **fused}
        result["queries"] = len(queries)
        result["query_langs"] = dict(sorted(_count(q.lang for q in queries).items()))
        result["scores"] = per_language(qrels, runs, queries, doc_langs)
        statistics = {"language": bm25, "pooled": pooled}
        result["bm25_statistics"] = per_language(qrels, statistics, queries, doc_langs)
        result["bm25_statistics_test"] = significance(qrels, statistics, queries, doc_langs, "language",
                                                      args.permutations)
        result["vs_dense_shift"] = significance(qrels, runs, queries, doc_langs, "dense+shift", args.permutations)
        best = chosen["best_plain"]
        result["vs_best_plain"] = significance(qrels, {k: runs[k] for k in (best, "slots-rrf", "slots-wsum")},
                                               queries, doc_langs, best, args.permutations)
        result["ndcg20_minus_best_plain"] = {s: difference_ci(qrels, runs[s], runs[best], queries)
                                             for s in ("slots-rrf", "slots-wsum")}
    result["chosen"] = chosen
    return result


def _count(items) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for x in items:
        out[x] += 1
    return out


def _p(test: dict) -> str:
    from mlirkit.eval.significance import format_p

    return format_p(test["p_corrected"], 1 / (test["permutations"] + 1) if test.get("permutations") else None)


def _tests_table(tests: dict, title: str) -> list[str]:
    """One row per compared run: its mean and the baseline's (over question groups), Holm p per metric."""
    rows: dict[str, dict[str, dict]] = defaultdict(dict)
    for t in tests["tests"]:
        rows[t["run_b"]][t["metric"]] = t
    base = tests["tests"][0]["run_a"]
    lines = [f"{title} (baseline `{base}`; {tests['unit']['units']} question groups of {tests['unit']['queries']} "
             "queries; means over groups; paired randomization test, 1,000 permutations, Holm over the rows "
             "per metric)\n",
             "| run | " + " | ".join(f"{m} (vs {base})" for m in METRICS) + " |",
             "|---|" + "---|" * len(METRICS)]
    for run, by_metric in rows.items():
        cells = [f"{t['mean_b']:.3f} vs {t['mean_a']:.3f}, p {_p(t)}" if (t := by_metric.get(m)) else ""
                 for m in METRICS]
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _summary_table(bed: dict) -> list[str]:
    """Systems x metrics, the mean over query languages; ``*``: different from dense+shift (Holm p < 0.05)."""
    significant = {(t["run_b"], t["metric"]) for t in bed["vs_dense_shift"]["tests"] if t["p_corrected"] < 0.05}
    lines = ["| system | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    for system in SYSTEMS:
        cells = [f"{bed['scores'][system][m]['mean']:.3f}{'*' if (system, m) in significant else ''}" for m in METRICS]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def markdown(result: dict[str, Any]) -> str:
    """The tables of a finished run: per metric, systems by query language; then the paired tests."""
    lines = []
    for bed in result["beds"]:
        chosen = bed["chosen"]
        lines.append(f"#### {bed['bed']}: {bed['corpus']} ({bed['documents']} documents, {bed['queries']} test "
                     f"queries in {len(bed['query_langs'])} languages)\n")
        lines.append(f"SHIFT alpha {chosen['alpha']} and wsum weights (dense, bm25) "
                     f"{chosen['weights']['dense']} / (dense+shift, bm25) {chosen['weights']['dense+shift']}, "
                     f"chosen on DDTP dev; best plain fusion on DDTP dev: `{chosen['best_plain']}`.\n")
        lines.append("Means over query languages (`*`: differs from dense+shift, grouped paired test, Holm p < 0.05)\n")
        lines += _summary_table(bed)
        langs = [la for la in bed["scores"]["bm25"]["ndcg@20"] if la != "mean"]
        for metric in METRICS:
            lines.append(f"**{metric}** (rows: query language; mean = mean over query languages)\n")
            lines.append("| lang | " + " | ".join(SYSTEMS) + " |")
            lines.append("|---|" + "---:|" * len(SYSTEMS))
            for la in [*langs, "mean"]:
                lines.append(f"| {la} | " + " | ".join(f"{bed['scores'][s][metric][la]:.3f}" for s in SYSTEMS) + " |")
            lines.append("")
        lines += _tests_table(bed["vs_dense_shift"], "Every system against dense+shift")
        lines += _tests_table(bed["vs_best_plain"], "The language-preserving fusions against the best plain fusion")
        for name, d in bed.get("ndcg20_minus_best_plain", {}).items():
            lines.append(f"- nDCG@20 of {name} minus {chosen['best_plain']}: {d['difference']:+.4f} (mean over query "
                         f"languages), 95 % interval [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}] ({d['replicates']:,} "
                         "bootstrap samples of question groups)")
        lines.append("")
        stats = bed["bm25_statistics"]
        lines.append("BM25 collection statistics (means over query languages)\n")
        lines.append("| statistics | " + " | ".join(METRICS) + " |")
        lines.append("|---|" + "---:|" * len(METRICS))
        for name, scores in stats.items():
            lines.append(f"| {name} | " + " | ".join(f"{scores[m]['mean']:.3f}" for m in METRICS) + " |")
        lines.append("")
        lines += _tests_table(bed["bm25_statistics_test"], "BM25 pooled against per-language statistics")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.markdown is not None:
        print(markdown(json.loads(args.markdown.read_text())))
        return 0
    from mlirkit.base.threads import set_threads

    set_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    ddtp = run_bed(args, "ddtp", None)
    xquad = run_bed(args, "xquad-r", ddtp["chosen"])
    result = {"command": "python -m experiments.lexical_fusion", "args": {k: str(v) for k, v in vars(args).items()},
              "beds": [ddtp, xquad]}
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1, default=str) + "\n")
        args.output.with_suffix(".md").write_text(markdown(result) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
