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
TLR@20, same-language@20, PEER@20 and MRC@10 (docs/evaluation.md), per query language and their mean over query languages; paired randomization
tests with the question as unit (the topics' ``group_id``: the translations of one question or
description move together), Holm-corrected, of every system against ``dense+shift`` and of the two
language-preserving fusions against the best plain fusion (by DDTP dev nDCG@20), with a 95 % grouped
bootstrap interval of their nDCG@20 difference (a non-inferiority margin).

MRC@10 needs each query's scores on the union of its and its translations' top 10, which a 100-deep run
does not hold; it is computed from every score of each system (:func:`mlirkit.eval.mrc.mrc_from_scores`):
``dense`` and ``dense+shift`` from the index's embeddings (scored as the searcher scores them); ``bm25``
from a search of every document (a document BM25 does not return matches no query term: score 0); the
plain fusions from the whole fusion of the same two 100-deep runs the table's fused runs come from (a
document in neither input gets nothing from either: score 0, the fusion's own value), so the MRC is that of
the reported system. The language-slot fusions give an order of their candidates, no score beyond it: no
MRC (left blank).

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

METRICS = ("ndcg@20", "recall@100", "tlr@20", "samelang@20", "peer@20", "mrc@10")
MRC = "mrc@10"
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
        assert encode(["--corpus", corpus, "--output", str(path), "--encoder", encoder, "--save-embeddings",
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
    write_run(run, path, tag=tag, overwrite=True, k=DEPTH)
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


def fused_runs(dense: dict, shifted: dict, bm25: dict, doc_langs: dict, weights: dict,
               whole: dict | None = None) -> dict[str, dict]:
    """The fused runs, ``DEPTH`` deep; ``whole``, when given, receives the plain fusions untruncated (every
    document either input holds: the fusion's scores of all documents, 0 for the rest)."""
    from mlirkit.fuse import fuse, keep_languages

    def plain(method, x, key):
        params = {"weights": weights[key]} if method == "wsum" else {}
        return fuse([x, bm25], method=method, norm="min-max", params=params, allow_missing=True)

    out = {}
    for key, x in (("dense", dense), ("dense+shift", shifted)):
        for method in ("rrf", "wsum"):
            out[f"{method}({key})"] = plain(method, x, key)
    if whole is not None:
        whole.update({name: run.to_dict() for name, run in out.items()})
    out["slots-rrf"] = keep_languages(out["rrf(dense+shift)"], shifted, doc_langs)
    out["slots-wsum"] = keep_languages(out["wsum(dense+shift)"], shifted, doc_langs)
    return {name: _top(run.to_dict()) for name, run in out.items()}


# ----------------------------------------------------------------------------- MRC from every score
def rows_of_runs(fetch, doc_ids: list[str]):
    """A ``score_rows`` for :func:`mlirkit.eval.mrc.mrc_from_scores` from runs that hold every document with
    a non-zero score: ``fetch(rows)`` gives one ``{docid: score}`` per query position; the rest score 0."""
    column = {d: j for j, d in enumerate(doc_ids)}

    def score_rows(rows: np.ndarray) -> np.ndarray:
        out = np.zeros((len(rows), len(doc_ids)))
        for i, docs in enumerate(fetch(rows)):
            for d, v in docs.items():
                out[i, column[d]] = v
        return out
    return score_rows


def mrc_of(score_rows, queries, doc_ids: list[str]) -> dict[str, float]:
    """``{qid: MRC@10}`` from ``score_rows`` (every document scored), the topics' groups."""
    from mlirkit.eval.mrc import mrc_from_scores
    from mlirkit.eval.query_groups import topic_groups

    return mrc_from_scores(score_rows, [q.query_id for q in queries], [q.lang for q in queries],
                           topic_groups(queries), doc_ids, int(MRC.split("@")[1]))


def mrc_dense(index: Path, transform: Path, alpha: float, queries, vectors) -> dict[str, dict[str, float]]:
    """MRC@10 of ``dense`` and ``dense+shift`` from every document's score, as the searchers score them."""
    from mlirkit.search import Searcher

    plain = Searcher(index)
    docs = np.asarray(plain.index.indexed_vectors(), dtype=np.float32)
    doc_ids = list(plain.index.docids)
    shifted = Searcher(index, query_shift="cosine", transform=str(transform), alpha=alpha)
    langs = [q.lang for q in queries]
    return {"dense": mrc_of(lambda rows: vectors[rows] @ docs.T, queries, doc_ids),
            "dense+shift": mrc_of(lambda rows: shifted.shift.scores(vectors[rows], [langs[i] for i in rows],
                                                                    shifted.shift_alpha), queries, doc_ids)}


def mrc_bm25(searcher, queries, doc_ids: list[str], threads: int) -> dict[str, float]:
    """MRC@10 of BM25 from a search of every document (those it leaves out match no query term: 0)."""
    def fetch(rows):
        block = [queries[i] for i in rows]
        run = searcher.search(block, k=len(doc_ids), threads=threads)
        return [run.get(q.query_id, {}) for q in block]
    return mrc_of(rows_of_runs(fetch, doc_ids), queries, doc_ids)


def mrc_runs(runs: dict[str, dict], queries, doc_ids: list[str]) -> dict[str, dict[str, float]]:
    """MRC@10 of runs that hold every document with a non-zero score (the untruncated fusions)."""
    return {name: mrc_of(rows_of_runs(lambda rows, r=run: [r.get(queries[i].query_id, {}) for i in rows], doc_ids),
                         queries, doc_ids) for name, run in runs.items()}


def _top(run: dict) -> dict:
    return {q: dict(sorted(d.items(), key=lambda x: (-x[1], x[0]))[:DEPTH]) for q, d in run.items() if d}


# ----------------------------------------------------------------------------- evaluation
def _metrics_args(metrics, queries, mrc: dict | None) -> dict[str, Any]:
    """``evaluate``'s keyword arguments for ``metrics``: MRC@10 only from ``mrc`` (``{run: {qid: value}}``;
    a run absent there has no MRC), the topics' question groups."""
    from mlirkit.eval.query_groups import topic_groups

    out: dict[str, Any] = {"query_groups": topic_groups(queries)}
    if MRC in metrics:
        out["precomputed"] = {MRC: mrc or {}}
    return out


def per_language(qrels, runs: dict, queries, doc_langs, metrics=METRICS,
                 mrc: dict | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """``{system: {metric: {lang | "mean": value}}}``: per query language, and their mean (a metric a run
    has no value of, MRC without ``mrc`` scores, is left out)."""
    from mlirkit.eval import evaluate

    lang_of = {q.query_id: q.lang for q in queries}
    res = evaluate(qrels, runs, list(metrics), doc_langs=doc_langs, query_langs=lang_of, significance=None,
                   **_metrics_args(metrics, queries, mrc))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in runs:
        out[name] = {}
        for metric in metrics:
            by_lang: dict[str, list[float]] = defaultdict(list)
            for qid, v in res.per_query[name][metric].items():
                by_lang[lang_of[qid]].append(v)
            if not by_lang:
                continue
            cells = {la: float(np.mean(v)) for la, v in sorted(by_lang.items())}
            cells["mean"] = float(np.mean(list(cells.values())))
            out[name][metric] = cells
    return out


def significance(qrels, runs: dict, queries, doc_langs, baseline: str, permutations: int,
                 mrc: dict | None = None) -> dict[str, Any]:
    """Grouped paired randomization tests of every run against ``baseline`` (the topics' question = unit), Holm;
    MRC@10 among the runs ``mrc`` has (the others' MRC tests are dropped)."""
    from mlirkit.eval import evaluate

    res = evaluate(qrels, runs, list(METRICS), doc_langs=doc_langs, query_langs={q.query_id: q.lang for q in queries},
                   significance="fisher", baseline=baseline, n_permutations=permutations,
                   **_metrics_args(METRICS, queries, mrc))
    out: dict[str, Any] = {"unit": res.info.get("test_unit"), "tests": []}
    for c in res.significance:
        if c.metric == MRC and not (c.run_a in (mrc or {}) and c.run_b in (mrc or {})):
            continue
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
            grid = per_language(qrels, {str(a): dense[a] for a in alphas}, queries, doc_langs, ("ndcg@20",))
            alpha_scores = {a: macro(grid[str(a)]["ndcg@20"]) for a in alphas}
            alpha = max(alphas, key=lambda a: (alpha_scores[a], -a))
            from mlirkit.fuse import tune

            weights = {key: tune(qrels, [x, bm25], method="wsum", norm="min-max", metric="ndcg@20",
                                 allow_missing=True)["weights"]
                       for key, x in (("dense", dense["dense"]), ("dense+shift", dense[alpha]))}
            chosen = {"alpha": alpha, "alpha_dev_ndcg20": alpha_scores, "weights": weights}
            dev_fused = fused_runs(dense["dense"], dense[alpha], bm25, doc_langs, weights)
            dev_scores = per_language(qrels, dev_fused, queries, doc_langs, ("ndcg@20",))
            chosen["best_plain"] = max(PLAIN, key=lambda s: macro(dev_scores[s]["ndcg@20"]))
            chosen["dev_ndcg20"] = {s: macro(dev_scores[s]["ndcg@20"]) for s in dev_fused}
            result["chosen_on_dev"] = chosen
            continue
        shifted = dense[chosen["alpha"]]
        whole: dict[str, dict] = {}
        fused = fused_runs(dense["dense"], shifted, bm25, doc_langs, chosen["weights"], whole)
        for name, run in fused.items():
            write(run, runs_dir / f"{split}-{name.replace('(', '-').replace(')', '')}.trec",
                  name.replace("(", "-").replace(")", "").replace("+", "_"))
        runs = {"bm25": bm25, "dense": dense["dense"], "dense+shift": shifted, **fused}
        doc_ids = list(searcher.index.docids)
        start = time.perf_counter()
        mrc = mrc_cached(work / f"mrc-{split}.json", lambda: {
            **mrc_dense(work / "dense", transform, chosen["alpha"], queries, vectors),
            **mrc_runs(whole, queries, doc_ids), **_mrc_bm25s(work / "bm25", queries, doc_ids, args.threads)})
        seconds["mrc"] = time.perf_counter() - start
        result["queries"] = len(queries)
        result["query_langs"] = dict(sorted(_count(q.lang for q in queries).items()))
        result["scores"] = per_language(qrels, runs, queries, doc_langs, mrc=mrc)
        statistics = {"language": bm25, "pooled": pooled}
        stat_mrc = {"language": mrc["bm25"], "pooled": mrc["bm25-pooled"]}
        result["bm25_statistics"] = per_language(qrels, statistics, queries, doc_langs, mrc=stat_mrc)
        result["bm25_statistics_test"] = significance(qrels, statistics, queries, doc_langs, "language",
                                                      args.permutations, stat_mrc)
        result["vs_dense_shift"] = significance(qrels, runs, queries, doc_langs, "dense+shift", args.permutations,
                                                mrc)
        best = chosen["best_plain"]
        result["vs_best_plain"] = significance(qrels, {k: runs[k] for k in (best, "slots-rrf", "slots-wsum")},
                                               queries, doc_langs, best, args.permutations, mrc)
        result["ndcg20_minus_best_plain"] = {s: difference_ci(qrels, runs[s], runs[best], queries)
                                             for s in ("slots-rrf", "slots-wsum")}
    result["chosen"] = chosen
    return result


def _mrc_bm25s(index: Path, queries, doc_ids: list[str], threads: int) -> dict[str, dict[str, float]]:
    from mlirkit.lexical import Bm25Searcher

    with Bm25Searcher(index) as language, Bm25Searcher(index, statistics="pooled") as pooled:
        return {"bm25": mrc_bm25(language, queries, doc_ids, threads),
                "bm25-pooled": mrc_bm25(pooled, queries, doc_ids, threads)}


def mrc_cached(path: Path, make) -> dict[str, dict[str, float]]:
    """``{system: {qid: MRC@10}}``, kept in ``path`` and reused."""
    if path.is_file():
        return json.loads(path.read_text())
    out = make()
    path.write_text(json.dumps(out))
    return out


def _count(items) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for x in items:
        out[x] += 1
    return out


def _p(test: dict) -> str:
    from mlirkit.eval.significance import format_p

    return format_p(test["p_corrected"], 1 / (test["permutations"] + 1) if test.get("permutations") else None)


def _shown(bed: dict) -> list[str]:
    """The metrics of ``METRICS`` some system of ``bed`` has (a result written before a metric was added has none)."""
    return [m for m in METRICS if any(m in scores for scores in bed["scores"].values())]


def _tests_table(tests: dict, title: str, metrics=METRICS) -> list[str]:
    """One row per compared run: its mean and the baseline's (over question groups), Holm p per metric."""
    rows: dict[str, dict[str, dict]] = defaultdict(dict)
    for t in tests["tests"]:
        rows[t["run_b"]][t["metric"]] = t
    base = tests["tests"][0]["run_a"]
    lines = [f"{title} (baseline `{base}`; {tests['unit']['units']} question groups of {tests['unit']['queries']} "
             "queries; means over groups; paired randomization test, 1,000 permutations, Holm over the rows "
             "per metric)\n",
             "| run | " + " | ".join(f"{m} (vs {base})" for m in metrics) + " |",
             "|---|" + "---|" * len(metrics)]
    for run, by_metric in rows.items():
        cells = [f"{_fmt(t['mean_b'], m)} vs {_fmt(t['mean_a'], m)}, p {_p(t)}" if (t := by_metric.get(m)) else ""
                 for m in metrics]
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _summary_table(bed: dict) -> list[str]:
    """Systems x metrics, the mean over query languages; ``*``: different from dense+shift (Holm p < 0.05)."""
    significant = {(t["run_b"], t["metric"]) for t in bed["vs_dense_shift"]["tests"] if t["p_corrected"] < 0.05}
    metrics = _shown(bed)
    lines = ["| system | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
    for system in SYSTEMS:
        cells = [f"{_cell(bed['scores'][system], m, 'mean')}{'*' if (system, m) in significant else ''}"
                 for m in metrics]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _fmt(value: float, metric: str) -> str:
    return f"{value:.1f}" if metric == MRC else f"{value:.3f}"


def _cell(scores: dict, metric: str, lang: str) -> str:
    """One figure, MRC@10 (x100) with one decimal; ``—`` where the system has none."""
    value = scores.get(metric, {}).get(lang)
    return "—" if value is None else _fmt(value, metric)


NOTES = ("PEER@20: with one relevant version per language it is chi2_{L-1}.sf(L-1) for a query with a relevant "
         "document in the top 20 and 1 for one without, a decreasing function of the hit rate, not of language "
         "bias (docs/evaluation.md). MRC@10 (x100, -100 ... 100): "
         "rank correlation of a question's language versions on the union of their top 10, from every score of "
         "each system (dense, dense+shift: the embeddings; bm25: every document with a non-zero score, the rest "
         "0; rrf/wsum: the whole fusion of the two 100-deep inputs, 0 outside them); the language-slot fusions "
         "order their candidates and score nothing beyond them: no MRC (—).\n")


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
        shown = _shown(bed)
        lines.append(NOTES if MRC in shown else "PEER@20 and MRC@10: not measured in this result.\n")
        langs = [la for la in bed["scores"]["bm25"]["ndcg@20"] if la != "mean"]
        for metric in shown:
            lines.append(f"**{metric}** (rows: query language; mean = mean over query languages)\n")
            lines.append("| lang | " + " | ".join(SYSTEMS) + " |")
            lines.append("|---|" + "---:|" * len(SYSTEMS))
            for la in [*langs, "mean"]:
                lines.append(f"| {la} | " + " | ".join(_cell(bed["scores"][s], metric, la) for s in SYSTEMS) + " |")
            lines.append("")
        lines += _tests_table(bed["vs_dense_shift"], "Every system against dense+shift", shown)
        lines += _tests_table(bed["vs_best_plain"], "The language-preserving fusions against the best plain fusion",
                              shown)
        for name, d in bed.get("ndcg20_minus_best_plain", {}).items():
            lines.append(f"- nDCG@20 of {name} minus {chosen['best_plain']}: {d['difference']:+.4f} (mean over query "
                         f"languages), 95 % interval [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}] ({d['replicates']:,} "
                         "bootstrap samples of question groups)")
        lines.append("")
        stats = bed["bm25_statistics"]
        lines.append("BM25 collection statistics (means over query languages)\n")
        lines.append("| statistics | " + " | ".join(shown) + " |")
        lines.append("|---|" + "---:|" * len(shown))
        for name, scores in stats.items():
            lines.append(f"| {name} | " + " | ".join(_cell(scores, m, "mean") for m in shown) + " |")
        lines.append("")
        lines += _tests_table(bed["bm25_statistics_test"], "BM25 pooled against per-language statistics", shown)
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
