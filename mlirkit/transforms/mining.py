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
3. the pairs of the round: every ``x`` with each of its ``NN_k(x)`` and every ``y`` with each of its
   ``NN_k(y)`` (:func:`union_knn_pairs`; a pair found from both sides counted twice), the union of both
   directions' nearest-neighbour dictionaries, as in the bidirectional dictionary induction of Artetxe et
   al. (2018, below). Every document takes part, so on a corpus whose languages cover the same topics the
   mean stays close to the corpus mean. (The mutual ratio-margin pairs of Artetxe & Schwenk, 2019, were
   measured too and gave the noisier estimate: ``experiments/mining_variants.py``; ``select`` takes such a
   selection function.)
4. ``V^(t+1) = (1/|P|) sum_{(x, y) in P} (x - y)`` in float64 on the untransformed embeddings (SHIFT's
   formula over the mined pairs);

(with ``topic`` given, a :class:`~mlirkit.transforms.topic_subspace.TopicSubspace`: projected out of it,
``V^(t+1) = (I - U_r U_r^T) mean(x - y)``, and so is ``V^(0)``), until ``||V^(t+1) - V^(t)|| <= tol *
||V^(t)||`` or ``max_rounds`` rounds (the refinement loop of unsupervised cross-lingual embedding
mapping, Artetxe et al. 2018, "A robust self-learning method for fully unsupervised cross-lingual
mappings of word embeddings"). A language with fewer than ``min_pairs`` pairs in a round keeps its
corpus-fitted vector (recorded, warned): a mean over a handful of pairs is noisier than the corpus mean.
The defaults are the best setting measured (docs/results.md, "Language vectors without parallel text");
the ``mined`` statistics of :class:`~mlirkit.transforms.shift_transform.ShiftTransform` add the topic
projection where the corpus shows topic leaking into the vectors (:func:`mined_recipe`).
Definitions: docs/design.md, "Language vectors without parallel text".

Memory: one language's rows and the source-language rows (float32) and ``k`` neighbours per row; the
``n_l x n_src`` similarity matrix is never formed. The rounds, pair counts, margin distribution and
the change of the vector per round are stored in the transform's metadata (``mining`` and
``provenance``).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import is_unknown
from mlirkit.base.vectors import check_finite, l2_normalize
from mlirkit.transforms.defaults import DEFAULT_MIN_DOCS

if TYPE_CHECKING:
    from mlirkit.transforms.topic_subspace import TopicSubspace

__all__ = ["DEFAULT_CHUNK_ROWS", "DEFAULT_K", "DEFAULT_MAX_ROUNDS", "DEFAULT_MIN_PAIRS", "DEFAULT_TOL",
           "LANGUAGE_IN_TOPICS", "MINED", "MinedPairs", "Select", "knn_inner_product", "mined_language_vector",
           "mined_recipe", "mined_vectors", "mining_summary", "neighbourhoods", "union_knn_pairs"]

logger = logging.getLogger(__name__)

DEFAULT_K = 4
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


def neighbourhoods(tgt: np.ndarray, src: np.ndarray, k: int, chunk_rows: int) -> tuple[np.ndarray, ...]:
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


def union_knn_pairs(tgt: np.ndarray, src: np.ndarray, *, k: int = DEFAULT_K,
                    chunk_rows: int = DEFAULT_CHUNK_ROWS) -> MinedPairs:
    """Every row with its ``k`` nearest rows on the other side, both directions (module docstring,
    "union-knn"): ``{(x, y): y in NN_k(x)}`` followed by ``{(x, y): x in NN_k(y)}``, a pair found from
    both sides listed twice; ``mutual`` counts those. No margin filter; the
    pairs' ratio margins are returned for the record. ``k`` is capped at the smaller side's size.
    """
    empty = _check_sides(tgt, src)
    if empty is not None:
        return empty
    k = max(1, min(int(k), len(tgt), len(src)))
    s_t, i_t, m_t, s_s, i_s, m_s = neighbourhoods(tgt, src, k, chunk_rows)
    t_rows = np.concatenate([np.repeat(np.arange(len(tgt)), k), i_s.ravel()]).astype(np.intp)
    s_rows = np.concatenate([i_t.ravel(), np.repeat(np.arange(len(src)), k)]).astype(np.intp)
    forward = np.arange(len(tgt))[:, None] * len(src) + i_t  # (n_t, k) codes of the tgt -> src pairs
    backward = i_s * len(src) + np.arange(len(src))[:, None]  # (n_s, k) codes of the src -> tgt pairs
    both = int(np.intersect1d(forward.ravel(), backward.ravel()).size)
    return MinedPairs(t_rows, s_rows, np.concatenate([m_t.ravel(), m_s.ravel()]).astype(np.float64),
                      np.concatenate([s_t.ravel(), s_s.ravel()]).astype(np.float64), mutual=both)


def _quantiles(x: np.ndarray) -> dict[str, float] | None:
    if len(x) == 0:
        return None
    q = np.quantile(x, [0.0, 0.25, 0.5, 0.75, 1.0])
    return {name: round(float(v), 4) for name, v in zip(("min", "p25", "median", "p75", "max"), q)}


#: a pair selection: ``select(tgt, src, k=..., chunk_rows=...) -> MinedPairs``
Select = Callable[..., MinedPairs]


def mined_language_vector(tgt_raw: np.ndarray, src_raw: np.ndarray, initial: np.ndarray, *, k: int = DEFAULT_K,
                          min_pairs: int = DEFAULT_MIN_PAIRS, max_rounds: int = DEFAULT_MAX_ROUNDS,
                          tol: float = DEFAULT_TOL, center: bool = True, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                          topic: "TopicSubspace | None" = None,
                          select: Select = union_knn_pairs) -> tuple[np.ndarray, dict[str, Any]]:
    """``(V_l float64 (d,), record)`` by iterated mining (module docstring) from ``initial`` (d,); with
    ``topic``, the initial vector and every refit are projected out of the topic subspace; ``select`` picks
    a round's pairs (default :func:`union_knn_pairs`).

    ``record`` holds ``rounds`` (one entry per round: pairs kept, mutual candidates, margin and cosine
    quantiles, relative change), ``converged``, ``pairs`` (of the last round), ``fallback`` (True when
    the last round had fewer than ``min_pairs`` pairs and ``initial`` is returned).
    """
    if int(max_rounds) < 1:
        raise MlirkitError(f"max_rounds must be at least 1, got {max_rounds}")
    if int(min_pairs) < 1:
        raise MlirkitError(f"min_pairs must be at least 1, got {min_pairs}")
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
        pairs = select(_normalize(tgt_raw - v - c), y, k=k, chunk_rows=chunk_rows)
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


def mined_vectors(embs: np.ndarray, doc_langs: Sequence[str | None], source_lang: str, *,
                  initial: Mapping[str, np.ndarray] | None = None, k: int = DEFAULT_K,
                  min_pairs: int = DEFAULT_MIN_PAIRS, max_rounds: int = DEFAULT_MAX_ROUNDS, tol: float = DEFAULT_TOL,
                  center: bool = True, min_docs: int = DEFAULT_MIN_DOCS, langs: Sequence[str] | None = None,
                  topic_rank: int | str | None = None, topic_test_level: float | None = None,
                  select: Select = union_knn_pairs, selection: str = "union-knn",
                  chunk_rows: int = DEFAULT_CHUNK_ROWS) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(V_l float32 per language, metadata)``: SHIFT vectors from pairs mined in the documents ``embs`` (n, d,
    untransformed) with languages ``doc_langs``.

    ``initial`` gives the round-0 vectors (default: the corpus-fitted ones,
    :func:`~mlirkit.transforms.corpus_fit.corpus_vectors`, with ``min_docs`` and ``langs``). The
    metadata's ``mining`` records the parameters and per language the rounds; ``provenance`` says
    ``mined-pairs`` (or ``corpus`` for a language that fell back). ``topic_rank`` (a number or ``"auto"``)
    keeps every vector out of the documents' topic subspace (:mod:`mlirkit.transforms.topic_subspace`;
    recorded as ``topic_robust``); with ``topic_test_level`` only when the skew test finds topic in the
    initial vectors. ``select`` picks a round's pairs, ``selection`` names it in the record.
    """
    from mlirkit.transforms.corpus_fit import corpus_vectors, language_means

    if int(k) < 1:
        raise MlirkitError(f"k must be at least 1, got {k}")
    initial_formula = "mined initial vectors"
    if initial is None:
        means, counts = language_means(embs, doc_langs)
        initial, corpus_meta = corpus_vectors(means, counts, source_lang, min_docs=min_docs, langs=langs)
        initial_formula = corpus_meta["corpus_fit"]["formula"]
    lang_a = np.asarray([("" if is_unknown(l) else str(l)) for l in doc_langs], dtype=object)
    if len(lang_a) != embs.shape[0]:
        raise MlirkitError(f"{len(lang_a)} languages for {embs.shape[0]} embeddings")
    src_rows = np.flatnonzero(lang_a == source_lang)
    if len(src_rows) == 0:
        raise MlirkitError(f"no {source_lang!r} (source-language) documents to mine pairs against")
    src_raw = np.asarray(embs[src_rows], dtype=np.float64)
    check_finite("embeddings", src_raw)
    wanted = sorted(initial) if langs is None else sorted(set(langs) - {source_lang})
    missing = [l for l in wanted if l not in initial]
    if missing:
        raise MlirkitError(f"no initial vector for {', '.join(missing)}")
    topic = None
    skew: dict[str, Any] | None = None
    if topic_rank is None and topic_test_level is not None:
        raise MlirkitError("the topic skew test needs a topic rank")
    if topic_rank is not None:
        from mlirkit.transforms.topic_subspace import skew_test, topic_subspace

        topic = topic_subspace(embs, doc_langs, topic_rank)
        if topic_test_level is not None:
            start = [initial[l] for l in wanted if l in initial]
            skew = skew_test(topic, start, topic_test_level)
            logger.info("topic skew test on the initial vectors: %s", skew)
    loop_topic = topic if skew is None or skew["skewed"] else None
    params: dict[str, np.ndarray] = {}
    per_lang: dict[str, Any] = {}
    provenance: dict[str, Any] = {}
    for lang in wanted:
        rows = np.flatnonzero(lang_a == lang)
        if len(rows) == 0:
            raise MlirkitError(f"no {lang!r} documents to mine pairs from")
        tgt_raw = np.asarray(embs[rows], dtype=np.float64)
        check_finite("embeddings", tgt_raw)
        v, record = mined_language_vector(tgt_raw, src_raw, np.asarray(initial[lang]).astype(np.float64), k=k,
                                          min_pairs=min_pairs, max_rounds=max_rounds, tol=tol, center=center,
                                          chunk_rows=chunk_rows, topic=loop_topic, select=select)
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
    chosen = ("each document's k nearest documents on the other side, both directions" if selection == "union-knn"
              else f"the pairs of {selection}")
    formula = (f"V_l = mean over {chosen} (x in l, y in source) of (x - y), "
               "re-mined after shifting by V_l until it stabilises"
               + ("; projected out of the topic subspace every round" if loop_topic is not None else ""))
    meta: dict[str, Any] = {
        "pairs": None,
        "encoded_as": "documents",
        "mining": {"formula": formula, "selection": selection, "k": int(k), "min_pairs": int(min_pairs),
                   "max_rounds": int(max_rounds), "tol": float(tol), "center": bool(center),
                   "source_docs": int(len(src_rows)), "initial": initial_formula, "languages": per_lang},
        "provenance": provenance,
    }
    if topic is not None:
        meta["topic_robust"] = {**topic.as_dict(), "applied": skew is None or skew["skewed"],
                                "where": "initial vector and every refit",
                                "energy_in_subspace_of_initial": {
                                    l: round(topic.energy_in(initial[l]), 6) for l in wanted},
                                **({"skew_test": skew} if skew is not None else {})}
    return params, meta


def mining_summary(record: dict[str, Any]) -> dict[str, Any]:
    """The ``mining`` metadata of mined vectors without the rounds: per language its pairs, rounds, convergence,
    fallback and margins (what ``shift fit --from-index`` prints)."""
    return {**{k: v for k, v in record.items() if k != "languages"},
            "languages": {la: {"pairs": r["pairs"], "rounds": len(r["rounds"]), "converged": r["converged"],
                               "fallback": r["fallback"], "margin": r["margin"]}
                          for la, r in record["languages"].items()}}


#: the mined recipe's choices (the best label-free setting measured, docs/results.md)
MINED = {"selection": "union-knn", "k": DEFAULT_K, "center": True, "topic_rank": "auto", "topic_test_level": 0.01}
#: the topic-matched (mined, unprojected) vectors hold more than this many times a random direction's share of
#: their energy in the topic subspace: the language offset lies in the corpus's high-variance directions, and
#: projecting them out would remove language (measured: at most 1.5x with e5-small, at least 2.9x with USEM on the
#: three DDTP beds, experiments/topic_criterion.py)
LANGUAGE_IN_TOPICS = 2.0


def mined_recipe(embs: np.ndarray, doc_langs: Sequence[str | None], source_lang: str, *, min_docs: int = DEFAULT_MIN_DOCS,
                 langs: Sequence[str] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The ``mined`` statistics of :class:`~mlirkit.transforms.shift_transform.ShiftTransform`: union-kNN pairs
    (``k = 4``, both directions), centred, re-mined until the vector stabilises; kept out of the documents' topic
    subspace (rank at the Marchenko-Pastur noise edge, :mod:`~mlirkit.transforms.topic_subspace`) when topic leaks
    into the corpus vectors and the language itself does not live in that subspace:

    1. the skew test (level 0.01) on the corpus vectors ``mu_l - mu_src`` finds more of their energy in the topic
       subspace than a random direction would hold (otherwise: no projection, the vectors are mined as they are);
    2. the vectors mined without the projection (topic-matched pairs: mostly language) hold less than
       :data:`LANGUAGE_IN_TOPICS` times a random direction's share ``r / d`` (otherwise the language offset lies in
       the high-variance directions and the projection would remove language: those vectors are kept).

    Every choice and both shares are recorded under ``recipe`` and ``topic_robust``."""
    from mlirkit.transforms.corpus_fit import corpus_vectors, language_means
    from mlirkit.transforms.topic_subspace import skew_test, topic_subspace

    options = {"k": MINED["k"], "center": MINED["center"], "min_docs": min_docs, "langs": langs}
    means, counts = language_means(embs, doc_langs)
    corpus, _ = corpus_vectors(means, counts, source_lang, min_docs=min_docs, langs=langs)
    topic = topic_subspace(embs, doc_langs, MINED["topic_rank"])
    skewed = skew_test(topic, list(corpus.values()), MINED["topic_test_level"])["skewed"]
    recipe = {**MINED, "language_in_topics": LANGUAGE_IN_TOPICS}
    if skewed:
        plain, plain_meta = mined_vectors(embs, doc_langs, source_lang, **options)
        null = topic.rank / topic.basis.shape[0]
        share = float(np.mean([topic.energy_in(v) for v in plain.values()]))
        if share >= LANGUAGE_IN_TOPICS * null:
            plain_meta["topic_robust"] = {**topic.as_dict(), "applied": False,
                                          "mined_share": round(share, 6), "random_share": round(null, 6),
                                          "reason": "the topic-matched vectors lie in the topic subspace themselves"}
            plain_meta["recipe"] = {**recipe, "topic_projection": (
                f"off: topic leaks into the corpus vectors, but the mined vectors hold {share / null:.1f}x a random "
                f"direction's share of the topic subspace (>= {LANGUAGE_IN_TOPICS:g}x: language lies there)")}
            return plain, plain_meta
    params, meta = mined_vectors(embs, doc_langs, source_lang, topic_rank=MINED["topic_rank"],
                                 topic_test_level=MINED["topic_test_level"], **options)
    if skewed:
        meta["topic_robust"].update(mined_share=round(share, 6), random_share=round(null, 6))
    meta["recipe"] = {**recipe, "topic_projection": "on: topic leaks into the corpus vectors, and the mined vectors "
                                                    "lie outside the topic subspace" if skewed else
                      "off: the skew test finds no topic in the corpus vectors"}
    return params, meta
