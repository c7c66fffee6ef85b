"""Held-out evaluation of language identification: accuracy, and its retrieval effect.

On parallel groups that were *not* used for fitting (the transform's held-out ids, by the same hash
split), every language version of a group is a document and the source-language text is the query;
all versions of the query's group are relevant (the SHIFT benchmarks' construction). The transform is
applied to the documents with (a) their true languages, (b) the languages predicted by the stored
classifier (documents below the confidence threshold stay unchanged), (c) no transform, and we report
nDCG@10, Recall@10, TLR@10 and the share of the query language in the top 10 for each, computed by
:func:`mlirkit.eval.evaluate` (ranx and mlirkit's TLR@k: the one evaluation path). Scores are exact inner
products in numpy (the corpora here are small).

The held-out split itself (:func:`is_heldout`) and the fit that keeps those ids out and measures the
classifier on them (:func:`fit_with_heldout`, ``python -m experiments.cli fit --heldout F --langid``) live here
too: the product fits its classifier on every passage it is given.
"""
from __future__ import annotations

import hashlib
import logging
from typing import Any, Iterable, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.vectors import l2_normalize
from mlirkit.base.option_names import option
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.langid import fit_langid
from mlirkit.transforms import LanguageTransform, ParallelGroup

logger = logging.getLogger(__name__)


def is_heldout(group_id: str, fraction: float) -> bool:
    """Deterministic split by id: sha1(id) mapped to [0, 1) below ``fraction``."""
    if fraction <= 0:
        return False
    h = int.from_bytes(hashlib.sha1(group_id.encode("utf-8")).digest()[:8], "big")
    return h / 2**64 < fraction


def fit_with_heldout(encoder: Any, groups: Iterable[ParallelGroup], *, method: str, source_lang: str,
                     heldout: float, langid: bool = False, langid_max_per_lang: int = 5000,
                     langid_threshold: float = 0.9, batch_size: int = 64, **options: Any) -> LanguageTransform:
    """``mlirkit.transforms.fit_from_pairs`` on the groups not held out (:func:`is_heldout`, fraction ``heldout``);
    with ``langid``, a classifier fitted on at most ``langid_max_per_lang`` passages per language of those and
    its accuracy measured on the held-out ones (``t.langid.info["heldout"]``). ``options``: ``langs``,
    ``max_pairs``, ``show_progress``, the method's recipe."""
    from mlirkit.transforms import fit_from_pairs

    if not 0.0 <= heldout < 1.0:
        raise MlirkitError(f"held-out fraction {heldout} is outside [0, 1)")
    groups = list(groups)
    train = [g for g in groups if not is_heldout(g.id, heldout)]
    test = [g for g in groups if is_heldout(g.id, heldout)]
    t = fit_from_pairs(encoder, train, source_lang=source_lang, method=method, batch_size=batch_size, **options)
    t.meta["fit"]["heldout_groups"] = len(test)
    if langid:
        def passages(gs: list[ParallelGroup]) -> tuple[np.ndarray, list[str]]:
            texts: dict[str, list[str]] = {}
            for g in gs:
                for lang, text in g.texts.items():
                    if len(texts.setdefault(lang, [])) < langid_max_per_lang:
                        texts[lang].append(text)
            langs = [lang for lang, ts in texts.items() for _ in ts]
            flat = [text for ts in texts.values() for text in ts]
            return np.asarray(encoder.encode_docs(flat, langs, batch_size=batch_size), dtype=np.float32), langs

        x, y = passages(train)
        t.langid = fit_langid(x, y)
        if test:
            xt, yt = passages(test)
            t.langid.info["heldout"] = {**t.langid.evaluate(xt, yt, langid_threshold), "fraction": heldout}
    return t


def rank_metrics(scores: np.ndarray, doc_groups: Sequence[str], doc_langs: Sequence[str], query_groups: Sequence[str],
                 query_lang: str, k: int = 10) -> dict[str, Any]:
    """nDCG@k, Recall@k (binary, relevant = same group), TLR@k and the query language's share of the top k
    from a (queries, documents) score matrix, by :func:`mlirkit.eval.evaluate`.

    Documents are ranked by ``(-score, position)`` (their ids sort by position); figures are rounded to 4
    decimals; ``tlr_queries`` is the number of queries TLR@k counts.
    """
    from mlirkit.eval import evaluate

    doc_ids = [f"d{i:07d}" for i in range(len(doc_groups))]
    query_ids = [f"q{i:07d}" for i in range(len(query_groups))]
    by_group: dict[str, dict[str, int]] = {}
    for doc_id, g in zip(doc_ids, doc_groups):
        by_group.setdefault(g, {})[doc_id] = 1
    qrels = {qid: by_group.get(g, {}) for qid, g in zip(query_ids, query_groups)}
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    run = {qid: {doc_ids[j]: float(scores[qi, j]) for j in top[qi]} for qi, qid in enumerate(query_ids)}
    names = [f"ndcg@{k}", f"recall@{k}", f"tlr@{k}", f"samelang@{k}"]
    result = evaluate(qrels, {"run": run}, names, doc_langs=dict(zip(doc_ids, doc_langs)), query_langs=query_lang,
                      significance=None)
    row = result.table.loc["run"]
    counted = result.counted[f"tlr@{k}"]
    return {f"ndcg@{k}": round(float(row[f"ndcg@{k}"]), 4), f"recall@{k}": round(float(row[f"recall@{k}"]), 4),
            f"tlr@{k}": round(float(row[f"tlr@{k}"]), 4) if counted else None, "tlr_queries": counted,
            f"share_query_lang@{k}": round(float(row[f"samelang@{k}"]), 4)}


def evaluate_langid(encoder, t: LanguageTransform, groups: Iterable[ParallelGroup], *, source_lang: str | None = None,
                    max_groups: int = 200, heldout: float | None = None, threshold: float = 0.9,
                    alpha: AlphaLike = 1.0, batch_size: int = 64, k: int = 10) -> dict[str, Any]:
    """Accuracy of ``t``'s language classifier and :func:`rank_metrics` per labelling on held-out groups."""
    alpha = Alpha.coerce(alpha)
    if t.langid is None:
        raise MlirkitError(f"transform {t.path} has no language classifier (fit with {option('langid', True)})")
    source_lang = source_lang or t.source_lang
    frac = heldout if heldout is not None else (t.langid.info.get("heldout") or {}).get("fraction")
    if not frac:
        raise MlirkitError(f"no held-out fraction: the transform was fitted without {option('heldout')} (give "
                           f"{option('heldout')} to "
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
    queries = l2_normalize(np.asarray(encoder.encode_queries([g.texts[source_lang] for g in chosen],
                                                             [source_lang] * len(chosen), batch_size=batch_size),
                                      dtype=np.float32))
    accuracy = t.langid.evaluate(docs, doc_langs, threshold)
    predicted, conf = t.langid.predict(docs)
    pred_langs = [p if c >= threshold else UNKNOWN for p, c in zip(predicted, conf)]
    qgroups = [g.id for g in chosen]
    out: dict[str, Any] = {"groups": len(chosen), "documents": len(docs), "heldout_fraction": frac,
                           "threshold": threshold, "alpha": alpha.to_json(), "langid": accuracy, "retrieval": {}}
    settings = {"no transform": None, "true labels": doc_langs, "predicted labels": pred_langs,
                "predicted labels, no threshold": list(predicted)}
    for name, langs in settings.items():
        vecs = docs if langs is None else t.transform(docs, langs, "doc", alpha)
        q = queries if langs is None or not t.touches("query") else l2_normalize(
            t.transform(queries, [source_lang] * len(queries), "query", alpha))
        out["retrieval"][name] = rank_metrics(q @ l2_normalize(vecs).T, doc_groups, doc_langs, qgroups, source_lang, k)
    return out
