"""One SHIFT index, any query language: the query-time shift equals per-language re-based indexes."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.vectors import l2_normalize
from mlirkit.io.records import Query
from mlirkit.search.query_shift import QueryTimeShift
from mlirkit.search.searcher import search_index
from mlirkit.transforms.shift_transform import ShiftTransform, derive_source

DOC_LANGS = ["en", "de", "fr", "ja", "nl", "dt", "und", "uk"]  # uk: no vector; und: unknown
QUERY_LANGS = ["en", "de", "fr", "ja", "dt", "nl", "und", "uk", None]


def rebased_reference(t: ShiftTransform, embs, doc_langs, queries, query_langs, alpha, metric, k):
    """Each query searched in the index built for its own source language (pivot when it has no vector)."""
    import faiss

    from mlirkit.base.langs import canonical

    out = {}
    for i, (q, lang) in enumerate(zip(queries, query_langs)):
        s = canonical(lang)
        ts = t if s not in t.params_ else derive_source(t, s)
        x = ts.transform(embs, doc_langs, "doc", alpha)
        if metric == "cosine":
            x = l2_normalize(x)
        index = faiss.IndexFlatIP(x.shape[1])
        index.add(np.ascontiguousarray(x, dtype=np.float32))
        docids = [f"d{j}" for j in range(len(embs))]
        out[i] = (search_index(index, docids, q[None, :], k)[0], x @ q)
    return out


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    dim, n = 24, 400
    vecs = {la: rng.normal(scale=0.4, size=dim) for la in ("de", "fr", "ja", "dt")}
    t = ShiftTransform.from_tensors(vecs, encoder={"model": "toy"}, source_lang="en")
    langs = [DOC_LANGS[i % len(DOC_LANGS)] for i in range(n)]
    embs = rng.normal(size=(n, dim)).astype(np.float32)
    queries = l2_normalize(rng.normal(size=(45, dim))).astype(np.float32)
    qlangs = [QUERY_LANGS[i % len(QUERY_LANGS)] for i in range(len(queries))]
    return t, embs, langs, queries, qlangs


@pytest.mark.parametrize("metric", ["cosine", "ip"])
@pytest.mark.parametrize("alpha", [1.0, 0.6, {"*": 0.6, "ja": 1.0, "en": 0.3}])
def test_equals_per_language_rebased_indexes(data, metric, alpha):
    t, embs, langs, queries, qlangs = data
    k = 30
    qs = QueryTimeShift(embs, langs, t, metric=metric, docids=[f"d{j}" for j in range(len(embs))], missing="keep")
    got = qs.search(queries, qlangs, k, alpha)
    scores = qs.scores(queries, qlangs, alpha)
    ref = rebased_reference(t, embs, langs, queries, qlangs, alpha, metric, k)
    for i in range(len(queries)):
        want_hits, want_scores = ref[i]
        assert [h.doc_id for h in want_hits] == [d for d, _ in got[i]]
        np.testing.assert_allclose([s for _, s in got[i]], [h.score for h in want_hits], atol=1e-5)
        np.testing.assert_allclose(scores[i], want_scores, atol=1e-5)
    assert qs.counts["pivot_fallback:uk"] > 0 and qs.counts["pivot_fallback:und"] > 0


def filled(t, embs, langs):
    """The fit step for the languages ``t`` lacks (uk), before the query-time shift (which never fits)."""
    from mlirkit.transforms.hybrid import fill_missing_from_corpus

    return fill_missing_from_corpus(t, embs, langs)


def test_chunked_preparation_is_identical(data):
    t, embs, langs, queries, qlangs = data
    t = filled(t, embs, langs)
    whole = QueryTimeShift(embs, langs, t).scores(queries, qlangs, 0.8)
    chunked = QueryTimeShift(embs, langs, t)
    chunked.chunk_rows = 37
    np.testing.assert_array_equal(chunked.scores(queries, qlangs, 0.8), whole)


def test_candidates_rescored_exactly(data):
    t, embs, langs, queries, qlangs = data
    qs = QueryTimeShift(embs, langs, filled(t, embs, langs), docids=[f"d{j}" for j in range(len(embs))])
    full = qs.search(queries, qlangs, 10, 0.8)
    everything = np.tile(np.arange(len(embs)), (len(queries), 1))
    rescored = qs.search(queries, qlangs, 10, 0.8, candidates=everything)
    assert [[d for d, _ in h] for h in rescored] == [[d for d, _ in h] for h in full]
    np.testing.assert_allclose([[s for _, s in h] for h in rescored], [[s for _, s in h] for h in full], atol=1e-6)
    few = np.full((len(queries), 50), -1)
    few[:, :20] = np.arange(20)
    for hits in qs.search(queries, qlangs, 10, 0.8, candidates=few):
        assert len(hits) == 10 and all(int(d[1:]) < 20 for d, _ in hits)


def test_inner_product_pivot_ranks_as_rebased_without_unknown_docs(data):
    """The issue's observation: with ip and every document of a language with a vector, the pivot index
    ranks exactly as the s-source index (the extra term a q.V_s is the same for every document)."""
    t, embs, langs, queries, _ = data
    keep = [i for i, la in enumerate(langs) if la not in ("und", "uk")]
    e, la = embs[keep], [langs[i] for i in keep]
    qs = QueryTimeShift(e, la, t, metric="ip", docids=[f"d{j}" for j in range(len(e))])
    de = qs.search(queries, ["de"] * len(queries), 20, 1.0)
    pivot = qs.search(queries, ["en"] * len(queries), 20, 1.0)
    assert [[d for d, _ in h] for h in de] == [[d for d, _ in h] for h in pivot]


def test_bad_input(data):
    t, embs, langs, queries, qlangs = data
    with pytest.raises(MlirkitError, match="metric"):
        QueryTimeShift(embs, langs, t, metric="l2")
    with pytest.raises(MlirkitError, match="languages"):
        QueryTimeShift(embs, langs[:-1], t)
    with pytest.raises(MlirkitError, match="uk .* fit them from the corpus first"):  # never fitted here
        QueryTimeShift(embs, langs, t)
    qs = QueryTimeShift(embs, langs, filled(t, embs, langs))
    with pytest.raises(MlirkitError, match="query languages"):
        qs.scores(queries, qlangs[:-1])
    with pytest.raises(MlirkitError, match="document ids"):
        qs.search(queries, qlangs, 5)


# ------------------------------------------------------------------ through the index, Searcher and CLI
@pytest.fixture(scope="module")
def shift_index(tiny_encoder, tmp_path_factory):
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc
    from mlirkit.transforms import save_transform
    from tests.helpers import fit_from_groups
    from mlirkit.transforms.parallel import ParallelGroup

    d = tmp_path_factory.mktemp("qshift")
    pairs = [ParallelGroup(str(i), {"en": f"the {w} is here", "de": f"der {w} ist hier", "fr": f"le {w} est ici"})
             for i, w in enumerate(["ferry", "package", "file", "river", "window"])]
    t, _ = fit_from_groups(tiny_encoder, pairs, method="shift", source_lang="en")
    save_transform(t, d / "shift.safetensors")
    words = ["ferry", "package", "file", "river", "window", "garden", "engine", "letter"]
    docs = [Doc(f"{w}-{la}", f"{pre} {w} {post}", la) for w in words
            for la, pre, post in (("en", "the", "is here"), ("de", "der", "ist hier"), ("fr", "le", "est ici"),
                                  ("und", "??", "??"), ("ja", "これは", "です"))]
    Indexer(d / "pivot", tiny_encoder, transform=d / "shift.safetensors", alpha=0.7, save_embeddings=True,
            show_progress=False).index(docs)
    Indexer(d / "pivot-hnsw", tiny_encoder, transform=d / "shift.safetensors", alpha=0.7, save_embeddings=True,
            show_progress=False, index_type="hnsw").index(docs)
    rebased = {"en": d / "pivot"}
    for s in ("de", "fr"):
        save_transform(derive_source(t, s), d / f"shift-{s}.safetensors")
        Indexer(d / f"rebased-{s}", tiny_encoder, transform=d / f"shift-{s}.safetensors", alpha=0.7,
                show_progress=False).index(docs)
        rebased[s] = d / f"rebased-{s}"
    return d, rebased


QUERIES = [Query("q1", "ferry here", "en"), Query("q2", "Fähre hier", "de"), Query("q3", "le fichier", "fr"),
           Query("q4", "the river garden", "de"), Query("q5", "engine", "fr"), Query("q6", "window", "en")]


def test_searcher_mixed_topics_equal_rebased_indexes(shift_index, tiny_encoder):
    from mlirkit.search.searcher import Searcher

    d, rebased = shift_index
    one = Searcher(d / "pivot", tiny_encoder, query_shift="cosine").search(QUERIES, k=12)
    for q in QUERIES:
        want = Searcher(rebased[q.lang], tiny_encoder).search([q], k=12)[q.query_id]
        assert [h.doc_id for h in one[q.query_id]] == [h.doc_id for h in want]
        np.testing.assert_allclose([h.score for h in one[q.query_id]], [h.score for h in want], atol=1e-5)
    # the test has teeth: searching the pivot index as it is gives other scores for de/fr queries
    plain = Searcher(d / "pivot", tiny_encoder).search(QUERIES, k=12)
    assert all(abs(a.score - b.score) < 1e-5 for q in QUERIES if q.lang == "en"
               for a, b in zip(plain[q.query_id], one[q.query_id]))
    assert any(abs(a.score - b.score) > 1e-3 for q in QUERIES if q.lang != "en"
               for a, b in zip(plain[q.query_id], one[q.query_id]))
    # HNSW: candidates from the index, re-scored exactly; with every document as a candidate it is exact
    hnsw = Searcher(d / "pivot-hnsw", tiny_encoder, query_shift="cosine", candidates=40).search(QUERIES, k=12)
    assert {q: [h.doc_id for h in v] for q, v in hnsw.items()} == {q: [h.doc_id for h in v] for q, v in one.items()}
    for q in QUERIES:
        np.testing.assert_allclose([h.score for h in hnsw[q.query_id]], [h.score for h in one[q.query_id]], atol=1e-6)


def test_alpha_at_query_time_equals_reindexing(shift_index, tiny_encoder, tmp_path):
    from mlirkit.index import DenseIndex
    from mlirkit.search.searcher import Searcher

    d, _ = shift_index
    en = [q for q in QUERIES if q.lang == "en"]
    got = Searcher(d / "pivot", tiny_encoder, alpha=0.3).search(en, k=10)
    ix = DenseIndex(d / "pivot")
    raw = ix.embeddings()
    assert raw.shape[0] == len(ix.docids)
    from mlirkit.transforms import load_transform

    t = load_transform(d / "shift.safetensors")
    x = l2_normalize(t.transform(raw, ix.langs, "doc", 0.3))
    import faiss

    flat = faiss.IndexFlatIP(x.shape[1])
    flat.add(np.ascontiguousarray(x, dtype=np.float32))
    qv = Searcher(d / "pivot", tiny_encoder).encode_queries(en)
    want = search_index(flat, ix.docids, qv, 10)
    for q, w in zip(en, want):
        assert [h.doc_id for h in got[q.query_id]] == [h.doc_id for h in w]
        np.testing.assert_allclose([h.score for h in got[q.query_id]], [h.score for h in w], atol=1e-5)
    plain = _plain_index(tiny_encoder, tmp_path)
    with pytest.raises(MlirkitError, match="SHIFT index or a shift transform"):
        Searcher(plain, tiny_encoder, query_shift="cosine")
    with pytest.raises(MlirkitError, match="embeddings"):
        Searcher(d / "rebased-de", tiny_encoder, query_shift="cosine")  # built without embeddings.npy
    # a plain index with saved embeddings + a transform given at search time == the SHIFT index
    a = Searcher(plain, tiny_encoder, transform=d / "shift.safetensors", alpha=0.7).search(QUERIES[:2], k=2)
    assert set(a) == {"q1", "q2"}


def _plain_index(tiny_encoder, tmp_path):
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc

    Indexer(tmp_path / "plain", tiny_encoder, show_progress=False, save_embeddings=True).index(
        [Doc("a", "the ferry", "en"), Doc("b", "die Fähre", "de")])
    return tmp_path / "plain"


def test_search_cli_per_query_languages(shift_index, tiny_model_dir, tmp_path, capsys):
    from mlirkit.io.trec import read_run
    from mlirkit.search.cli import main

    d, rebased = shift_index
    topics = tmp_path / "topics.jsonl"
    topics.write_text("".join(json.dumps({"_id": q.query_id, "text": q.text, "lang": q.lang}) + "\n" for q in QUERIES))
    assert main(["--index", str(d / "pivot"), "--topics", str(topics), "--output", str(tmp_path / "run.trec"),
                 "--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64",
                 "--query-shift", "cosine", "--hits", "12", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["query_shift"]["metric"] == "cosine" and report["query_shift"]["alpha"] == 0.7
    run = read_run(tmp_path / "run.trec")
    for q in QUERIES:
        per = tmp_path / f"{q.query_id}.trec"
        one = tmp_path / f"{q.query_id}.jsonl"
        one.write_text(json.dumps({"_id": q.query_id, "text": q.text, "lang": q.lang}) + "\n")
        assert main(["--index", str(rebased[q.lang]), "--topics", str(one), "--output", str(per),
                     "--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64",
                     "--hits", "12", "--quiet"]) == 0
        want = read_run(per)[q.query_id]
        assert sorted(run[q.query_id], key=lambda x: (-run[q.query_id][x], x)) == \
            sorted(want, key=lambda x: (-want[x], x))
        for doc, score in want.items():
            assert abs(run[q.query_id][doc] - score) < 1e-5


def test_alpha_override_for_a_language_without_a_vector_is_refused(shift_index, tiny_encoder):
    """An ``--alpha`` override the shift has no vector for would be ignored unnoticed: refused, with a
    close match named."""
    from mlirkit.index import DenseIndex
    from mlirkit.search.query_shift import plan_for_index

    d, _ = shift_index
    with pytest.raises(MlirkitError, match=r"no vector for 'dee' \(did you mean: de\?\)"):
        plan_for_index(DenseIndex(d / "pivot"), alpha="0.7,dee=1")
    with pytest.raises(MlirkitError, match="no vector for 'ja'"):
        plan_for_index(DenseIndex(d / "pivot"), alpha={"*": 0.7, "ja": 1.0})
    assert plan_for_index(DenseIndex(d / "pivot"), alpha="0.7,de=1").alpha.for_lang("de") == 1.0


def test_queries_of_a_language_without_a_vector_are_warned_about(shift_index, tiny_encoder, caplog):
    from mlirkit.search.searcher import Searcher

    d, _ = shift_index
    searcher = Searcher(d / "pivot", tiny_encoder, query_shift="cosine")
    with caplog.at_level("WARNING", logger="mlirkit.search.query_shift"):
        hits = searcher.search([*QUERIES[:2], Query("qz", "ferry", "zz"), Query("qd", "Fähre", "deu-DE")], k=3)
    assert set(hits) == {"q1", "q2", "qz", "qd"}
    # deu-DE is de-DE by BCP 47 and falls back to the de vector (the matching rule); zz meets nothing
    assert "1 of 4 queries scored with the pivot 'en' (no vector for their language: zz 1)" in caplog.text
    assert searcher.shift.source_code("deu-DE") == searcher.shift.source_code("de") > 0


def test_the_pivot_fallback_is_warned_once_per_language_over_batches(shift_index, tiny_encoder, caplog):
    """Searching batch by batch (Searcher.search's batch_size; Pyserini's batch_search calls plan_search the
    same way) warns once per language without a vector; repeats are DEBUG; a new language warns again."""
    from mlirkit.search.searcher import Searcher

    d, _ = shift_index
    searcher = Searcher(d / "pivot", tiny_encoder, query_shift="cosine")
    batches = [*QUERIES[:2], Query("z1", "ferry", "zz"), Query("z2", "Fähre", "zz"), Query("z3", "file", "zz"),
               QUERIES[0], Query("z4", "river", "zz"), Query("y1", "engine", "yy")]
    with caplog.at_level("DEBUG", logger="mlirkit.search.query_shift"):
        hits = searcher.search(batches, k=3, batch_size=2)  # 4 batches: -, zz+zz, zz+en, zz+yy
    assert set(hits) == {q.query_id for q in batches}
    records = [r for r in caplog.records if "scored with the pivot" in r.getMessage()]
    assert [(r.levelname, r.getMessage().split(" (no vector")[0]) for r in records] == [
        ("WARNING", "2 of 2 queries scored with the pivot 'en'"),
        ("DEBUG", "1 of 2 queries scored with the pivot 'en'"),
        ("WARNING", "2 of 2 queries scored with the pivot 'en'")]
    assert "zz 1, yy 1" not in records[2].getMessage() and "yy 1, zz 1" in records[2].getMessage()
    assert searcher.shift.counts["pivot_fallback:zz"] == 4 and searcher.shift.counts["pivot_fallback:yy"] == 1
    caplog.clear()  # a second run (a new Searcher: a new plan) warns again
    with caplog.at_level("WARNING", logger="mlirkit.search.query_shift"):
        Searcher(d / "pivot", tiny_encoder, query_shift="cosine").search(batches[2:4], k=3)
    assert caplog.text.count("scored with the pivot") == 1


def test_search_cli_query_shift_hostile_topics_and_options(shift_index, tiny_model_dir, tmp_path, capsys):
    """Queries without a language are refused under the query-time shift (file and query id named, exit 2,
    no run file); --default-lang fills them in; --candidates alone and a bad --alpha override are refused."""
    from mlirkit.base.cli import run_cli
    from mlirkit.io.trec import read_run
    from mlirkit.search.cli import main

    d, _ = shift_index
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tferry here\ten\nq2\tFähre hier\tde\nq3\tle fichier\n", encoding="utf-8")
    out = tmp_path / "run.trec"
    common = ["--index", str(d / "pivot"), "--topics", str(topics), "--output", str(out), "--encoder",
              str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64", "--hits", "5", "--quiet"]
    for extra, msg in ((["--query-shift", "cosine"], f"{topics}: 1 of 3 queries have no language (first: query id 'q3')"),
                       (["--candidates", "10"], "--candidates is for the query-time shift"),
                       (["--query-shift", "cosine", "--default-lang", "fr", "--alpha", "0.5,dee=1"], "did you mean: de?"),
                       (["--alpha", "ja="], "alpha for 'ja' is not a number")):
        assert run_cli(main, [*common, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert msg in err and len(err.splitlines()) == 1, err
        assert not out.exists()
    assert main([*common, "--query-shift", "cosine", "--default-lang", "fr"]) == 0
    assert sorted(read_run(out)) == ["q1", "q2", "q3"]


@pytest.mark.parametrize("metric", ["cosine", "ip"])
def test_sweep_equals_one_search_per_alpha_ties_included(data, metric):
    """search_sweep (one score matrix, every alpha) = search at each alpha: the same documents in the same
    order, duplicated documents (exact ties) ordered by doc id, scores to float rounding."""
    t, embs, langs, queries, qlangs = data
    embs = np.concatenate([embs, embs[:40]])  # 40 exact duplicates of earlier documents: tied scores
    langs = langs + langs[:40]
    docids = [f"d{j:03d}" for j in range(len(embs))][::-1]  # the duplicate comes first by id
    qs = QueryTimeShift(embs, langs, t, metric=metric, docids=docids, missing="keep")
    alphas = [0.1, 0.5, 1.0, {"*": 0.6, "ja": 1.0, "en": 0.3}]
    qs.chunk_rows = 97  # the chunked paths too
    swept = qs.search_sweep(queries, qlangs, 25, alphas)
    ties = 0
    for alpha, got in zip(alphas, swept):
        want = qs.search(queries, qlangs, 25, alpha)
        assert [[d for d, _ in h] for h in got] == [[d for d, _ in h] for h in want]
        np.testing.assert_allclose([[s for _, s in h] for h in got], [[s for _, s in h] for h in want], atol=1e-6)
        ties += sum(h[i][1] == h[i + 1][1] for h in got for i in range(len(h) - 1))
    assert ties > 0  # the duplicates met in the top k: the tie order was checked
