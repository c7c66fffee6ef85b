"""Language vectors from pseudo-parallel pairs mined from the corpus itself (no parallel text, no labels).

A corpus-fitted vector ``mu_l - mu_src`` (:mod:`mlirkit.transforms.corpus_fit`) mixes language with topic
when the languages of a corpus cover different subjects. Here the vector is instead the mean
difference over *topic-matched* document pairs found in the corpus, as in SHIFT's pair fit, with the
pairs mined like bitext. For a non-source language ``l`` with documents ``X`` and the source-language
documents ``Y`` (untransformed embeddings), starting from ``V^(0)`` (the corpus-fitted vector, so that
the language offset does not hide the matches), round ``t`` does:

1. shift and normalise: ``x~ = norm(x - V^(t) - m)``, ``y~ = norm(y - m)`` with ``m`` the mean of the
   source-language documents (``center=True``, the default) or ``m = 0``. Subtracting a common vector
   changes no difference ``x - y``, but it spreads the cosines of anisotropic encoders (e5: nearly every
   pair of documents has cosine 0.8-0.9), so that neighbours and margins discriminate;
2. exact k-nearest neighbours both ways by inner product (FAISS ``IndexFlatIP``, queries in chunks of
   ``chunk_rows``): ``NN_k(x)`` among ``Y``, ``NN_k(y)`` among ``X``;
3. the pairs of the round, by ``selection`` (:data:`SELECTIONS`):

   - ``union-knn`` (the default): every ``x`` with each of its ``NN_k(x)`` and every ``y`` with each of
     its ``NN_k(y)`` (a pair found from both sides counted twice), the union of both directions'
     nearest-neighbour dictionaries, as in the bidirectional dictionary induction of Artetxe et al.
     (2018, below). Every document takes part, so on a corpus whose languages cover the same topics the
     mean stays close to the corpus mean;
   - ``mutual-margin``: each ``x``'s best candidate among ``NN_k(x)`` and each ``y``'s among ``NN_k(y)``
     under the ratio margin of Artetxe & Schwenk (2019), "Margin-based parallel corpus mining with
     multilingual sentence embeddings" (ACL)::

         margin(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k )

     kept when the two choices are mutual (every document in at most one pair) and the margin is at
     least ``threshold`` (default :data:`DEFAULT_THRESHOLD`; 1 means "no closer than the two
     neighbourhoods on average"; bitext mining of real translations uses 1.04-1.06, the pairs here are
     topic neighbours). Mutual pairs cover a third to two thirds of the documents: the noisier estimate;
4. ``V^(t+1) = (1/|P|) sum_{(x, y) in P} (x - y)`` in float64 on the untransformed embeddings (SHIFT's
   formula over the mined pairs);

(with ``topic`` given, a :class:`~mlirkit.transforms.topic_subspace.TopicSubspace`: projected out of it,
``V^(t+1) = (I - U_r U_r^T) mean(x - y)``, and so is ``V^(0)``), until ``||V^(t+1) - V^(t)|| <= tol *
||V^(t)||`` or ``max_rounds`` rounds (the refinement loop of unsupervised cross-lingual embedding
mapping, Artetxe et al. 2018, "A robust self-learning method for fully unsupervised cross-lingual
mappings of word embeddings"). A language with fewer than ``min_pairs`` pairs in a round keeps its
corpus-fitted vector (recorded, warned): a mean over a handful of pairs is noisier than the corpus mean.
The defaults are the best setting measured (docs/results.md, "Language vectors without parallel text");
the ``mined`` recipe of :mod:`mlirkit.transforms.recipes` adds the topic projection where it is safe.
Definitions: docs/design.md, "Language vectors without parallel text".

Memory: one language's rows and the source-language rows (float32) and ``k`` neighbours per row; the
``n_l x n_src`` similarity matrix is never formed. The rounds, pair counts, margin distribution and
the change of the vector per round are stored in the transform's metadata (``mining`` and
``provenance``).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry
from mlirkit.base.langs import is_unknown
from mlirkit.base.vectors import check_finite, l2_normalize
from mlirkit.transforms.shift_transform import ShiftTransform

if TYPE_CHECKING:
    from mlirkit.transforms.topic_subspace import TopicSubspace

logger = logging.getLogger(__name__)

DEFAULT_K = 4
DEFAULT_THRESHOLD = 1.0
DEFAULT_MIN_PAIRS = 10
DEFAULT_MAX_ROUNDS = 10
DEFAULT_TOL = 1e-3
DEFAULT_CHUNK_ROWS = 4096


@dataclass
class MinedPairs:
    """Kept pairs of one round: row ``tgt[i]`` of the language's documents with row ``src[i]`` of the
    source-language documents, their ratio margin and cosine (in the shifted space)."""

    tgt: np.ndarray
    src: np.ndarray
    margin: np.ndarray
    cos: np.ndarray
    mutual: int

    def __len__(self) -> int:
        return int(len(self.tgt))


def _normalize(x: np.ndarray) -> np.ndarray:
    return l2_normalize(np.asarray(x, dtype=np.float32))


def knn_inner_product(queries: np.ndarray, base: np.ndarray, k: int, *,
                      chunk_rows: int = DEFAULT_CHUNK_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """``(scores (n_q, k), ids (n_q, k))``: the ``k`` largest inner products of each query row among the
    ``base`` rows (exact, FAISS ``IndexFlatIP``; queries searched ``chunk_rows`` at a time)."""
    import faiss

    base = np.ascontiguousarray(base, dtype=np.float32)
    if not 1 <= k <= base.shape[0]:
        raise MlirkitError(f"k={k} must be in [1, {base.shape[0]}] (the number of rows searched)")
    index = faiss.IndexFlatIP(base.shape[1])
    index.add(base)
    scores = np.empty((queries.shape[0], k), dtype=np.float32)
    ids = np.empty((queries.shape[0], k), dtype=np.int64)
    for a in range(0, queries.shape[0], chunk_rows):
        s, i = index.search(np.ascontiguousarray(queries[a:a + chunk_rows], dtype=np.float32), k)
        scores[a:a + chunk_rows], ids[a:a + chunk_rows] = s, i
    return scores, ids


def _neighbourhoods(tgt: np.ndarray, src: np.ndarray, k: int, chunk_rows: int) -> tuple[np.ndarray, ...]:
    """``(s_t, i_t, m_t, s_s, i_s, m_s)``: each side's ``k`` nearest rows on the other side, their cosines and
    ratio margins (module docstring, steps 2-3)."""
    s_t, i_t = knn_inner_product(tgt, src, k, chunk_rows=chunk_rows)  # tgt -> src
    s_s, i_s = knn_inner_product(src, tgt, k, chunk_rows=chunk_rows)  # src -> tgt
    r_t = s_t.astype(np.float64).mean(axis=1)  # (n_t,) mean cos to the k nearest source rows
    r_s = s_s.astype(np.float64).mean(axis=1)  # (n_s,)
    m_t = s_t / ((r_t[:, None] + r_s[i_t]) / 2.0)  # (n_t, k) margin of (x, its j-th neighbour)
    m_s = s_s / ((r_s[:, None] + r_t[i_s]) / 2.0)  # (n_s, k)
    return s_t, i_t, m_t, s_s, i_s, m_s


def _check_sides(tgt: np.ndarray, src: np.ndarray) -> MinedPairs | None:
    if tgt.ndim != 2 or src.ndim != 2 or tgt.shape[1] != src.shape[1]:
        raise MlirkitError(f"need (n, d) arrays of equal d, got {tgt.shape} and {src.shape}")
    if len(tgt) == 0 or len(src) == 0:
        return MinedPairs(*(np.zeros(0, dtype=t) for t in (np.intp, np.intp, np.float64, np.float64)), mutual=0)
    return None


def mine_pairs(tgt: np.ndarray, src: np.ndarray, *, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
               chunk_rows: int = DEFAULT_CHUNK_ROWS) -> MinedPairs:
    """Mutual best ratio-margin pairs between the L2-normalised rows of ``tgt`` (n_t, d) and ``src``
    (n_s, d), kept when the margin is at least ``threshold`` (module docstring, steps 2-4).

    ``k`` is capped at the smaller side's size. Ties in the best-margin choice go to the lower row.
    """
    empty = _check_sides(tgt, src)
    if empty is not None:
        return empty
    k = max(1, min(int(k), len(tgt), len(src)))
    s_t, i_t, m_t, _, i_s, m_s = _neighbourhoods(tgt, src, k, chunk_rows)
    best_t = i_t[np.arange(len(tgt)), np.argmax(m_t, axis=1)]  # (n_t,) best source row of each x
    best_s = i_s[np.arange(len(src)), np.argmax(m_s, axis=1)]  # (n_s,) best target row of each y
    rows = np.arange(len(tgt))
    mutual = best_s[best_t] == rows
    t_rows, s_rows = rows[mutual], best_t[mutual]
    j = np.argmax(m_t[t_rows], axis=1)
    margin = m_t[t_rows, j].astype(np.float64)
    cos = s_t[t_rows, j].astype(np.float64)
    keep = margin >= threshold
    return MinedPairs(t_rows[keep].astype(np.intp), s_rows[keep].astype(np.intp), margin[keep], cos[keep],
                      mutual=int(mutual.sum()))


def union_knn_pairs(tgt: np.ndarray, src: np.ndarray, *, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
                    chunk_rows: int = DEFAULT_CHUNK_ROWS) -> MinedPairs:
    """Every row with its ``k`` nearest rows on the other side, both directions (module docstring,
    "union-knn"): ``{(x, y): y in NN_k(x)}`` followed by ``{(x, y): x in NN_k(y)}``, a pair found from
    both sides listed twice; ``mutual`` counts those. No margin filter (``threshold`` is not used); the
    pairs' ratio margins are returned for the record. ``k`` is capped at the smaller side's size.
    """
    empty = _check_sides(tgt, src)
    if empty is not None:
        return empty
    k = max(1, min(int(k), len(tgt), len(src)))
    s_t, i_t, m_t, s_s, i_s, m_s = _neighbourhoods(tgt, src, k, chunk_rows)
    t_rows = np.concatenate([np.repeat(np.arange(len(tgt)), k), i_s.ravel()]).astype(np.intp)
    s_rows = np.concatenate([i_t.ravel(), np.repeat(np.arange(len(src)), k)]).astype(np.intp)
    forward = np.arange(len(tgt))[:, None] * len(src) + i_t  # (n_t, k) codes of the tgt -> src pairs
    backward = i_s * len(src) + np.arange(len(src))[:, None]  # (n_s, k) codes of the src -> tgt pairs
    both = int(np.intersect1d(forward.ravel(), backward.ravel()).size)
    return MinedPairs(t_rows, s_rows, np.concatenate([m_t.ravel(), m_s.ravel()]).astype(np.float64),
                      np.concatenate([s_t.ravel(), s_s.ravel()]).astype(np.float64), mutual=both)


SELECTIONS: Registry[Callable[..., MinedPairs]] = Registry("pair selection")
"""How a round picks its pairs (module docstring); the name is recorded in the transform's metadata."""
SELECTIONS.register("mutual-margin", mine_pairs)
SELECTIONS.register("union-knn", union_knn_pairs)
DEFAULT_SELECTION = "union-knn"


def _quantiles(x: np.ndarray) -> dict[str, float] | None:
    if len(x) == 0:
        return None
    q = np.quantile(x, [0.0, 0.25, 0.5, 0.75, 1.0])
    return {name: round(float(v), 4) for name, v in zip(("min", "p25", "median", "p75", "max"), q)}


def mined_language_vector(tgt_raw: np.ndarray, src_raw: np.ndarray, initial: np.ndarray, *, k: int = DEFAULT_K,
                          threshold: float = DEFAULT_THRESHOLD, min_pairs: int = DEFAULT_MIN_PAIRS,
                          max_rounds: int = DEFAULT_MAX_ROUNDS, tol: float = DEFAULT_TOL, center: bool = True,
                          chunk_rows: int = DEFAULT_CHUNK_ROWS, topic: "TopicSubspace | None" = None,
                          selection: str = DEFAULT_SELECTION) -> tuple[np.ndarray, dict[str, Any]]:
    """``(V_l float64 (d,), record)`` by iterated mining (module docstring) from ``initial`` (d,); with
    ``topic``, the initial vector and every refit are projected out of the topic subspace; ``selection``
    names how a round picks its pairs (:data:`SELECTIONS`: ``mutual-margin`` or ``union-knn``).

    ``record`` holds ``rounds`` (one entry per round: pairs kept, mutual candidates, margin and cosine
    quantiles, relative change), ``converged``, ``pairs`` (of the last round), ``fallback`` (True when
    the last round had fewer than ``min_pairs`` pairs and ``initial`` is returned).
    """
    if int(max_rounds) < 1:
        raise MlirkitError(f"max_rounds must be at least 1, got {max_rounds}")
    if int(min_pairs) < 1:
        raise MlirkitError(f"min_pairs must be at least 1, got {min_pairs}")
    select = SELECTIONS.get(selection)
    tgt_raw = np.asarray(tgt_raw, dtype=np.float64)
    src_raw = np.asarray(src_raw, dtype=np.float64)
    c = src_raw.mean(axis=0) if center else np.zeros(src_raw.shape[1])  # (d,) removed before the cosine
    y = _normalize(src_raw - c)
    keep_out = (lambda u: u) if topic is None else topic.project_out
    v = keep_out(np.asarray(initial, dtype=np.float64).copy())
    rounds: list[dict[str, Any]] = []
    converged = False
    pairs: MinedPairs | None = None
    for t in range(int(max_rounds)):
        pairs = select(_normalize(tgt_raw - v - c), y, k=k, threshold=threshold, chunk_rows=chunk_rows)
        entry: dict[str, Any] = {"round": t + 1, "pairs": len(pairs), "mutual": pairs.mutual,
                                 "margin": _quantiles(pairs.margin), "cos": _quantiles(pairs.cos)}
        if len(pairs) < min_pairs:
            entry["change"] = None
            rounds.append(entry)
            break
        new = keep_out((tgt_raw[pairs.tgt] - src_raw[pairs.src]).mean(axis=0))  # (d,) float64
        change = float(np.linalg.norm(new - v) / max(np.linalg.norm(v), 1e-12))
        entry["change"] = round(change, 6)
        entry["norm"] = round(float(np.linalg.norm(new)), 6)
        rounds.append(entry)
        v = new
        if change <= tol:
            converged = True
            break
    fallback = pairs is None or len(pairs) < min_pairs
    if fallback:
        v = keep_out(np.asarray(initial, dtype=np.float64).copy())
    record = {"rounds": rounds, "converged": converged, "fallback": fallback,
              "pairs": 0 if pairs is None else len(pairs),
              "margin": None if pairs is None else _quantiles(pairs.margin)}
    return v, record


def fit_mined_shift(embs: np.ndarray, langs: Sequence[str | None], source_lang: str, *, encoder: dict[str, Any],
                    initial: ShiftTransform | None = None, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
                    min_pairs: int = DEFAULT_MIN_PAIRS, max_rounds: int = DEFAULT_MAX_ROUNDS, tol: float = DEFAULT_TOL,
                    center: bool = True, min_docs: int | None = None, only_langs: Sequence[str] | None = None,
                    origin: str | None = None, topic_rank: int | str | None = None,
                    topic_test_level: float | None = None, selection: str = DEFAULT_SELECTION,
                    chunk_rows: int = DEFAULT_CHUNK_ROWS, meta: dict[str, Any] | None = None) -> ShiftTransform:
    """SHIFT vectors from pairs mined in the documents ``embs`` (n, d, untransformed) with languages ``langs``.

    ``initial`` gives the round-0 vectors (default: the corpus-fitted ones,
    :func:`~mlirkit.transforms.corpus_fit.fit_corpus_shift`, with ``min_docs`` and ``only_langs``). The
    transform's metadata ``mining`` records the parameters and per language the rounds; ``provenance``
    says ``mined-pairs`` (or ``corpus`` for a language that fell back). ``topic_rank`` (a number or
    ``"auto"``) keeps every vector out of the documents' topic subspace
    (:mod:`mlirkit.transforms.topic_subspace`; recorded as ``topic_robust``); with ``topic_test_level``
    only when the skew test finds topic in the initial vectors. ``selection``: how a round picks its
    pairs (:data:`SELECTIONS`; ``threshold`` applies to ``mutual-margin`` only).
    """
    from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS, fit_corpus_shift

    if float(threshold) <= 0 or not np.isfinite(threshold):
        raise MlirkitError(f"the margin threshold must be a positive number, got {threshold}")
    if int(k) < 1:
        raise MlirkitError(f"k must be at least 1, got {k}")
    SELECTIONS.get(selection)  # an unknown name fails before any work
    if initial is None:
        initial = fit_corpus_shift(embs, langs, source_lang, encoder=encoder,
                                   min_docs=DEFAULT_MIN_DOCS if min_docs is None else min_docs,
                                   only_langs=only_langs, origin=origin)
    elif initial.source_lang != source_lang:
        raise MlirkitError(f"the initial vectors have source language {initial.source_lang!r}, not {source_lang!r}")
    lang_a = np.asarray([("" if is_unknown(l) else str(l)) for l in langs], dtype=object)
    if len(lang_a) != embs.shape[0]:
        raise MlirkitError(f"{len(lang_a)} languages for {embs.shape[0]} embeddings")
    src_rows = np.flatnonzero(lang_a == source_lang)
    where = f" in {origin}" if origin else ""
    if len(src_rows) == 0:
        raise MlirkitError(f"no {source_lang!r} (source-language) documents{where} to mine pairs against")
    src_raw = np.asarray(embs[src_rows], dtype=np.float64)
    check_finite("embeddings", src_raw)
    wanted = sorted(initial.params) if only_langs is None else sorted(set(only_langs) - {source_lang})
    missing = [l for l in wanted if l not in initial.params]
    if missing:
        raise MlirkitError(f"no initial vector for {', '.join(missing)}")
    topic = None
    skew: dict[str, Any] | None = None
    if topic_rank is None and topic_test_level is not None:
        raise MlirkitError("the topic skew test needs a topic rank")
    if topic_rank is not None:
        from mlirkit.transforms.topic_subspace import skew_test, topic_subspace

        topic = topic_subspace(embs, langs, topic_rank)
        if topic_test_level is not None:
            start = [initial.params[l] for l in (sorted(initial.params) if only_langs is None
                                                  else sorted(set(only_langs) - {source_lang})) if l in initial.params]
            skew = skew_test(topic, start, topic_test_level)
            logger.info("topic skew test on the initial vectors: %s", skew)
    loop_topic = topic if skew is None or skew["skewed"] else None
    params: dict[str, np.ndarray] = {}
    per_lang: dict[str, Any] = {}
    provenance: dict[str, Any] = {}
    for lang in wanted:
        rows = np.flatnonzero(lang_a == lang)
        if len(rows) == 0:
            raise MlirkitError(f"no {lang!r} documents{where} to mine pairs from")
        tgt_raw = np.asarray(embs[rows], dtype=np.float64)
        check_finite("embeddings", tgt_raw)
        v, record = mined_language_vector(tgt_raw, src_raw, initial.params[lang].astype(np.float64), k=k,
                                          threshold=threshold, min_pairs=min_pairs, max_rounds=max_rounds, tol=tol,
                                          center=center, chunk_rows=chunk_rows, topic=loop_topic,
                                          selection=selection)
        params[lang] = v.astype(np.float32)
        record["docs"] = int(len(rows))
        per_lang[lang] = record
        if record["fallback"]:
            logger.warning("%s: only %d mined pairs (< %d): keeping the initial (corpus-fitted) vector",
                           lang, record["pairs"], min_pairs)
            provenance[lang] = {"from": "corpus", "docs": int(len(rows)), "mined_pairs": record["pairs"]}
        else:
            provenance[lang] = {"from": "mined-pairs", "pairs": record["pairs"], "docs": int(len(rows)),
                                "rounds": len(record["rounds"])}
        logger.info("%s: %d mined pairs after %d rounds (converged: %s)", lang, record["pairs"],
                    len(record["rounds"]), record["converged"])
    chosen = ("mutual ratio-margin pairs" if selection == "mutual-margin" else
              "each document's k nearest documents on the other side, both directions")
    formula = (f"V_l = mean over {chosen} (x in l, y in source) of (x - y), "
               "re-mined after shifting by V_l until it stabilises"
               + ("; projected out of the topic subspace every round" if loop_topic is not None else ""))
    full_meta: dict[str, Any] = {
        "pairs": None,
        "source": origin,
        "encoded_as": "documents",
        "mining": {"formula": formula, "selection": selection, "k": int(k),
                   "threshold": float(threshold) if selection == "mutual-margin" else None,
                   "min_pairs": int(min_pairs),
                   "max_rounds": int(max_rounds), "tol": float(tol), "center": bool(center),
                   "source_docs": int(len(src_rows)),
                   "initial": initial.meta.get("corpus_fit", {}).get("formula") or initial.method,
                   "origin": origin, "languages": per_lang},
        "provenance": provenance,
        **(meta or {}),
    }
    if topic is not None:
        full_meta["topic_robust"] = {**topic.as_dict(), "applied": skew is None or skew["skewed"],
                                     "where": "initial vector and every refit",
                                     "energy_in_subspace_of_initial": {
                                         l: round(topic.energy_in(initial.params[l]), 6) for l in wanted},
                                     **({"skew_test": skew} if skew is not None else {})}
    return ShiftTransform(params, encoder=encoder, source_lang=source_lang, meta=full_meta)

