"""Index types compared: build time, bytes per document, query time, recall@k against exact search,
and (on real embeddings of the bundled DDTP benchmark) nDCG@20 and TLR@20 with and without SHIFT.

    .venv/bin/python -m perf.index_types --synthetic 20000 --threads 1
    .venv/bin/python -m perf.index_types --real usem --threads 1

Every index is written and read back through :class:`mlirkit.index.IndexWriter` / ``DenseIndex`` (the
code path of ``python -m mlirkit.encode --index-type``). Synthetic vectors: unit vectors around
``--centers`` random centres (clustered like real embeddings; uniform random vectors have no
neighbourhood structure and make every approximate index look bad). Real: documents of
``mlirkit/ddtp/en`` (913 Debian package descriptions x up to 14 languages), English short descriptions
as queries, every language version relevant; SHIFT vectors fitted on ``--parallel-ids`` ids of the
disjoint parallel set ``mlirkit/parallel/ddtp`` (English source, alpha 1). Embeddings are cached in
``$MLIRKIT_CACHE/scale-bench``. Results: JSON on stdout (``--out`` to save) and a Markdown table on stderr.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mlirkit.index import DenseIndex, IndexWriter
from mlirkit.index.types import IndexSpec
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.vectors import l2_normalize

DEFAULT_SPECS = ["flat", "hnsw", "ivf-pq"]


def clustered(n: int, dim: int, centers: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centers, dim)).astype(np.float32)
    out = np.empty((n, dim), dtype=np.float32)
    for s in range(0, n, 50_000):
        m = min(50_000, n - s)
        out[s:s + m] = c[rng.integers(0, centers, m)] + 0.6 * rng.standard_normal((m, dim)).astype(np.float32)
    return l2_normalize(out)


def parse_spec(text: str) -> IndexSpec:
    """``hnsw`` or ``ivf-pq:nlist=256,m=96``."""
    name, _, params = text.partition(":")
    return IndexSpec.parse(name, [p for p in params.split(",") if p])


def build(vectors: np.ndarray, ids: Sequence[str], langs: Sequence[str], spec: IndexSpec, root: Path) -> tuple[Path, float]:
    path = root / spec.name
    start = time.perf_counter()
    with IndexWriter(path, dim=vectors.shape[1], encoder={"bench": True}, normalized=True, index_type=spec,
                     overwrite=True) as w:
        for s in range(0, len(vectors), 65536):
            w.add(ids[s:s + 65536], langs[s:s + 65536], vectors[s:s + 65536])
    return path, time.perf_counter() - start


def measure(vectors: np.ndarray, queries: np.ndarray, specs: Sequence[IndexSpec], ks=(10, 100),
            langs: Sequence[str] | None = None) -> tuple[list[dict[str, Any]], dict[str, tuple[np.ndarray, np.ndarray]]]:
    n = len(vectors)
    ids = [str(i) for i in range(n)]
    langs = list(langs) if langs is not None else [UNKNOWN] * n
    kmax = min(max(ks), n)
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            path, build_s = build(vectors, ids, langs, spec, Path(tmp))
            index = DenseIndex(path)
            resolved = index.index_spec
            start = time.perf_counter()
            scores, found = index.faiss_index.search(queries, kmax)
            search_s = time.perf_counter() - start
            results[spec.name] = (scores, found)
            size = (path / "index").stat().st_size
            rows.append({"index_type": spec.name, "params": resolved.params, "n": n, "dim": vectors.shape[1],
                         "build_s": round(build_s, 2), "index_bytes_per_doc": round(size / n, 1),
                         "model_bytes_per_doc": round(resolved.bytes_per_doc(vectors.shape[1]), 1),
                         "query_ms": round(1000 * search_s / len(queries), 3)})
    exact = results[specs[0].name][1]
    for row in rows:
        found = results[row["index_type"]][1]
        for k in ks:
            k = min(k, n)
            row[f"recall@{k}"] = round(float(np.mean([len(set(a[:k]) & set(e[:k])) / k
                                                      for a, e in zip(found, exact)])), 4)
    return rows, results


def cached_embed(encoder_name: str, label: str, side: str, texts: list[str], langs: list[str]) -> np.ndarray:
    from mlirkit.benchmark.cache import EmbeddingCache
    from mlirkit.base.cache import cache_dir
    from mlirkit.encoders import load_encoder

    cache = EmbeddingCache(cache_dir("scale-bench"), show_progress=False)
    encoder = load_encoder(encoder_name)
    return cache.embed(encoder, encoder_name, label, side, texts, langs), encoder


def real(encoder_name: str, specs: Sequence[IndexSpec], parallel_ids: int, corpus: str) -> list[dict[str, Any]]:
    from mlirkit.eval import evaluate
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics
    from mlirkit.transforms import ShiftTransform

    docs = list(read_corpus(corpus))
    queries = read_topics(corpus)
    qrels = read_qrels(corpus)
    doc_embs, encoder = cached_embed(encoder_name, "ddtp-docs", "doc", [d.text for d in docs], [d.lang for d in docs])
    q_embs, _ = cached_embed(encoder_name, "ddtp-queries", "query", [q.text for q in queries], [q.lang for q in queries])
    # SHIFT from the disjoint parallel set: first `parallel_ids` ids having an English version
    par: dict[str, dict[str, str]] = {}
    for d in read_corpus("mlirkit/parallel/ddtp"):
        gid, _, lang = d.doc_id.rpartition("/")
        par.setdefault(gid, {})[lang] = d.text
    groups = [g for g in sorted(par) if "en" in par[g]][:parallel_ids]
    src_texts = [par[g]["en"] for g in groups]
    tgt = [(i, lang, par[g][lang]) for i, g in enumerate(groups) for lang in sorted(par[g]) if lang != "en"]
    src, _ = cached_embed(encoder_name, "parallel-en", "doc", src_texts, ["en"] * len(src_texts))
    tgt_embs, _ = cached_embed(encoder_name, "parallel-tgt", "doc", [t[2] for t in tgt], [t[1] for t in tgt])
    by_lang: dict[str, tuple[list, list]] = {}
    for row, (i, lang, _) in enumerate(tgt):
        by_lang.setdefault(lang, ([], []))
        by_lang[lang][0].append(row)
        by_lang[lang][1].append(i)
    x = np.concatenate([np.concatenate([src[idx], tgt_embs[rows]]) for rows, idx in by_lang.values()])
    fit_langs = [side for la, (rows, _) in by_lang.items() for side in ("en", la) for _ in rows]
    pair_groups = [(la, i) for la, (rows, _) in by_lang.items() for _ in range(2) for i in range(len(rows))]
    shift = ShiftTransform("en").fit(x, fit_langs, pair_groups)  # each (source, translation) pair a group
    shift.encoder = dict(encoder.fingerprint)
    doc_langs = {d.doc_id: d.lang for d in docs}
    qv = l2_normalize(q_embs)
    out = []
    for condition in ("none", "shift"):
        vectors = doc_embs if condition == "none" else shift.transform(doc_embs, [d.lang for d in docs], "doc", 1.0)
        rows, results = measure(l2_normalize(vectors), qv, specs, ks=(10, 100), langs=[d.lang for d in docs])
        runs = {}
        for name, (scores, found) in results.items():
            runs[name] = {q.query_id: {docs[j].doc_id: float(s) for s, j in zip(srow, frow) if j >= 0}
                          for q, srow, frow in zip(queries, scores, found)}
        ev = evaluate(qrels, runs, ["ndcg@20", "tlr@20"], doc_langs=doc_langs, query_langs="en", significance=None)
        table = ev.table if hasattr(ev, "table") else ev
        for row in rows:
            row.update({"corpus": corpus, "encoder": encoder_name, "transform": condition,
                        "ndcg@20": round(float(_metric(table, row["index_type"], "ndcg@20")), 4),
                        "tlr@20": round(float(_metric(table, row["index_type"], "tlr@20")), 4)})
        out.extend(rows)
    return out


def _metric(table: Any, run: str, metric: str) -> float:
    """Mean ``metric`` of ``run`` from an :class:`mlirkit.eval` result (DataFrame indexed by run)."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        df = table
    else:
        df = getattr(table, "summary", None) or getattr(table, "df", None)
    return df.loc[run, metric]


def markdown(rows: list[dict[str, Any]]) -> str:
    keys = [k for k in rows[0] if k not in ("params",)]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--synthetic", type=int, nargs="*", default=[], help="sizes of synthetic collections")
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--centers", type=int, default=1000)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--real", default=None, help="encoder for the DDTP run (usem, multilingual-e5-small-q4)")
    p.add_argument("--corpus", default="mlirkit/ddtp/en")
    p.add_argument("--parallel-ids", type=int, default=400)
    p.add_argument("--index", nargs="+", default=DEFAULT_SPECS, help="index specs, e.g. flat hnsw ivf-pq:nlist=64")
    p.add_argument("--threads", type=int, default=None, help="FAISS threads")
    p.add_argument("--out", default=None, help="also write the JSON results here")
    args = p.parse_args(argv)
    import faiss

    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    specs = [parse_spec(s) for s in args.index]
    if specs[0].name != "flat":
        specs.insert(0, IndexSpec.create("flat"))
    rows: list[dict[str, Any]] = []
    for n in args.synthetic:
        data = clustered(n + args.queries, args.dim, args.centers, seed=0)
        r, _ = measure(data[:n], data[n:], specs)
        for row in r:
            row["data"] = "synthetic"
        rows.extend(r)
        print(markdown(r), file=sys.stderr, flush=True)
    if args.real:
        r = real(args.real, specs, args.parallel_ids, args.corpus)
        rows.extend(r)
        print(markdown(r), file=sys.stderr, flush=True)
    text = json.dumps({"command": " ".join(["perf/index_types.py", *(argv or sys.argv[1:])]),
                       "faiss_threads": faiss.omp_get_max_threads(), "results": rows}, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
