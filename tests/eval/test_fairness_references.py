"""PEER@k and MRC@k against their reference implementations, on the bundled XQuAD-R collection.

The runs are those of a real, language-biased retriever that needs no model: TF-IDF over character 2-3
grams (scikit-learn) of the 1,920 pooled paragraphs of ``mlirkit/xquad-r/multi``, for the queries of 150
of its questions in all 8 languages (a tiny per-document offset breaks exact score ties, so that every
implementation sees the same ranking). References:

- the authors' PEER, PyPI ``peer-measure`` 0.0.1 through ``ir_measures`` (both pinned in setup.cfg);
- the SHIFT authors' follow-up, MIMO (github.com/yjoonjang/MIMO, ``src/mimo/evaluation/metrics.py`` at
  commit b36c40f5): ``compute_peer`` and ``compute_mrc``, transcribed below as independent references
  (``_parse_*`` included; MIMO reads a document's language from ids ``doc_{lang}_{n}``, so the documents
  are handed to it under such ids).
"""
from __future__ import annotations

import hashlib
from collections import defaultdict

import numpy as np
import pytest

from mlirkit.eval import evaluate
from mlirkit.eval.mrc import mrc_from_scores, mrc_scores
from mlirkit.eval.peer import peer_at_k
from mlirkit.eval.ranking import Judged, Ranking

K_PEER, K_MRC = 20, 10


# ------------------------------------------------------------------ MIMO, transcribed (reference only)
def _parse_query_lang(qid):
    return qid.split("_")[0]


def _parse_query_hash(qid):
    parts = qid.split("_")
    if len(parts) > 2 and parts[1] == "q":
        return "_".join(parts[2:])
    return "_".join(parts[1:])


def _parse_doc_lang(doc_id):
    parts = doc_id.split("_")
    return parts[1] if len(parts) >= 3 else "unknown"


def mimo_compute_mrc(sim_matrix, query_ids, corpus_ids, k=10):
    from scipy.stats import spearmanr

    query_groups = defaultdict(dict)
    for idx, qid in enumerate(query_ids):
        query_groups[_parse_query_hash(qid)][_parse_query_lang(qid)] = idx
    per_lang_scores = defaultdict(list)
    for hash_id, lang_to_idx in query_groups.items():
        if len(lang_to_idx) < 2:
            continue
        langs = sorted(lang_to_idx.keys())
        topk = {lang: set(np.argsort(-sim_matrix[lang_to_idx[lang]])[:k].tolist()) for lang in langs}
        for i, lang_a in enumerate(langs):
            pair_corrs = []
            for j, lang_b in enumerate(langs):
                if i == j:
                    continue
                union_idx = sorted(topk[lang_a] | topk[lang_b])
                if len(union_idx) < 2:
                    continue
                corr, _ = spearmanr(sim_matrix[lang_to_idx[lang_a], union_idx], sim_matrix[lang_to_idx[lang_b], union_idx])
                if not np.isnan(corr):
                    pair_corrs.append(corr)
            if pair_corrs:
                per_lang_scores[lang_a].append(np.mean(pair_corrs))
    results, all_scores = {}, []
    for lang in sorted(per_lang_scores.keys()):
        score = float(np.mean(per_lang_scores[lang]) * 100)
        results[f"MRC@{k}_{lang}"] = score
        all_scores.append(score)
    if all_scores:
        results[f"MRC@{k}_avg"] = float(np.mean(all_scores))
    return results


def mimo_compute_peer(sim_matrix, query_ids, corpus_ids, relevant_docs, k=100):
    from scipy.stats import kruskal

    did_to_idx = {did: i for i, did in enumerate(corpus_ids)}
    per_qlang_pvalues, all_pvalues, pooled_doc_ranks = defaultdict(list), [], defaultdict(list)
    for q_idx, qid in enumerate(query_ids):
        if qid not in relevant_docs:
            continue
        q_lang = _parse_query_lang(qid)
        ranking = np.argsort(np.argsort(-sim_matrix[q_idx])) + 1
        doc_lang_ranks = defaultdict(list)
        for rel_did in relevant_docs[qid]:
            if rel_did not in did_to_idx:
                continue
            rank = min(int(ranking[did_to_idx[rel_did]]), k + 1)
            doc_lang_ranks[_parse_doc_lang(rel_did)].append(rank)
            pooled_doc_ranks[_parse_doc_lang(rel_did)].append(rank)
        groups = [ranks for ranks in doc_lang_ranks.values() if len(ranks) > 0]
        if len(groups) < 2:
            continue
        all_ranks = [r for g in groups for r in g]
        if len(set(all_ranks)) <= 1:
            p_value = 1.0
        else:
            try:
                _, p_value = kruskal(*groups)
            except ValueError:
                p_value = 1.0
        all_pvalues.append(p_value)
        per_qlang_pvalues[q_lang].append(p_value)
    results = {}
    if all_pvalues:
        results[f"PEER@{k}"] = float(np.mean(all_pvalues))
    for q_lang in sorted(per_qlang_pvalues.keys()):
        results[f"PEER@{k}_{q_lang}"] = float(np.mean(per_qlang_pvalues[q_lang]))
    for dl in sorted(pooled_doc_ranks.keys()):
        results[f"mean_rank@{k}_{dl}"] = float(np.mean(pooled_doc_ranks[dl]))
    return results


# ------------------------------------------------------------------------------------------ the bed
@pytest.fixture(scope="module")
def bed():
    from sklearn.feature_extraction.text import TfidfVectorizer

    import mlirkit.datasets  # noqa: F401
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    dataset = "mlirkit/xquad-r/multi"
    docs = list(read_corpus(dataset))
    queries = read_topics(dataset)
    keep = sorted({q.group_id for q in queries}, key=lambda g: hashlib.sha1(g.encode()).hexdigest())[:150]
    queries = [q for q in queries if q.group_id in set(keep)]
    qrels = read_qrels(dataset)
    qrels = {q.query_id: qrels[q.query_id] for q in queries}
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3), min_df=2, sublinear_tf=True)
    d = vectorizer.fit_transform([x.text for x in docs])
    scores = (vectorizer.transform([q.text for q in queries]) @ d.T).toarray()
    scores += np.arange(len(docs)) * 1e-12  # no exact ties
    doc_ids = [x.doc_id for x in docs]

    def run(depth: int) -> dict[str, dict[str, float]]:
        top = np.argsort(-scores, axis=1)[:, :depth]
        return {q.query_id: {doc_ids[j]: float(scores[i, j]) for j in top[i]} for i, q in enumerate(queries)}

    return {"docs": docs, "doc_ids": doc_ids, "doc_langs": {x.doc_id: x.lang for x in docs}, "queries": queries,
            "qrels": qrels, "scores": scores, "run": run(K_PEER), "run_for": run,
            "groups": {q.query_id: q.group_id for q in queries}, "query_langs": {q.query_id: q.lang for q in queries}}


def test_the_bed_is_language_biased(bed):
    res = evaluate(bed["qrels"], {"tfidf": bed["run"]}, ["tlr@20", "samelang@20"], doc_langs=bed["doc_langs"],
                   query_langs=bed["query_langs"], significance=None)
    assert res.value("tfidf", "samelang@20") > 0.5 > res.value("tfidf", "samelang@20 (expected)")
    assert 0.0 < res.value("tfidf", "tlr@20") < 0.5


# --------------------------------------------------------------------------------------- PEER, package
def _package_peer(qrels, run, k, doc_langs, *, zero_level=True):
    import ir_measures
    import peer_measure  # noqa: F401  (registers PEER with ir_measures)
    from peer_measure import PEER

    measure = PEER(weights={1: 1.0}, lang_mapping=dict(doc_langs)) @ k
    judged = [ir_measures.Qrel(q, d, r) for q, rels in qrels.items() for d, r in rels.items()]
    if zero_level:  # a 0 level the package files unjudged retrieved documents under (a document of no run)
        judged += [ir_measures.Qrel(q, "(not a document)", 0) for q in qrels]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, hits in run.items() for d, s in hits.items()]
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], judged, scored)}


def _package_nan_expected(qrels, run, k) -> set[str]:
    """The queries where the package's value is NaN (0 / 0): every relevant document but one outside the top
    k and that one at position ``N + (U + 1) / 2``, exactly the package's tail value (one relevant document
    per language), so that every value of its test is equal."""
    out = set()
    for q, rels in qrels.items():
        relevant = [d for d, r in rels.items() if r > 0]
        top = sorted(run.get(q, {}).items(), key=lambda x: (-x[1], x[0]))[:k]
        positions = [i + 1 for i, (d, _) in enumerate(top) if d in set(relevant)]
        n, u = len(relevant), len(relevant) - len(positions)
        if len(positions) == 1 and positions[0] == n + (u + 1) / 2:
            out.add(q)
    return out


def _assert_equal_to_the_package(ours, theirs, qrels, run, k) -> int:
    """Per query to 1e-9 (NaN-strict: a NaN of the package only where :func:`_package_nan_expected` says, where
    the definition gives a number); returns the number of those queries."""
    nan = {q for q, v in theirs.items() if np.isnan(v)}
    assert nan == _package_nan_expected(qrels, run, k)
    assert not any(np.isnan(ours.per_query[q]) for q in theirs)
    qids = sorted(set(theirs) - nan)
    np.testing.assert_allclose([ours.per_query[q] for q in qids], [theirs[q] for q in qids], rtol=0, atol=1e-9)
    return len(nan)


def test_peer_equals_the_package_per_query_on_xquad_r(bed):
    ours = peer_at_k(bed["qrels"], bed["run"], K_PEER, bed["doc_langs"])
    theirs = _package_peer(bed["qrels"], bed["run"], K_PEER, bed["doc_langs"])
    assert ours.counted == len(theirs) == len(bed["queries"])
    _assert_equal_to_the_package(ours, theirs, bed["qrels"], bed["run"], K_PEER)
    # one relevant paragraph per language: the value is chi2_7.sf(7) or 1, whatever else the ranking does
    assert set(np.round(list(ours.per_query.values()), 9)) <= {round(0.42887985755305486, 9), 1.0}


def test_where_the_package_departs_from_the_paper():
    """Two relevant documents in language a (top 3: a1, x, a2) and two in b outside it."""
    from scipy.stats import chi2

    langs = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "x": "a"}
    qrels = {"q": {"a1": 1, "a2": 1, "b1": 1, "b2": 1}}
    run = {"q": {"a1": 5.0, "x": 4.0, "a2": 3.0}}
    ours = peer_at_k(qrels, run, 3, langs).mean
    package = _package_peer(qrels, run, 3, langs)["q"]
    assert ours == pytest.approx(0.10247, abs=1e-5)
    # the package: raw positions {1, 3} against the unretrieved at N + (U + 1) / 2 = 4 + 1.5, no rank transform
    values = np.array([1.0, 3.0, 5.5, 5.5])
    ssg = 2 * (values[:2].mean() - values.mean()) ** 2 + 2 * (values[2:].mean() - values.mean()) ** 2
    documented = chi2.sf(3 * ssg / ((values - values.mean()) ** 2).sum(), 1)
    assert package == pytest.approx(documented, abs=1e-12) and abs(package - ours) > 0.005
    # qrels without a 0 level: the package stops at the first unjudged retrieved document
    with pytest.raises(KeyError):
        _package_peer(qrels, run, 3, langs, zero_level=False)


def _h_raw(*samples):
    """The package's H: the Kruskal-Wallis formula on the raw values, no rank transformation."""
    from scipy.stats import chi2

    values = np.concatenate(samples)
    ssg = sum(len(s) * (np.mean(s) - values.mean()) ** 2 for s in samples)
    return chi2.sf((len(values) - 1) * ssg / ((values - values.mean()) ** 2).sum(), len(samples) - 1)


def test_the_package_departs_with_every_relevant_document_retrieved_too():
    """No tail at all: a {1, 3} and b {2, 6} in the top 6. The definition is the Kruskal-Wallis test of these
    ranks (scipy.stats.kruskal); the package runs its formula on the raw positions, which differs as soon as
    the relevant documents' positions are not 1 ... N."""
    from scipy.stats import kruskal

    langs = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "x": "a", "y": "b"}
    qrels = {"q": {"a1": 1, "a2": 1, "b1": 1, "b2": 1}}
    run = {"q": {"a1": 6.0, "b1": 5.0, "a2": 4.0, "x": 3.0, "y": 2.0, "b2": 1.0}}
    ours = peer_at_k(qrels, run, 6, langs).mean
    package = _package_peer(qrels, run, 6, langs)["q"]
    assert ours == pytest.approx(kruskal([1, 3], [2, 6]).pvalue, abs=1e-12)
    assert package == pytest.approx(_h_raw(np.array([1.0, 3.0]), np.array([2.0, 6.0])), abs=1e-12)
    assert abs(ours - package) > 0.05
    # positions 1 ... N (nothing else in between): both the same
    run = {"q": {"a1": 6.0, "b1": 5.0, "a2": 4.0, "b2": 3.0}}
    assert peer_at_k(qrels, run, 4, langs).mean == pytest.approx(_package_peer(qrels, run, 4, langs)["q"], abs=1e-12)


def test_the_package_level_zero_holds_only_the_top_k():
    """Weights on level 0: mlirkit's level 0 holds the judged non-relevant documents (outside the top k at
    k + 1) and the unjudged ones of the top k; the package's only the documents of the top k without a positive
    judgement (its unretrieved tail is added for levels > 0 only)."""
    import ir_measures
    import peer_measure  # noqa: F401
    from peer_measure import PEER
    from scipy.stats import chi2, kruskal

    langs = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "x": "a"}
    qrels = {"q": {"a1": 1, "b1": 1, "a2": 0, "b2": 0}}
    run = {"q": {"a1": 6.0, "b1": 5.0, "x": 3.0, "a2": 2.0}}  # top 3: a1, b1, x (unjudged)
    ours = peer_at_k(qrels, run, 3, langs, {0: 0.5, 1: 0.5}).mean
    measure = PEER(weights={0: 0.5, 1: 0.5}, lang_mapping=langs) @ 3
    package = next(ir_measures.iter_calc([measure], [ir_measures.Qrel("q", d, r) for d, r in qrels["q"].items()],
                                         [ir_measures.ScoredDoc("q", d, s) for d, s in run["q"].items()])).value
    level1 = chi2.sf(1, 1)  # a {1}, b {2}
    assert ours == pytest.approx(0.5 * level1 + 0.5 * kruskal([3, 4], [4]).pvalue, abs=1e-12)  # a: x, a2; b: b2
    assert package == pytest.approx(0.5 * level1 + 0.5 * 1.0, abs=1e-12)  # level 0: x alone, one language


def test_the_package_is_nan_where_its_tail_equals_the_one_retrieved_position():
    """One relevant document per language, N = 4: d1 at position 6 and the other three outside the top k. The
    package puts them at N + (U + 1) / 2 = 6 too: every value equal, H = 0 / 0, NaN. The definition: d1 at 6,
    the others at k + 1, PEER = chi2_3.sf(3)."""
    from scipy.stats import chi2

    langs = {"a1": "a", "b1": "b", "c1": "c", "d1": "d", **{f"x{i}": "a" for i in range(5)}}
    qrels = {"q": {"a1": 1, "b1": 1, "c1": 1, "d1": 1}}
    run = {"q": {**{f"x{i}": 10.0 - i for i in range(5)}, "d1": 1.0}}
    assert np.isnan(_package_peer(qrels, run, 10, langs)["q"]) and _package_nan_expected(qrels, run, 10) == {"q"}
    assert peer_at_k(qrels, run, 10, langs).mean == pytest.approx(chi2.sf(3, 3), abs=1e-12)


def test_the_package_adds_0_for_a_weighted_level_the_query_lacks():
    import ir_measures
    import peer_measure  # noqa: F401
    from peer_measure import PEER
    from scipy.stats import chi2

    langs = {"a1": "a", "b1": "b"}
    qrels = {"q": {"a1": 1, "b1": 1}}
    run = {"q": {"a1": 2.0, "b1": 1.0}}
    measure = PEER(weights={1: 0.5, 2: 0.5}, lang_mapping=langs) @ 2
    package = next(ir_measures.iter_calc([measure], [ir_measures.Qrel("q", d, r) for d, r in qrels["q"].items()],
                                         [ir_measures.ScoredDoc("q", d, s) for d, s in run["q"].items()])).value
    assert package == pytest.approx(0.5 * chi2.sf(1, 1), abs=1e-12)
    assert peer_at_k(qrels, run, 2, langs, {1: 0.5, 2: 0.5}).mean == pytest.approx(0.5 * chi2.sf(1, 1) + 0.5,
                                                                                   abs=1e-12)


# ----------------------------------------------------------------------------------- PEER, MIMO
def test_peer_mimo_equals_compute_peer(bed):
    mimo_ids = [f"doc_{d.lang}_{i}" for i, d in enumerate(bed["docs"])]  # the ids MIMO reads languages from
    rename = dict(zip(bed["doc_ids"], mimo_ids))
    qids = [q.query_id for q in bed["queries"]]
    relevant = {q: {rename[d] for d, r in bed["qrels"][q].items() if r > 0} for q in qids}
    theirs = mimo_compute_peer(bed["scores"], qids, mimo_ids, relevant, k=K_PEER)
    res = evaluate(bed["qrels"], {"tfidf": bed["run"]}, [f"peer-mimo@{K_PEER}"], doc_langs=bed["doc_langs"],
                   query_langs=bed["query_langs"], significance=None)
    assert res.value("tfidf", f"peer-mimo@{K_PEER}", micro=True) == pytest.approx(theirs[f"PEER@{K_PEER}"], abs=1e-9)
    for lang in sorted(set(bed["query_langs"].values())):
        ours = res.per_language[f"query language {lang}"].loc["tfidf", f"peer-mimo@{K_PEER}"]
        assert ours == pytest.approx(theirs[f"PEER@{K_PEER}_{lang}"], abs=1e-9)
    ranks = res.per_language[f"mean rank of the relevant documents by document language (top {K_PEER}; below it: "
                             f"{K_PEER + 1})"]
    for lang in ranks.columns:
        assert ranks.loc["tfidf", lang] == pytest.approx(theirs[f"mean_rank@{K_PEER}_{lang}"], abs=1e-9)


# ------------------------------------------------------------------------------------------- MRC
def test_mrc_equals_compute_mrc(bed):
    qids = [q.query_id for q in bed["queries"]]
    langs = [q.lang for q in bed["queries"]]
    theirs = mimo_compute_mrc(bed["scores"], qids, bed["doc_ids"], k=K_MRC)
    ours = mrc_from_scores(lambda rows: bed["scores"][rows], qids, langs, bed["groups"], bed["doc_ids"], K_MRC,
                           block=200)
    assert len(ours) == len(qids)
    for lang in sorted(set(langs)):
        mean = np.mean([v for q, v in ours.items() if bed["query_langs"][q] == lang])
        assert mean == pytest.approx(theirs[f"MRC@{K_MRC}_{lang}"], abs=1e-9)
    res = evaluate(bed["qrels"], {"tfidf": bed["run"]}, [f"mrc@{K_MRC}"], query_langs=bed["query_langs"],
                   query_groups=bed["groups"], significance=None, precomputed={f"mrc@{K_MRC}": {"tfidf": ours}})
    assert res.value("tfidf", f"mrc@{K_MRC}") == pytest.approx(theirs[f"MRC@{K_MRC}_avg"], abs=1e-9)


def test_mrc_from_runs_deep_enough_and_refused_when_not(bed):
    from mlirkit.base.errors import MlirkitError

    subset = [q for q in bed["queries"] if q.group_id in sorted(bed["groups"].values())[:80:8]]
    qids = [q.query_id for q in subset]
    qrels = {q: bed["qrels"][q] for q in qids}
    rows = np.array([i for i, q in enumerate(bed["queries"]) if q.query_id in set(qids)])
    full = bed["run_for"](len(bed["doc_ids"]))
    full = {q: full[q] for q in qids}
    judged = Judged.from_qrels(qrels)
    judged.set_languages(bed["doc_langs"], [bed["query_langs"][q] for q in judged.qids])
    from_runs = mrc_scores(Ranking(judged, full), K_MRC, bed["groups"], [bed["query_langs"][q] for q in judged.qids])
    from_scores = mrc_from_scores(lambda r: bed["scores"][rows][r], qids, [q.lang for q in subset], bed["groups"],
                                  bed["doc_ids"], K_MRC)
    np.testing.assert_allclose(from_runs, [from_scores[q] for q in judged.qids], atol=1e-12)
    with pytest.raises(MlirkitError, match=r"mrc@10: run 'tfidf' has no score of query .* holds 20 hits per query"):
        evaluate(qrels, {"tfidf": {q: bed["run"][q] for q in qids}}, ["mrc@10"], query_langs=bed["query_langs"],
                 query_groups=bed["groups"], significance=None)


# ------------------------------------------------------------------------- the main job's own runs
@pytest.mark.slow
def test_on_the_main_jobs_xquad_r_runs():
    """PEER@20 of every XQuAD-R run the main job wrote against the package, per query; peer-mimo@20 of its
    base run against ``compute_peer`` and the main job's MRC@10 of base against ``compute_mrc`` on the same
    embeddings. ``MLIRKIT_MAIN_JOB`` names the output
    folder of ``python -m mlirkit.benchmark --parts xquad-r ...`` (its embedding cache, ``$MLIRKIT_CACHE``,
    still holding the part's vectors); skipped without it."""
    import json
    import os
    from pathlib import Path

    out = os.environ.get("MLIRKIT_MAIN_JOB")
    if not out:
        pytest.skip("MLIRKIT_MAIN_JOB (a main job's output folder) is not set")
    import mlirkit.datasets  # noqa: F401
    from mlirkit.base.cache import cache_dir
    from mlirkit.benchmark.cache import EmbeddingCache
    from mlirkit.benchmark.config import BenchmarkConfig
    from mlirkit.benchmark.retrieval import Condition, score_rows
    from mlirkit.benchmark.steps import cache_variant
    from mlirkit.benchmark.xquad import load_collection
    from mlirkit.encoders import load_encoder
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.trec import read_run

    out = Path(out)
    report = json.loads((out / "report.json").read_text())
    qrels = read_qrels("mlirkit/xquad-r/multi")
    coll = load_collection("mlirkit/xquad-r/multi")
    doc_langs = dict(zip(coll.doc_ids, coll.doc_langs))
    config = BenchmarkConfig()
    cache = EmbeddingCache(cache_dir("benchmark", "embeddings"), show_progress=False)
    for name, entry in report["xquad"]["encoders"].items():
        files = sorted((out / "runs" / name.replace("/", "_") / "xquad-r").glob("*.trec.gz"))
        assert files
        for path in files:
            run = read_run(path)
            ours = peer_at_k(qrels, run, K_PEER, doc_langs)
            theirs = _package_peer(qrels, run, K_PEER, doc_langs)
            assert len(theirs) == ours.counted == 9520
            assert _assert_equal_to_the_package(ours, theirs, qrels, run, K_PEER) < 20, path  # NaN: 4-7 per run
        queries = coll.topics.queries
        encoder = load_encoder(name, **config.xquad_options_for(name))
        variant = cache_variant(config.with_(languages=None))
        docs = cache.embed(encoder, name, f"xquad-r-corpus{variant}", "doc", [d.text for d in coll.docs],
                           coll.doc_langs, reuse=True)
        qe = cache.embed(encoder, name, f"xquad-r-queries{variant}", "query", [q.text for q in queries],
                         [q.lang for q in queries], reuse=True)
        # the scores as the main job's base scores them (normalised vectors, float32)
        q_ids, q_langs = [q.query_id for q in queries], [q.lang for q in queries]
        sim = score_rows(Condition("base"), docs, coll.doc_langs, qe, q_langs)(np.arange(len(queries)))
        ours = mrc_from_scores(lambda rows: sim[rows], q_ids, q_langs, coll.topics.query_groups, coll.doc_ids, K_MRC)
        assert entry["result"]["base"][f"mrc@{K_MRC}"] == pytest.approx(
            np.mean([np.mean([v for q, v in ours.items() if q.startswith(f"{la}_")]) for la in sorted(set(q_langs))]),
            abs=1e-9)
        # compute_peer on the same scores against peer-mimo@20 of the base run the job wrote (MIMO reads a
        # document's language from ids doc_{lang}_{n})
        mimo_ids = [f"doc_{la}_{i}" for i, la in enumerate(coll.doc_langs)]
        rename = dict(zip(coll.doc_ids, mimo_ids))
        relevant = {q: {rename[d] for d, r in qrels[q].items() if r > 0} for q in q_ids}
        theirs = mimo_compute_peer(sim, q_ids, mimo_ids, relevant, k=K_PEER)
        base = read_run(out / "runs" / name.replace("/", "_") / "xquad-r" / "base.trec.gz")
        res = evaluate(qrels, {"base": base}, [f"peer-mimo@{K_PEER}"], doc_langs=doc_langs,
                       query_langs=dict(zip(q_ids, q_langs)), significance=None)
        assert res.value("base", f"peer-mimo@{K_PEER}", micro=True) == pytest.approx(theirs[f"PEER@{K_PEER}"], abs=1e-9)
        # compute_mrc question by question (its values per language are then per query), leaving out the
        # questions with a score tie at the cut-off, which compute_mrc breaks at random (mlirkit: by document id)
        kth = -np.sort(-sim, axis=1)[:, K_MRC - 1:K_MRC + 1]
        by_group: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            by_group[q.group_id].append(i)
        tied = 0
        for rows in by_group.values():
            if (kth[rows, 0] == kth[rows, 1]).any():
                tied += 1
                continue
            theirs = mimo_compute_mrc(sim[rows], [q_ids[i] for i in rows], coll.doc_ids, k=K_MRC)
            for i in rows:
                assert ours[q_ids[i]] == pytest.approx(theirs[f"MRC@{K_MRC}_{q_langs[i]}"], abs=1e-9)
        assert tied <= 5, tied
