"""SHIFT for every query language from one index, measured per query language.

Queries in all 14 languages of the bundled DDTP bed (``mlirkit/ddtp/multi``: dev chooses alpha, test is
reported) against the pooled 10,887-document corpus; SHIFT vectors fitted with English as the pivot from
``mlirkit/parallel/ddtp`` (DDTP descriptions disjoint from the benchmark), 200 pairs per language chosen and
encoded (through the same embedding cache) as the main job does (:mod:`mlirkit.benchmark`). Systems:

- ``base``: the encoder's embeddings, cosine (flat inner product of normalised vectors);
- ``pivot``: the English-pivot SHIFT index (``z - a V_l``, normalised) used for every query language;
- ``rebased``: one index per query language s with ``V_{l|s} = V_l - V_s`` (what serving every language
  exactly would cost without the query-time shift: 14 indexes);
- ``qt-cos``: one index, the query-time shift of :mod:`mlirkit.search.query_shift` (cosine: exact
  re-normalisation, must equal ``rebased``);
- ``qt-ip``: one index, query-time shift with inner product and no renormalisation.

Alpha of each system is chosen on the dev split (mean nDCG@20 over all dev queries) from ``--alphas``.
Reported per query language: nDCG@20, TLR@20, same-language@20 (share of the top 20 in the query's
language); search latency of each system against ``base`` (FAISS flat, as ``mlirkit.search`` searches) and
against ``base-np`` (the same exhaustive numpy kernel as the query-time scorer, without the shift), on
``--latency-queries`` test queries sorted by language in batches of 64, median of ``--repeats`` interleaved
rounds, encoding excluded; and for flat, HNSW and IVF-PQ indexes of the pivot vectors (``--ann-types``),
``--ann-candidates`` candidates re-scored exactly: share of the exact top 20 recovered and nDCG@20.

    python -m perf.query_shift --encoder usem --output runs/query-shift-usem.json

``--synthetic-upstream DIR`` instead writes Belebele files in the upstream layout (facebook/belebele
``data/{flores_code}.jsonl``, as facebook/belebele ships them) whose passages and questions are DDTP test descriptions (real
translations; the 9 languages both have) and runs the same comparison on ``mlirkit/belebele/multi``
(the SHIFT authors' pooled construction, queries in every language; dev/test = even/odd query groups). Only public mlirkit API is used.
``--markdown RESULT.json`` rewrites ``RESULT.md`` from a finished run's JSON.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger("query_shift")

METRICS = ("ndcg@20", "tlr@20", "samelang@20")
SYSTEMS = ("base", "pivot", "rebased", "qt-cos", "qt-ip")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", default="usem")
    p.add_argument("--max-length", type=int, default=256, help="HF encoders only")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--quantize", choices=["int8", "none"], default="none", help="HF encoders only")
    p.add_argument("--backend", default=None,
                   help="HF encoders only (default: the encoder's, auto = OpenVINO on the CPU, bf16 where the CPU has it)")
    p.add_argument("--threads", type=int, default=None, help="encoder threads (default: the encoder's)")
    p.add_argument("--benchmark", default="mlirkit/ddtp/multi", help="ir_datasets id with /dev and /test")
    p.add_argument("--fit-source", default="mlirkit/parallel/ddtp")
    p.add_argument("--fit-name", default="ddtp", help="label of the fit set (the main job's condition name)")
    p.add_argument("--pairs", type=int, default=200, help="translation pairs per language (the main job's 200)")
    p.add_argument("--alphas", type=float, nargs="+", default=[round(0.2 * i, 1) for i in range(1, 11)],
                   help="alpha grid chosen from on dev (default 0.2 ... 2.0)")
    p.add_argument("--depth", type=int, default=100, help="hits per query")
    p.add_argument("--repeats", type=int, default=3, help="latency rounds (median)")
    p.add_argument("--latency-queries", type=int, default=2048,
                   help="test queries timed (sorted by language, so re-based indexes get one-language batches)")
    p.add_argument("--ann-types", nargs="+",
                   default=["flat", "hnsw", "hnsw:ef_search=512", "ivf-pq", "ivf-pq:nprobe=128"],
                   help="index types the candidates come from, TYPE[:PARAM=V,...] (mlirkit's defaults otherwise); "
                        "flat = the exact pivot top C (what the pivot candidates lose, without any approximation)")
    p.add_argument("--ann-candidates", type=int, nargs="+", default=[50, 100, 200, 1000],
                   help="candidates per query fetched from each approximate index and re-scored exactly")
    p.add_argument("--cache-dir", type=Path, default=Path("runs/query-shift-cache"),
                   help="embedding cache (mlirkit.benchmark.cache layout)")
    p.add_argument("--seed-cache", type=Path, default=None,
                   help="another embedding cache (e.g. a main-job run's) to copy identical entries from (read only)")
    p.add_argument("--synthetic-upstream", type=Path, default=None,
                   help="write a Belebele-format release with DDTP passages here and benchmark mlirkit/belebele/multi")
    p.add_argument("--output", type=Path, required=True)
    return p.parse_args(argv)


# ----------------------------------------------------------------------------- inputs
def load_split(dataset_id: str):
    import ir_datasets

    import mlirkit.datasets  # noqa: F401
    from mlirkit.io.topics import read_topics

    queries = read_topics(dataset_id)
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for r in ir_datasets.load(dataset_id).qrels_iter():
        qrels[r.query_id][r.doc_id] = int(r.relevance)
    return queries, dict(qrels)


class Embeddings:
    """The main job's embedding cache (:class:`mlirkit.benchmark.cache.EmbeddingCache`) in ``root``;
    entries of ``seed`` (another cache root, e.g. a finished main-job run) with the same encoder digest and
    data digest are copied in first (read only there), so identical encodings are not repeated."""

    def __init__(self, root: Path, seed: Path | None, encoder, encoder_name: str) -> None:
        from mlirkit.benchmark.cache import EmbeddingCache

        self.cache = EmbeddingCache(root, show_progress=True)
        self.seed = None if seed is None else EmbeddingCache(seed, show_progress=False)
        self.encoder, self.name = encoder, encoder_name

    def __call__(self, label: str, side: str, texts, langs) -> np.ndarray:
        import shutil

        from mlirkit.benchmark.cache import data_digest

        texts, langs = list(texts), list(langs)
        if self.seed is not None:
            digest = data_digest(side, texts, langs)
            src = self.seed.entry_path(self.name, label, side, self.encoder.digest, digest)
            dst = self.cache.entry_path(self.name, label, side, self.encoder.digest, digest)
            meta = src.with_suffix(".json")
            if src.is_file() and meta.is_file() and not dst.is_file() and \
                    json.loads(meta.read_text(encoding="utf-8")).get("data_sha256") == digest:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                shutil.copyfile(meta, dst.with_suffix(".json"))
                logger.info("%s %s %s: copied from %s", self.name, label, side, src)
        return self.cache.embed(self.encoder, self.name, label, side, texts, langs)


def write_synthetic_belebele(root: Path, max_groups: int = 300) -> list[str]:
    """Belebele in its upstream layout (``belebele/data/{flores_code}.jsonl``, facebook/belebele rows:
    ``link, question_number, flores_passage, question, mc_answer1..4, correct_answer_num, dialect``) whose
    passages and questions are the DDTP test split's long and short descriptions (real translations), in
    the languages both have; the other Belebele languages get empty files."""
    import mlirkit.datasets  # noqa: F401
    from mlirkit.datasets import belebele
    from mlirkit.io.corpus import read_corpus

    docs = {d.doc_id: d for d in read_corpus("mlirkit/ddtp/multi")}
    queries, qrels = load_split("mlirkit/ddtp/multi/test")
    groups: dict[tuple[str, ...], dict[str, str]] = defaultdict(dict)
    for q in queries:
        groups[tuple(sorted(d for d, r in qrels[q.query_id].items() if r > 0))][q.lang] = q.text
    langs = [la for la in belebele.LANGS if la in {d.lang for d in docs.values()}]
    rows: dict[str, list[dict]] = {la: [] for la in belebele.LANGS}
    n = 0
    for key in sorted(groups):
        by_lang = {docs[d].lang: docs[d].text for d in key}
        if not all(la in by_lang and la in groups[key] for la in langs):
            continue
        for la in langs:
            rows[la].append({"link": f"https://synthetic.example/ddtp/{n}", "question_number": 1,
                             "flores_passage": by_lang[la], "question": groups[key][la],
                             "mc_answer1": "a", "mc_answer2": "b", "mc_answer3": "c", "mc_answer4": "d",
                             "correct_answer_num": "1", "dialect": belebele.CONFIGS[la]})
        n += 1
        if n >= max_groups:
            break
    d = root / "belebele" / "data"
    d.mkdir(parents=True, exist_ok=True)
    for la, code in belebele.CONFIGS.items():
        (d / f"{code}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[la]),
                                         encoding="utf-8")
    return langs


# ----------------------------------------------------------------------------- systems
def flat(x):
    import faiss

    index = faiss.IndexFlatIP(x.shape[1])
    index.add(np.ascontiguousarray(x, dtype=np.float32))
    return index


def to_run(hits_per_query, queries) -> dict[str, dict[str, float]]:
    return {q.query_id: {h[0]: float(h[1]) for h in hits} for q, hits in zip(queries, hits_per_query)}


class Systems:
    """Every system's search over one corpus (``docids``, raw ``embs``, ``langs``) and transform ``t``."""

    def __init__(self, docids, embs, langs, t):
        from mlirkit.base.vectors import l2_normalize

        self.docids, self.embs, self.langs, self.t = docids, embs, langs, t
        self.base_matrix = np.ascontiguousarray(l2_normalize(embs), dtype=np.float32)
        self.base_index = flat(self.base_matrix)
        self._cache: dict[tuple, Any] = {}

    def pivot_index(self, alpha):
        from mlirkit.base.vectors import l2_normalize

        key = ("pivot", alpha)
        self._keep_alpha(alpha)
        if key not in self._cache:
            self._cache[key] = flat(l2_normalize(self.t.transform(self.embs, self.langs, "doc", alpha)))
        return self._cache[key]

    def rebased_index(self, source, alpha):
        from mlirkit.base.vectors import l2_normalize
        from mlirkit.base.langs import canonical
        from mlirkit.transforms.shift_transform import derive_source

        s = canonical(source)
        if s == self.t.source_lang or s not in self.t.params_:
            return self.pivot_index(alpha)
        key = ("rebased", s, alpha)
        self._keep_alpha(alpha)
        if key not in self._cache:
            ts = derive_source(self.t, s)
            self._cache[key] = flat(l2_normalize(ts.transform(self.embs, self.langs, "doc", alpha)))
        return self._cache[key]

    def _keep_alpha(self, alpha) -> None:
        """Indexes of one alpha at a time (14 re-based flat indexes per alpha)."""
        for key in [k for k in self._cache if k[0] in ("pivot", "rebased") and k[-1] != alpha]:
            del self._cache[key]

    def query_time(self, metric):
        from mlirkit.search.query_shift import QueryTimeShift

        key = ("qt", metric)
        if key not in self._cache:
            from mlirkit.transforms.hybrid import fill_missing_from_corpus

            filled = fill_missing_from_corpus(self.t, self.embs, self.langs)  # the fit step, then the shift
            self._cache[key] = QueryTimeShift(self.embs, self.langs, filled, metric=metric, docids=self.docids)
        return self._cache[key]

    def search(self, system, alpha, qvecs, qlangs, k):
        """Hits ``[(docid, score), ...]`` per query."""
        from mlirkit.search.searcher import search_index

        if system == "base":
            return search_index(self.base_index, self.docids, qvecs, k)
        if system == "pivot":
            return search_index(self.pivot_index(alpha), self.docids, qvecs, k)
        if system == "rebased":
            out: list = [None] * len(qvecs)
            for lang in sorted(set(qlangs)):
                rows = [i for i, la in enumerate(qlangs) if la == lang]
                for i, hits in zip(rows, search_index(self.rebased_index(lang, alpha), self.docids, qvecs[rows], k)):
                    out[i] = hits
            return out
        if system == "base-np":  # the same exhaustive numpy kernel as the query-time scorer, no shift
            block = qvecs @ self.base_matrix.T
            keep = min(len(self.docids), k + 16)
            top = np.argpartition(-block, keep - 1, axis=1)[:, :keep]
            out = []
            for r, sc in zip(top, np.take_along_axis(block, top, axis=1)):
                hits = sorted(((self.docids[i], float(v)) for i, v in zip(r, sc)), key=lambda h: (-h[1], h[0]))
                out.append(hits[:k])
            return out
        if system in ("qt-cos", "qt-ip"):
            return self.query_time("cosine" if system == "qt-cos" else "ip").search(qvecs, qlangs, k, alpha)
        raise ValueError(system)


def evaluate_runs(qrels, runs, doc_langs, query_langs):
    from mlirkit.eval import evaluate

    return evaluate(qrels, runs, list(METRICS), doc_langs=doc_langs, query_langs=query_langs, significance=None)


def per_language_table(result, query_langs) -> dict[str, dict[str, dict[str, float]]]:
    """``{lang or 'all': {system: {metric: value}}}``."""
    out: dict[str, dict[str, dict[str, float]]] = {"all": {}}
    for run in result.runs:
        out["all"][run] = {m: result.value(run, m) for m in METRICS}
    for lang in sorted(set(query_langs.values())):
        df = result.per_language.get(f"query language {lang}")
        if df is None:
            continue
        out[lang] = {run: {m: (None if np.isnan(df.loc[run, m]) else float(df.loc[run, m])) for m in METRICS}
                     for run in result.runs}
    return out


def time_search(systems: Systems, plan: dict[str, float], qvecs, qlangs, k, repeats, batch=64):
    """Median seconds per system for all queries in batches of ``batch`` (rounds interleaved)."""
    times: dict[str, list[float]] = defaultdict(list)
    for name, alpha in plan.items():  # warm caches (indexes, prepared matrices) outside the clock
        systems.search(name, alpha, qvecs[:batch], qlangs[:batch], k)
    for _ in range(repeats):
        for name, alpha in plan.items():
            t0 = time.perf_counter()
            for a in range(0, len(qvecs), batch):
                systems.search(name, alpha, qvecs[a:a + batch], qlangs[a:a + batch], k)
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(v)) for name, v in times.items()}


def ann_check(systems: Systems, alpha, qvecs, qlangs, queries, qrels, doc_langs, kinds, candidates, k=20, batch=64):
    """Flat / HNSW / IVF-PQ indexes of the pivot vectors (mlirkit's default parameters for this corpus size), each
    query's candidates re-scored exactly by the query-time shift (cosine): the share of the exact
    (exhaustive) top ``k`` recovered, nDCG@20, and the seconds for all queries (candidates + re-scoring)."""
    from mlirkit.base.options import parse_key_values
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.index.types import IndexSpec

    x = np.ascontiguousarray(l2_normalize(systems.t.transform(systems.embs, systems.langs, "doc", alpha)), dtype=np.float32)
    qt = systems.query_time("cosine")
    exact = qt.search(qvecs, qlangs, k, alpha)
    query_langs = {q.query_id: q.lang for q in queries}
    out: dict[str, Any] = {}
    for kind in kinds:  # "ivf-pq" or "ivf-pq:nprobe=128,nlist=100" (mlirkit's index parameters)
        name, _, assignments = kind.partition(":")
        spec = IndexSpec.create(name, parse_key_values([a for a in assignments.split(",") if a], "--ann-types"))
        spec = spec.resolve(x.shape[1], len(x))
        index = spec.new_index(x.shape[1])
        t0 = time.perf_counter()
        if spec.type.trained:
            index.train(x)
        index.add(x)
        entry: dict[str, Any] = {"params": spec.params, "build_seconds": time.perf_counter() - t0}
        for c in candidates:
            t0 = time.perf_counter()
            hits = []
            for a in range(0, len(qvecs), batch):
                _, rows = index.search(np.ascontiguousarray(qvecs[a:a + batch]), c)
                hits += qt.search(qvecs[a:a + batch], qlangs[a:a + batch], k, alpha, candidates=rows)
            seconds = time.perf_counter() - t0
            overlap = float(np.mean([len({d for d, _ in h} & {d for d, _ in e}) / max(1, len(e))
                                     for h, e in zip(hits, exact)]))
            res = evaluate_runs(qrels, {"exact": to_run(exact, queries), "ann": to_run(hits, queries)},
                                doc_langs, query_langs)
            entry[str(c)] = {"overlap_at_20": overlap, "ndcg@20": res.value("ann", "ndcg@20"),
                             "ndcg@20_exact": res.value("exact", "ndcg@20"), "seconds": seconds}
        out[kind] = entry
    return out


# ----------------------------------------------------------------------------- main
def run(args) -> dict[str, Any]:
    from mlirkit.encoders import load_encoder
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.io.corpus import read_corpus
    from mlirkit.benchmark.data import load_parallel
    from mlirkit.benchmark.config import BenchmarkConfig
    from mlirkit.benchmark.steps import fit_transforms

    benchmark = args.benchmark
    notes: dict[str, Any] = {}
    if args.synthetic_upstream is not None:
        os.environ["MLIRKIT_DATA"] = str(args.synthetic_upstream)
        notes["synthetic_upstream_langs"] = write_synthetic_belebele(args.synthetic_upstream)
        benchmark = "mlirkit/belebele/multi"
    options: dict[str, Any] = {"batch_size": args.batch_size, "threads": args.threads}
    if args.encoder != "usem":
        options["max_length"] = args.max_length
        options["backend"] = args.backend
        if args.quantize != "none":
            options["quantize"] = args.quantize
    encoder = load_encoder(args.encoder, **options)
    docs = list(read_corpus(benchmark))
    docids, langs = [d.doc_id for d in docs], [d.lang for d in docs]
    tag = "mlirkit/ddtp" if benchmark == "mlirkit/ddtp/multi" else benchmark
    embed = Embeddings(args.cache_dir, args.seed_cache, encoder, args.encoder)
    t0 = time.perf_counter()
    embs = embed(f"{tag}-corpus", "doc", [d.text for d in docs], langs)
    splits = {}
    if args.synthetic_upstream is not None:  # Belebele has one split: halves by query group
        queries, qrels = load_split(benchmark)
        odd = lambda q: int(q.query_id.rsplit("_", 1)[1], 16) % 2 == 1  # noqa: E731
        dev = [q for q in queries if not odd(q)]
        test = [q for q in queries if odd(q)]
        splits = {"dev": (dev, {q.query_id: qrels[q.query_id] for q in dev}),
                  "test": (test, {q.query_id: qrels[q.query_id] for q in test})}
    else:
        splits = {s: load_split(f"{benchmark}/{s}") for s in ("dev", "test")}
    qvecs = {s: l2_normalize(embed(f"{benchmark}-{s}-queries", "query", [q.text for q in splits[s][0]],
                                   [q.lang for q in splits[s][0]])).astype(np.float32) for s in splits}
    # SHIFT vectors as the main job fits them: up to --pairs (en, l) pairs per language from the fit source
    # (groups in the benchmark's fixed pseudo-random order), encoded as documents
    fit_set = load_parallel(args.fit_name, (args.fit_source,), source_lang="en", target_langs=sorted(set(langs)),
                            pairs_per_lang=args.pairs)
    fit_embs = embed(f"parallel-{args.fit_name}", "doc", fit_set.texts, fit_set.langs)
    encode_seconds = time.perf_counter() - t0
    t = fit_transforms(fit_set, fit_embs, encoder.fingerprint, BenchmarkConfig())["shift"]
    report = {"pairs": fit_set.pairs, "texts_encoded": len(fit_set.texts)}
    systems = Systems(docids, embs, langs, t)
    doc_langs = dict(zip(docids, langs))

    # alpha per system on dev
    dev_q, dev_qrels = splits["dev"]
    dev_langs = [q.lang for q in dev_q]
    dev_scores: dict[str, dict[float, float]] = {}
    chosen: dict[str, float] = {"base": 0.0}
    for name in SYSTEMS[1:]:
        runs = {f"{a:g}": to_run(systems.search(name, a, qvecs["dev"], dev_langs, args.depth), dev_q)
                for a in args.alphas}
        res = evaluate_runs(dev_qrels, runs, doc_langs, {q.query_id: q.lang for q in dev_q})
        dev_scores[name] = {a: res.value(f"{a:g}", "ndcg@20") for a in args.alphas}
        chosen[name] = max(args.alphas, key=lambda a: (dev_scores[name][a], -a))
    # test
    test_q, test_qrels = splits["test"]
    test_langs = [q.lang for q in test_q]
    hits = {name: systems.search(name, chosen[name], qvecs["test"], test_langs, args.depth) for name in SYSTEMS}
    res = evaluate_runs(test_qrels, {n: to_run(h, test_q) for n, h in hits.items()}, doc_langs,
                        {q.query_id: q.lang for q in test_q})
    table = per_language_table(res, {q.query_id: q.lang for q in test_q})
    # exactness of the one index against the re-based indexes (same alpha)
    a = chosen["rebased"]
    rb = systems.search("rebased", a, qvecs["test"], test_langs, 20)
    qc = systems.search("qt-cos", a, qvecs["test"], test_langs, 20)
    same_rank = float(np.mean([[h[0] for h in x] == [h[0] for h in y] for x, y in zip(rb, qc)]))
    max_diff = float(max(abs(h[1] - g[1]) for x, y in zip(rb, qc) for h, g in zip(x, y)))
    # latency against base (same alpha per system as reported)
    order = sorted(range(len(test_q)), key=lambda i: (test_langs[i], i))
    order = [order[i] for i in np.linspace(0, len(order) - 1, min(args.latency_queries, len(order))).astype(int)]
    latency = time_search(systems, {**chosen, "base-np": 0.0}, qvecs["test"][order], [test_langs[i] for i in order],
                          args.depth, args.repeats)
    ann = ann_check(systems, chosen["qt-cos"], qvecs["test"], test_langs, test_q, test_qrels, doc_langs,
                    args.ann_types, args.ann_candidates)
    return {"command": "PYTHONPATH=. python " + " ".join(map(shlex.quote, sys.argv)),
            "encoder": args.encoder, "encoder_fingerprint": encoder.fingerprint, "benchmark": benchmark,
            "documents": len(docs), "documents_per_language": dict(sorted(Counter(langs).items())),
            "queries": {s: len(v[0]) for s, v in splits.items()},
            "test_queries_per_language": dict(sorted(Counter(test_langs).items())),
            "fit": {"source": args.fit_source, **report}, "alphas": args.alphas,
            "dev_ndcg@20": dev_scores, "chosen_alpha": chosen, "test": table,
            "one_index_vs_rebased": {"alpha": a, "identical_top20": same_rank, "max_abs_score_diff": max_diff},
            "latency_seconds": latency, "latency_queries": len(order), "depth": args.depth, "latency_vs_base": {n: v / latency["base"] for n, v in latency.items()},
            "ann_pivot_rescored": ann, "encode_seconds": encode_seconds, **notes}


def markdown(out: dict[str, Any]) -> str:
    lines = [f"Encoder `{out['encoder']}`, {out['benchmark']} test split, {out['documents']:,} documents, "
             f"{out['queries']['test']:,} test queries; alpha from dev: "
             + ", ".join(f"{n} {a:g}" for n, a in out["chosen_alpha"].items() if n != "base")
             + f" (grid {min(out['alphas']):g}..{max(out['alphas']):g}; at the grid's edge: "
             + (", ".join(n for n, a in out["chosen_alpha"].items() if n != "base" and a in
                          (min(out["alphas"]), max(out["alphas"]))) or "none") + ")", ""]
    langs = [la for la in out["test"] if la != "all"] + ["all"]
    for metric in METRICS:
        lines.append(f"**{metric}** (rows: query language)\n")
        lines.append("| query lang | " + " | ".join(SYSTEMS) + " |")
        lines.append("|---|" + "---:|" * len(SYSTEMS))
        for la in langs:
            row = out["test"][la]
            cells = ["-" if row[s][metric] is None else f"{row[s][metric]:.3f}" for s in SYSTEMS]
            lines.append(f"| {la} | " + " | ".join(cells) + " |")
        lines.append("")
    lat = out["latency_vs_base"]
    secs = out["latency_seconds"]
    lines.append(f"Search latency, {out['latency_queries']} test queries sorted by language, batches of 64, top "
                 f"{out['depth']}, median of rounds; vs base (FAISS flat, as mlirkit.search): "
                 + ", ".join(f"{n} {lat[n]:.2f}x" for n in [*SYSTEMS, "base-np"])
                 + f"; vs base-np (the same exhaustive numpy kernel without the shift): qt-cos "
                 f"{secs['qt-cos'] / secs['base-np']:.2f}x, qt-ip {secs['qt-ip'] / secs['base-np']:.2f}x "
                 f"(base {secs['base']:.3f} s, base-np {secs['base-np']:.3f} s)")
    ex = out["one_index_vs_rebased"]
    lines.append(f"One index (qt-cos) vs the per-language re-based indexes at alpha {ex['alpha']:g}: identical top 20 for "
                 f"{ex['identical_top20']:.1%} of queries, max |score diff| {ex['max_abs_score_diff']:.1e}")
    lines.append("")
    ann = out["ann_pivot_rescored"]
    cands = [c for c in next(iter(ann.values())) if c not in ("params", "build_seconds")]
    exact = next(iter(ann.values()))[cands[0]]["ndcg@20_exact"]
    lines.append(f"Approximate indexes of the pivot vectors, candidates re-scored exactly (qt-cos): share of the exact "
                 f"top 20 recovered (nDCG@20; exact {exact:.4f})\n")
    lines.append("| index | params | " + " | ".join(f"{c} candidates" for c in cands) + " |")
    lines.append("|---|---|" + "---:|" * len(cands))
    for kind, entry in ann.items():
        params = ", ".join(f"{k}={v}" for k, v in entry["params"].items() if k != "train_size")
        lines.append(f"| {kind} | {params} | " + " | ".join(
            f"{entry[c]['overlap_at_20']:.3f} ({entry[c]['ndcg@20']:.4f})" for c in cands) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--markdown"]:  # --markdown RESULT.json: rewrite RESULT.md from a finished run
        out = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
        Path(argv[1]).with_suffix(".md").write_text(markdown(out), encoding="utf-8")
        return 0
    args = parse_args(argv)
    out = run(args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    text = markdown(out)
    args.output.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
