"""The same-language cost of shifting towards an English pivot, and of mlirkit's query-time SHIFT.

Recall@10 split into the relevant documents in the query's language (same) and in the other languages
(cross), per query language, for three runs on one bed (cosine, exact):

- ``base``: the untransformed embeddings;
- ``pivot`` (Qdrant's recipe in "SHIFTing Languages in Multilingual RAG"): documents and queries shifted
  towards the English pivot, ``normalize(d - alpha V_l)`` and ``normalize(q - alpha V_s)``;
- ``query-shift`` (mlirkit): every document re-based on the query's language, the query untouched
  (:class:`mlirkit.search.query_shift.QueryTimeShift`).

The grouped randomization test (unit: a question with its translations, :func:`experiments.xquad_beds.grouped_randomization`)
compares query-shift with pivot and with base on the per-query same- and cross-language recall.

    python -m experiments.same_language_cost --transform vectors/e5-tatoeba.shift --cache-dir CACHE \
        --output experiments/results/same_language_cost.json

``--bed ddtp-main-job``: DDTP as the main job searches it (:func:`experiments.xquad_beds.load_main_job_ddtp`:
its pooled corpus, its encoder options and cache entries, the test queries in all 14 languages).
"""
from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from experiments.xquad_beds import BEDS, Bed, grouped_randomization, load_bed, load_main_job_ddtp

K = 10
MAIN_JOB_DDTP = "ddtp-main-job"


def pivot_top(bed: Bed, transform: Any, alpha: float, k: int = K) -> np.ndarray:
    """Top k rows with documents and queries shifted towards the transform's pivot (Qdrant's recipe)."""
    vec = {transform.source_lang: np.zeros(transform.dim), **{la: transform.params_[la] for la in transform.languages}}

    def shifted(x: np.ndarray, langs: list[str]) -> np.ndarray:
        v = np.stack([vec.get(la, np.zeros(transform.dim)) for la in langs])
        y = x - alpha * v
        return y / np.linalg.norm(y, axis=1, keepdims=True)

    docs, queries = shifted(bed.docs, bed.doc_langs), shifted(bed.queries, bed.query_langs)
    s = queries @ docs.T
    part = np.argpartition(-s, k - 1, axis=1)[:, :k]
    order = np.lexsort((part, -np.take_along_axis(s, part, axis=1)), axis=1)
    return np.take_along_axis(part, order, axis=1)


def split_recall(bed: Bed, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query: recall@k of the relevant documents in its own language, and in the others."""
    doc_langs = np.asarray(bed.doc_langs)
    same, cross = np.empty(len(top)), np.empty(len(top))
    for i, (rows, rel) in enumerate(zip(top, bed.rel)):
        is_same = doc_langs[rel] == bed.query_langs[i]
        hit = np.isin(rel, rows)
        same[i] = hit[is_same].mean() if is_same.any() else np.nan
        cross[i] = hit[~is_same].mean() if (~is_same).any() else np.nan
    return same, cross


def lost_same(bed: Bed, base: np.ndarray, shifted: np.ndarray) -> dict[str, Any]:
    """The queries whose same-language relevant document is in base's top k and not in ``shifted``'s: how many,
    its rank in base (0 = first), and how many relevant documents the shifted top k holds instead."""
    doc_langs = np.asarray(bed.doc_langs)
    lost, ranks, relevant = 0, [], []
    for i, (rel, b, s) in enumerate(zip(bed.rel, base, shifted)):
        for d in rel[doc_langs[rel] == bed.query_langs[i]]:
            if d in b and d not in s:
                lost += 1
                ranks.append(int(np.flatnonzero(b == d)[0]))
                relevant.append(int(np.isin(s, rel).sum()))
    relevant_a = np.asarray(relevant)
    return {"documents_lost": lost, "mean_base_rank": float(np.mean(ranks)) if ranks else None,
            "share_first_in_base": float(np.mean(np.asarray(ranks) == 0)) if ranks else None,
            "mean_relevant_in_shifted_top": float(relevant_a.mean()) if lost else None,
            "share_no_relevant_in_shifted_top": float((relevant_a == 0).mean()) if lost else None}


def bed_parser(doc: str) -> argparse.ArgumentParser:
    """The options of an experiment on one bed with one English-pivot SHIFT file (``--output`` the JSON)."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--bed", default="xquad-r", choices=[*BEDS, MAIN_JOB_DDTP])
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    p.add_argument("--cache-dir", required=True)
    p.add_argument("--transform", required=True, help="a SHIFT file with the English pivot")
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--output", required=True)
    return p


def bed_of(args: argparse.Namespace) -> Bed:
    return load_main_job_ddtp(args.encoder, args.cache_dir) if args.bed == MAIN_JOB_DDTP else \
        load_bed(args.bed, args.encoder, args.cache_dir)


def main() -> None:
    args = bed_parser(__doc__).parse_args()
    from mlirkit.transforms import load_transform

    bed = bed_of(args)
    t = load_transform(args.transform)
    runs = {"base": bed.top(None, 0.0, K), "pivot": pivot_top(bed, t, args.alpha),
            "query-shift": bed.top(bed.shift(t), args.alpha, K)}
    ql = np.asarray(bed.query_langs)
    langs = sorted(set(bed.query_langs))
    split = {name: split_recall(bed, top) for name, top in runs.items()}
    table: dict[str, Any] = {}
    for name, (same, cross) in split.items():
        table[name] = {"same": {la: float(np.nanmean(same[ql == la])) for la in langs},
                       "cross": {la: float(np.nanmean(cross[ql == la])) for la in langs}}
        table[name]["same"]["macro"] = float(np.mean([table[name]["same"][la] for la in langs]))
        table[name]["cross"]["macro"] = float(np.mean([table[name]["cross"][la] for la in langs]))
    tests = {}
    for other in ("base", "pivot"):
        for part, j in (("same", 0), ("cross", 1)):
            a, b = split["query-shift"][j], split[other][j]
            ok = ~(np.isnan(a) | np.isnan(b))
            diff, pval = grouped_randomization(a[ok], b[ok], bed.groups[ok])
            tests[f"query-shift vs {other}, {part}"] = {"mean_difference": diff, "p": pval}
            for la in langs:
                sel = ok & (ql == la)
                d, pl = grouped_randomization(a[sel], b[sel], bed.groups[sel])
                tests[f"query-shift vs {other}, {part}, {la}"] = {"mean_difference": d, "p": pl}
    out = {"bed": args.bed, "encoder": args.encoder, "transform": args.transform, "alpha": args.alpha, "k": K,
           "queries": len(bed.query_ids), "documents": len(bed.doc_ids), "recall": table, "tests": tests,
           "lost_same_language": {name: lost_same(bed, runs["base"], runs[name]) for name in ("pivot", "query-shift")}}
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    for name in runs:
        print(name, "same", round(table[name]["same"]["macro"], 4), "cross", round(table[name]["cross"]["macro"], 4))


if __name__ == "__main__":
    main()
