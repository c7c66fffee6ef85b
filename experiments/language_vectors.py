"""Language vectors compared: base, pair-fitted SHIFT, corpus-fitted SHIFT, hybrid, centering, LIR, each
with alpha chosen on the labelled dev split and without labels (kNN language mixing on the index).

Reuses the benchmark's inputs, embedding cache, fitting, retrieval and evaluation
(:mod:`mlirkit.benchmark`): corpus, queries and translation pairs are encoded once into the cache and
every later run reads them from there. Queries are English (the SHIFT setting). The report is printed as
Markdown and written with the raw numbers to ``--output`` (JSON).

    python -m experiments.language_vectors --encoder multilingual-e5-small-q4 \\
        --benchmark mlirkit/ddtp --quick --output runs/language-vectors-e5-quick.json

``--benchmark mlirkit/ddtp-nonparallel`` runs the non-parallel variant (each language describes other
packages; :mod:`mlirkit.datasets.ddtp_nonparallel`): its documents are a subset of the pooled corpus,
so their embeddings are taken from the pooled corpus's cache entry (``--corpus-from mlirkit/ddtp``).

``shift-mined``: vectors from pseudo-parallel pairs mined in the corpus (:mod:`mlirkit.transforms.mining`,
``--mine-k``, ``--mine-threshold``; ``shift-mined-c``: the same with ``center=True``). ``shift-corpus-tr`` /
``shift-mined-c-tr``: corpus / centred mined vectors kept out of the documents' topic subspace
(:mod:`mlirkit.transforms.topic_subspace`, ``--topic-rank``, default auto); ``-trt``: the same, projected only
when the skew test (level ``--topic-test``, default 0.01) finds topic in the corpus vectors. ``shift-mined-u`` /
``shift-mined-u-trt``: centred mining with the union-kNN pair selection (``selection="union-knn"``), without
and with the skew-tested topic projection. Every shift system is also run at the guarded per-language
label-free alpha (:mod:`experiments.alpha_guard`, rows "guarded"); the report gives per run the
largest recall@20 loss of any document language against the base. ``--systems`` keeps only the named
shift systems (faster).
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger("language_vectors")

GRID = tuple(round(0.2 * i, 1) for i in range(1, 11))  # 0.2 ... 2.0 (dev sweep and label-free grid)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--quantize", choices=["int8", "none"], default="none")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--benchmark", default="mlirkit/ddtp")
    p.add_argument("--corpus-from", default=None,
                   help="take document embeddings from this benchmark's pooled-corpus cache entry (rows selected by id)")
    p.add_argument("--quick", action="store_true", help="the benchmark's quick slice (100 query groups, 50 pairs)")
    p.add_argument("--pairs", type=int, default=None, help="translation pairs per language (default 200, quick 50)")
    p.add_argument("--cache-dir", type=Path, default=None)
    p.add_argument("--cache-variant", default=None,
                   help="label suffix of the cache entries (default: the benchmark's, e.g. '-quick'); '' for none")
    p.add_argument("--doc-embeddings-index", default=None,
                   help="an mlirkit index with embeddings.npy of exactly this corpus (same ids, same encoder) to reuse")
    p.add_argument("--min-docs", type=int, default=20)
    p.add_argument("--blend", type=float, default=0.5)
    p.add_argument("--k", type=int, default=20, help="neighbours of the label-free criterion")
    p.add_argument("--permutations", type=int, default=1000)
    p.add_argument("--output", type=Path, required=True)
    p.add_argument("--mine-k", type=int, default=4, help="neighbours of the mining ratio margin")
    p.add_argument("--mine-threshold", type=float, default=1.0, help="ratio-margin threshold of mined pairs")
    p.add_argument("--topic-rank", default="auto",
                   help="rank of the topic subspace of shift-corpus-tr / shift-mined-c-tr (a number or auto)")
    p.add_argument("--topic-test", type=float, default=0.01,
                   help="level of the topic skew test of shift-corpus-trt / shift-mined-c-trt")
    p.add_argument("--systems", nargs="+", default=None,
                   help="keep only these shift systems (e.g. shift-pairs-ood shift-pairs-ddtp shift-corpus shift-mined)")
    p.add_argument("--no-fixed", action="store_true", help="leave out centering and LIR")
    p.add_argument("--encode-only", action="store_true",
                   help="fill the embedding cache (corpus, queries, parallel sets) and stop")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = parse_args(argv)
    command = "python -m experiments.language_vectors " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    start = time.perf_counter()
    from mlirkit.benchmark.cache import EmbeddingCache
    from mlirkit.benchmark.config import DEFAULT_FIT_SOURCES, METRICS, BenchmarkConfig
    from mlirkit.benchmark.data import load_benchmark, load_parallel
    from mlirkit.benchmark.steps import cache_variant, fit_transforms as _fit
    from mlirkit.encoders import load_encoder
    from mlirkit.eval import evaluate
    from mlirkit.transforms.alpha_select import select_alpha
    from experiments.corpus_variants import fit_corpus_shift
    from mlirkit.transforms import hybrid_shift
    from experiments.corpus_variants import blend_shift
    from experiments.alpha_guard import select_guarded_alphas
    from experiments.mining_variants import fit_mined_shift

    options: dict[str, Any] = {"max_length": args.max_length, "batch_size": args.batch_size}
    if args.quantize != "none":
        options["quantize"] = args.quantize
    if args.threads:
        options["threads"] = args.threads
    if args.encoder == "usem":
        options = {k: v for k, v in options.items() if k == "threads"}
    config = BenchmarkConfig(encoders=(args.encoder,), quick=args.quick, benchmark=args.benchmark,
                             max_pairs=args.pairs or 200, quick_pairs=args.pairs or 50, cache_dir=args.cache_dir)
    variant = cache_variant(config) if args.cache_variant is None else args.cache_variant
    data = load_benchmark(args.benchmark, ("en",), quick_groups=config.quick_groups if args.quick else None)
    encoder = load_encoder(args.encoder, **options)
    logger.info("encoder %s digest %s", args.encoder, encoder.digest)
    root = args.cache_dir
    if root is None:
        from mlirkit.base.cache import cache_dir

        root = cache_dir("benchmark", "embeddings")
    cache = EmbeddingCache(root, show_progress=True)
    docs = data.docs
    doc_ids = [d.doc_id for d in docs]
    doc_langs = [d.lang for d in docs]
    if args.doc_embeddings_index:
        doc_embs = _from_index(args.doc_embeddings_index, doc_ids, encoder)
    elif args.corpus_from:
        pooled = load_benchmark(args.corpus_from, ("en",), quick_groups=config.quick_groups if args.quick else None)
        pooled_embs = cache.embed(encoder, args.encoder, f"{pooled.name}-corpus{variant}", "doc",
                                  [d.text for d in pooled.docs], [d.lang for d in pooled.docs])
        row = {d.doc_id: i for i, d in enumerate(pooled.docs)}
        doc_embs = pooled_embs[[row[i] for i in doc_ids]]
    else:
        doc_embs = cache.embed(encoder, args.encoder, f"{data.name}-corpus{variant}", "doc", [d.text for d in docs],
                               doc_langs)
    queries = [q for s in data.splits.values() for q in s.queries]
    query_embs = cache.embed(encoder, args.encoder, f"{data.name}-queries{variant}", "query",
                             [q.text for q in queries], [q.lang for q in queries])
    query_ids = [q.query_id for q in queries]
    query_langs = [q.lang for q in queries]
    fp = encoder.fingerprint

    transforms: dict[str, Any] = {}
    pair_fit: dict[str, Any] = {}
    for source, sets in DEFAULT_FIT_SOURCES.items():
        ps = load_parallel(source, sets, source_lang="en", target_langs=data.languages,
                           pairs_per_lang=config.pairs_per_lang)
        embs = cache.embed(encoder, args.encoder, f"parallel-{source}{variant}", "doc", ps.texts, ps.langs)
        if args.encode_only:
            continue
        fitted = _fit(ps, embs, fp, config)
        pair_fit[source] = fitted
        transforms[f"shift-pairs-{source}"] = fitted["shift"]
    if args.encode_only:
        logger.info("embedding cache filled (%s): %s", root, cache.stats)
        return 0
    corpus = fit_corpus_shift(doc_embs, doc_langs, "en", encoder=fp, min_docs=args.min_docs, origin=data.name)
    transforms["shift-corpus"] = corpus
    transforms["shift-corpus-overall"] = fit_corpus_shift(doc_embs, doc_langs, "en", encoder=fp, min_docs=args.min_docs,
                                                          relative_to="overall", origin=data.name)
    # hybrid: OOD pairs for the languages with enough of them, corpus vectors for the others; and a blend
    ood = pair_fit["ood"]["shift"]
    transforms["hybrid-ood"] = hybrid_shift(ood, corpus, require_langs=data.languages)
    transforms[f"hybrid-ood-blend{args.blend:g}"] = blend_shift(ood, corpus, args.blend,
                                                                require_langs=data.languages)
    # pairs for only some languages: the OOD vectors kept for the languages gettext has (cs, ko, sk dropped),
    # as when the parallel text does not cover every language of the index; the hybrid fills the gaps
    from mlirkit.datasets import DATASETS
    from mlirkit.transforms import ShiftTransform

    covered = set(DATASETS.get("mlirkit/parallel/gettext").doc_langs)
    partial = ShiftTransform.from_tensors({l: v for l, v in ood.params_.items() if l in covered}, encoder=fp, source_lang="en",
                             meta={**ood.meta, "pairs": {l: n for l, n in (ood.meta.get("pairs") or {}).items()
                                                         if l in covered}})
    transforms["shift-pairs-ood-partial"] = partial
    transforms["hybrid-ood-partial"] = hybrid_shift(partial, corpus, require_langs=data.languages)
    t0 = time.perf_counter()
    transforms["shift-mined"] = fit_mined_shift(doc_embs, doc_langs, "en", encoder=fp, selection="mutual-margin", center=False, initial=corpus,
                                                k=args.mine_k, threshold=args.mine_threshold, origin=data.name)
    transforms["shift-mined-c"] = fit_mined_shift(doc_embs, doc_langs, "en", encoder=fp, selection="mutual-margin", initial=corpus,
                                                  k=args.mine_k, threshold=args.mine_threshold, center=True,
                                                  origin=data.name)
    # topic-robust variants: vectors kept out of the pooled within-language (topic) subspace
    from experiments.topic_projection import parse_topic_rank, remove_topic
    from mlirkit.transforms.topic_subspace import topic_subspace

    rank = parse_topic_rank(args.topic_rank)
    transforms["shift-corpus-tr"] = remove_topic(corpus, topic_subspace(doc_embs, doc_langs, rank))
    transforms["shift-mined-c-tr"] = fit_mined_shift(doc_embs, doc_langs, "en", encoder=fp, selection="mutual-margin", initial=corpus,
                                                     k=args.mine_k, threshold=args.mine_threshold, center=True,
                                                     topic_rank=rank, origin=data.name)
    # the same, projected only when the skew test finds topic in the corpus vectors (level --topic-test)
    transforms["shift-corpus-trt"] = remove_topic(corpus, topic_subspace(doc_embs, doc_langs, rank),
                                                  test_level=args.topic_test)
    transforms["shift-mined-c-trt"] = fit_mined_shift(doc_embs, doc_langs, "en", encoder=fp, selection="mutual-margin", initial=corpus,
                                                      k=args.mine_k, threshold=args.mine_threshold, center=True,
                                                      topic_rank=rank, topic_test_level=args.topic_test,
                                                      origin=data.name)
    # union-kNN pair selection (every document with its k nearest on the other side, both directions), centred
    transforms["shift-mined-u"] = fit_mined_shift(doc_embs, doc_langs, "en", encoder=fp, initial=corpus,
                                                  k=args.mine_k, center=True, selection="union-knn",
                                                  origin=data.name)
    transforms["shift-mined-u-trt"] = fit_mined_shift(doc_embs, doc_langs, "en", encoder=fp, initial=corpus,
                                                      k=args.mine_k, center=True, selection="union-knn",
                                                      topic_rank=rank, topic_test_level=args.topic_test,
                                                      origin=data.name)
    logger.info("mined-pair vectors (%.1fs): %s", time.perf_counter() - t0,
                {l: p.get("pairs", p.get("mined_pairs")) for l, p in transforms["shift-mined"].meta["provenance"].items()})
    if args.systems:
        unknown = sorted(set(args.systems) - set(transforms))
        if unknown:
            raise SystemExit(f"unknown --systems {unknown}; known: {sorted(transforms)}")
        transforms = {n: t for n, t in transforms.items() if n in args.systems}
    fixed = {f"centering-{s}": pair_fit[s]["centering"] for s in pair_fit}
    fixed.update({f"lir-{s}": pair_fit[s]["lir"] for s in pair_fit})
    if args.no_fixed:
        fixed = {}

    # label-free alphas
    label_free: dict[str, Any] = {}
    guarded: dict[str, Any] = {}
    for name, t in transforms.items():
        t0 = time.perf_counter()
        sel = select_alpha(doc_embs, doc_langs, t, grid=(0.0, *GRID), k=args.k, criterion="knn-source",
                           per_language=True)
        label_free[name] = sel
        guarded[name] = select_guarded_alphas(doc_embs, doc_langs, t, grid=(0.0, *GRID), k=args.k)
        logger.info("%s: label-free alpha %g, guarded %s (%.1fs)", name, sel.alpha, guarded[name].per_language,
                    time.perf_counter() - t0)

    runs: dict[str, dict[str, dict[str, float]]] = {}

    def run(name: str, t: Any, alpha: Any) -> None:
        runs[name] = _retrieve(t, alpha, doc_embs, doc_ids, doc_langs, query_embs, query_ids, query_langs)

    run("base", None, 1.0)
    for name, t in transforms.items():
        for a in GRID:
            run(f"{name}@{a:g}", t, a)
        sel = label_free[name]
        run(f"{name}@lf", t, sel.alpha)
        run(f"{name}@lf-lang", t, sel.alpha_spec())
        run(f"{name}@guard", t, guarded[name].alpha_spec())
    for name, t in fixed.items():
        run(name, t, 1.0)

    split_runs = {s: {r: {q: rr[q] for q in sp.query_langs} for r, rr in runs.items()} for s, sp in data.splits.items()}
    doc_lang_map = dict(zip(doc_ids, doc_langs))
    metrics = list(METRICS)
    dev_sp = data.splits["dev"]
    dev = evaluate(dev_sp.qrels, split_runs["dev"], metrics, doc_langs=doc_lang_map, query_langs=dev_sp.query_langs,
                   significance=None)
    chosen_dev = {}
    for name in transforms:
        best = max(GRID, key=lambda a: (dev.value(f"{name}@{a:g}", "ndcg@20") or -1, -a))
        chosen_dev[name] = best
    main = ["base"]
    for name in transforms:
        main += [f"{name}@{chosen_dev[name]:g}", f"{name}@lf", f"{name}@lf-lang", f"{name}@guard"]
    main += list(fixed)
    test_sp = data.splits["test"]
    test = evaluate(test_sp.qrels, {r: split_runs["test"][r] for r in main}, metrics, doc_langs=doc_lang_map,
                    query_langs=test_sp.query_langs, significance="fisher", baseline="base", correction="holm",
                    n_permutations=args.permutations, seed=42, k=20)
    elapsed = time.perf_counter() - start
    drops = recall_drops(test, main)
    report = render(args, data, test, main, chosen_dev, label_free, transforms, command, elapsed, guarded, drops)
    print(report)
    out = {"command": command, "benchmark": data.summary(), "encoder": args.encoder, "encoder_digest": encoder.digest,
           "chosen_dev_alpha": chosen_dev, "label_free": {n: s.as_dict() for n, s in label_free.items()},
           "guarded": {n: s.as_dict() for n, s in guarded.items()}, "recall_drop_vs_base": drops,
           "mining": transforms["shift-mined"].meta.get("mining") if "shift-mined" in transforms else None,
           "topic_robust": {n: t.meta.get("topic_robust") for n, t in transforms.items() if t.meta.get("topic_robust")},
           "provenance": {n: t.meta.get("provenance") for n, t in transforms.items()},
           "test": test.to_dict(), "dev": {r: {m: dev.value(r, m) for m in metrics} for r in dev.runs},
           "seconds": round(elapsed, 1), "markdown": report}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=1, default=_json_default) + "\n", encoding="utf-8")
    return 0


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.bool_):
        return bool(o)
    return str(o)


def _retrieve(transform: Any, alpha: Any, doc_embs, doc_ids, doc_langs, query_embs, query_ids, query_langs) -> Any:
    """The benchmark's retrieval (:func:`mlirkit.benchmark.retrieval.retrieve`) at any alpha, per-language too."""
    from mlirkit.benchmark.retrieval import encode_side, search, transform_for_query_lang

    run: dict[str, dict[str, float]] = {}
    qlangs = np.asarray(list(query_langs), dtype=object)
    for lang in sorted(set(query_langs)):
        rows = np.flatnonzero(qlangs == lang)
        t = transform
        if t is not None:
            t = transform_for_query_lang(t, lang)
        d = encode_side(doc_embs, doc_langs, "doc", t, alpha)
        q = encode_side(query_embs[rows], [lang] * len(rows), "query", t, alpha)
        run.update(search(d, doc_ids, q, [query_ids[i] for i in rows], 100))
    return run


def _from_index(path: str, doc_ids: list[str], encoder: Any) -> np.ndarray:
    from mlirkit.encoders.base import check_same_encoder
    from mlirkit.base.errors import MlirkitError
    from mlirkit.index import DenseIndex

    index = DenseIndex(path)
    check_same_encoder(encoder.fingerprint, index.encoder, f"index {path}")
    row = {d: i for i, d in enumerate(index.docids)}
    missing = [d for d in doc_ids if d not in row]
    if missing:
        raise MlirkitError(f"{len(missing)} documents (e.g. {missing[0]}) are not in {path}")
    return np.asarray(index.embeddings(mmap=True)[[row[d] for d in doc_ids]], dtype=np.float32)


def _fmt(v: Any, digits: int = 3) -> str:
    return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{digits}f}"


def recall_drops(test: Any, runs: list[str]) -> dict[str, dict[str, Any]]:
    """Per run: the largest recall@20 loss of a document language against the base, and which language."""
    df = next((v for k, v in test.per_language.items() if k.startswith("recall@") and "document language" in k), None)
    if df is None or "base" not in df.index:
        return {}
    langs = [c for c in df.columns]
    out = {}
    for r in runs:
        if r == "base" or r not in df.index:
            continue
        loss = {str(l): float(df.loc["base", l]) - float(df.loc[r, l]) for l in langs
                if _isnum(df.loc[r, l]) and _isnum(df.loc["base", l])}
        worst = max(loss, key=loss.get)
        out[r] = {"max_drop": round(loss[worst], 4), "lang": worst,
                  "langs_below_0.01": sorted(l for l, v in loss.items() if v > 0.01 + 1e-9)}
    return out


def render(args, data, test, main, chosen_dev, label_free, transforms, command, elapsed, guarded=None,
           drops=None) -> str:
    from mlirkit.eval.report import significance_marks

    marks = significance_marks(test)
    metrics = ["ndcg@20", "recall@20", "mrr@10", "tlr@20", "samelang@20"]
    s = data.summary()
    lines = [f"**{data.name}**, encoder `{args.encoder}`{' (quick slice)' if args.quick else ''}: "
             f"{s['documents']} documents, {s['queries']['dev']} dev / {s['queries']['test']} test English queries; "
             f"test split; \u2020 = differs from base (p < 0.05, paired Fisher randomization, "
             f"{args.permutations} permutations, Holm over the systems per metric).", "",
             "| system | alpha | " + " | ".join(metrics) + " | samelang@20 expected | worst language vs base (R@20) |",
             "|---" * (len(metrics) + 4) + "|"]
    for r in main:
        name, _, how = r.partition("@")
        if not how:
            alpha = "1" if r != "base" else ""
        elif how == "lf":
            alpha = f"{label_free[name].alpha:g} (label-free)"
        elif how == "lf-lang":
            per = label_free[name].per_language
            alpha = f"per language, label-free ({min(per.values()):g}-{max(per.values()):g})" if per else "-"
        elif how == "guard":
            g = guarded[name]
            per = g.per_language
            edges = sorted(l for l, e in g.at_edge.items() if e)
            alpha = (f"per language, guarded ({min(per.values()):g}-{max(per.values()):g})"
                     + (f", at grid edge: {' '.join(edges)}" if edges else "")) if per else "-"
        else:
            alpha = f"{how} (dev)"
        cells = [_fmt(test.value(r, m)) + ("\u2020" if (r, m) in marks else "") for m in metrics]
        d = (drops or {}).get(r)
        worst = f"{-d['max_drop']:+.3f} {d['lang']}" if d else ""
        lines.append(f"| {name} | {alpha} | " + " | ".join(cells)
                     + f" | {_fmt(test.value(r, 'samelang@20 (expected)'))} | {worst} |")
    lines += ["", "Per-language label-free alphas: " + "; ".join(
        f"{n}: " + ", ".join(f"{l}={a:g}" for l, a in sel.per_language.items()) for n, sel in label_free.items()), ""]
    if guarded:
        lines += ["Guarded per-language alphas: " + "; ".join(
            f"{n}: " + ", ".join(f"{l}={a:g}" for l, a in g.per_language.items()) for n, g in guarded.items()), ""]
    if "shift-mined" in transforms:
        mining = transforms["shift-mined"].meta["mining"]
        lines += [f"Mined pairs (k={mining['k']}, margin >= {mining['threshold']:g}): " + ", ".join(
            f"{l}={r['pairs']} ({len(r['rounds'])} rounds{', fallback' if r['fallback'] else ''}, "
            f"median margin {(r['margin'] or {}).get('median', float('nan')):.3f})"
            for l, r in mining["languages"].items()), ""]
    for name in ("shift-corpus-tr", "shift-mined-c-tr", "shift-corpus-trt", "shift-mined-c-trt", "shift-mined-u-trt"):
        if name in transforms:
            tr = transforms[name].meta["topic_robust"]
            sk = tr.get("skew_test")
            lines += [f"Topic subspace of {name}: rank {tr['rank']} ({tr['rule']}) of the pooled within-language "
                      f"covariance of {tr['documents']} documents in {tr['languages']} languages"
                      + (f"; skew test: mean share {sk['mean_share']:.3f} vs critical {sk['critical']:.3f} "
                         f"(random direction {sk['null_mean']:.3f}) -> "
                         + ("projected" if sk["skewed"] else "not projected") if sk else ""), ""]
    for name, df in test.per_language.items():
        cols = [str(c) for c in df.columns]
        lines += [f"Per language: {name} (test split)", "", "| run | " + " | ".join(cols) + " |",
                  "|---" * (len(cols) + 1) + "|"]
        for row in df.index:
            lines.append(f"| {row} | " + " | ".join(_fmt(float(df.loc[row, c])) if _isnum(df.loc[row, c])
                                                    else str(df.loc[row, c]) for c in df.columns) + " |")
        lines.append("")
    for name in ("hybrid-ood", "hybrid-ood-partial"):
        if name in transforms:
            p = transforms[name].meta["provenance"]
            lines += [f"Provenance of {name}: " + ", ".join(f"{l}={v['from']}" for l, v in p.items()), ""]
    lines += [f"Command ({elapsed:.0f} s): `{command}`"]
    return "\n".join(lines)


def _isnum(v: Any) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


if __name__ == "__main__":
    sys.exit(main())
