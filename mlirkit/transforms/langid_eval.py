"""Held-out evaluation of language identification: accuracy, and its retrieval effect.

On parallel groups that were *not* used for fitting (the transform's held-out ids, by the same hash
split), every language version of a group is a document and the source-language text is the query;
all versions of the query's group are relevant (the SHIFT benchmarks' construction). The transform is
applied to the documents with (a) their true languages, (b) the languages predicted by the stored
classifier (documents below the confidence threshold stay unchanged), (c) no transform, and we report
nDCG@10, Recall@10 and TLR@10 (recall of relevant documents not in the query's language) for each.
Scores are exact inner products in numpy (the corpora here are small).
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, UNKNOWN_NAMES
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.fit import is_heldout
from mlirkit.transforms.parallel import ParallelGroup
from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)


def _l2(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n == 0, 1, n)


def rank_metrics(scores: np.ndarray, doc_groups: Sequence[str], doc_langs: Sequence[str], query_groups: Sequence[str],
                 query_lang: str, k: int = 10) -> dict[str, Any]:
    """nDCG@k, Recall@k (binary, relevant = same group) and TLR@k (DESIGN.md definition) from a score matrix."""
    groups = np.asarray(doc_groups)
    langs = np.asarray(doc_langs)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    ndcg, recall, tlr = [], [], []
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    for qi, g in enumerate(query_groups):
        rel = groups == g
        n_rel = int(rel.sum())
        hits = rel[order[qi]]
        ideal = discounts[:min(n_rel, k)].sum()
        ndcg.append(float((hits * discounts[:len(hits)]).sum() / ideal) if ideal else 0.0)
        recall.append(hits.sum() / n_rel if n_rel else 0.0)
        cross = rel & (langs != query_lang) & ~np.isin(langs, list(UNKNOWN_NAMES))
        if cross.any():
            tlr.append(cross[order[qi]].sum() / cross.sum())
    top_langs = langs[order].ravel()
    return {f"ndcg@{k}": round(float(np.mean(ndcg)), 4), f"recall@{k}": round(float(np.mean(recall)), 4),
            f"tlr@{k}": round(float(np.mean(tlr)), 4) if tlr else None, "tlr_queries": len(tlr),
            f"share_query_lang@{k}": round(float((top_langs == query_lang).mean()), 4)}


def evaluate_langid(encoder, t: LanguageTransform, groups: Iterable[ParallelGroup], *, source_lang: str | None = None,
                    max_groups: int = 200, heldout: float | None = None, threshold: float = 0.9,
                    alpha: AlphaLike = 1.0, batch_size: int = 64, k: int = 10) -> dict[str, Any]:
    alpha = Alpha.coerce(alpha)
    if t.langid is None:
        raise MlirkitError(f"transform {t.path} has no language classifier (fit with --langid)")
    source_lang = source_lang or t.source_lang
    frac = heldout if heldout is not None else (t.langid.info.get("heldout") or {}).get("fraction")
    if not frac:
        raise MlirkitError("no held-out fraction: the transform was fitted without --heldout (give --heldout to "
                           "choose ids by the same hash split, or use data the transform never saw)")
    keep = set(t.langid.classes)
    chosen: list[ParallelGroup] = []
    for g in groups:
        if is_heldout(g.id, frac) and source_lang in g.texts:
            texts = {l: x for l, x in g.texts.items() if l in keep}
            if len(texts) >= 2:
                chosen.append(ParallelGroup(g.id, texts))
                if len(chosen) >= max_groups:
                    break
    if not chosen:
        raise MlirkitError("no held-out groups with a source-language row")
    doc_texts = [x for g in chosen for x in g.texts.values()]
    doc_langs = [l for g in chosen for l in g.texts]
    doc_groups = [g.id for g in chosen for _ in g.texts]
    docs = np.asarray(encoder.encode_docs(doc_texts, doc_langs, batch_size=batch_size), dtype=np.float32)
    queries = _l2(np.asarray(encoder.encode_queries([g.texts[source_lang] for g in chosen], [source_lang] * len(chosen),
                                                    batch_size=batch_size), dtype=np.float32))
    accuracy = t.langid.evaluate(docs, doc_langs, threshold)
    predicted, conf = t.langid.predict(docs)
    pred_langs = [p if c >= threshold else UNKNOWN for p, c in zip(predicted, conf)]
    qgroups = [g.id for g in chosen]
    out: dict[str, Any] = {"groups": len(chosen), "documents": len(docs), "heldout_fraction": frac,
                           "threshold": threshold, "alpha": alpha.to_json(), "langid": accuracy, "retrieval": {}}
    settings = {"no transform": None, "true labels": doc_langs, "predicted labels": pred_langs,
                "predicted labels, no threshold": list(predicted)}
    for name, langs in settings.items():
        vecs = docs if langs is None else t.apply(docs, langs, "doc", alpha)
        q = queries if langs is None or not t.touches("query") else _l2(t.apply(queries, [source_lang] * len(queries),
                                                                                 "query", alpha))
        out["retrieval"][name] = rank_metrics(q @ _l2(vecs).T, doc_groups, doc_langs, qgroups, source_lang, k)
    return out
