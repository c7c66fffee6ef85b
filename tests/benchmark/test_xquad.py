"""The benchmark's XQuAD-R part on tiny synthetic collections (FakeEncoder): tables per query and document
language and the grouped unit in report.md/json, alpha chosen without the qrels, the query-time shift
against per-language re-based retrieval, LAReQA's mAP against ranx."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlirkit.benchmark.config import DEFAULT_LAREQA, DEFAULT_XQUAD, BenchmarkConfig
from mlirkit.benchmark.data import Split
from mlirkit.benchmark.xquad import Collection, XquadData
from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc, ParallelQuery
from mlirkit.testing.fake_encoder import FakeEncoder

LANGS = ("de", "en", "fr")


def _words(rng: np.random.Generator, n: int, vocab: int = 300) -> list[str]:
    return [f"w{int(i)}" for i in rng.integers(0, vocab, size=n)]


def make_collection(name: str = "xq", n_paragraphs: int = 24, questions_per_paragraph: int = 2,
                    sentences: bool = False, seed: int = 0) -> Collection:
    """Paragraphs (or, ``sentences``, one candidate per question) in every language; each question asked in
    every language (ParallelQuery, group = the question), relevant = its paragraph in every language."""
    rng = np.random.default_rng(seed)
    docs, queries, qrels = [], [], {}
    for p in range(n_paragraphs):
        topic = _words(rng, 10)
        units = [f"{p}_{s}" for s in range(questions_per_paragraph)] if sentences else [str(p)]
        for unit in units:
            for lang in LANGS:
                noise = [f"{lang}{int(i)}" for i in rng.integers(0, 20, size=4)]
                docs.append(Doc(f"{lang}_{unit}", " ".join(topic + noise), lang))
        for q in range(questions_per_paragraph):
            question = f"p{p}q{q}"
            words = topic[3 * q:3 * q + 4]
            relevant = [f"{lang}_{p}_{q}" if sentences else f"{lang}_{p}" for lang in LANGS]
            for lang in LANGS:
                qid = f"{lang}_{question}"
                queries.append(ParallelQuery(qid, " ".join(words), lang, question))
                qrels[qid] = {d: 1 for d in relevant}
    return Collection(name, docs, Split("all", queries, qrels))


def make_rows(n_groups: int = 40, seed: int = 1):
    """Pair sets: ``tat`` covers every language (rows grouped per language, as Tatoeba), ``bun`` lacks fr."""
    rng = np.random.default_rng(seed)
    table: dict[str, list] = {"tat": [], "bun": []}
    for g in range(n_groups):
        topic = _words(rng, 6)
        for lang in ("de", "fr"):
            table["tat"].append((f"{lang}/{g}", "en", " ".join(topic + [f"enx{g}"])))
            table["tat"].append((f"{lang}/{g}", lang, " ".join(topic + [f"{lang}x{g}"])))
        table["bun"] += [(f"b{g}", "en", " ".join(topic)), (f"b{g}", "de", " ".join(topic + ["dex"]))]
    return lambda source: iter(table[source])


def config(tmp_path: Path, **kw) -> BenchmarkConfig:
    base = dict(encoders=("fake",), output=tmp_path / "out", cache_dir=tmp_path / "cache", alphas=(0.5, 1.0),
                benchmark=None, xquad="xq", lareqa="lq", xquad_pair_sources={"tatoeba": ("tat",), "bundled": ("bun",)},
                xquad_pairs=30, n_permutations=200, plots=False, show_progress=False)
    base.update(kw)
    return BenchmarkConfig(**base)


def encoder() -> FakeEncoder:
    return FakeEncoder(dim=32, lang_strength=1.5, normalize=True)


def run(cfg: BenchmarkConfig, data: XquadData | None = None, enc=None):
    from mlirkit.benchmark.pipeline import run_benchmark

    data = data or XquadData(make_collection(), make_collection("lq", sentences=True))
    return run_benchmark(cfg, encoders={"fake": enc or encoder()}, xquad=data, parallel_rows=make_rows(),
                         command="pytest")


def test_tables_per_query_and_document_language_and_the_grouped_unit(tmp_path):
    cfg = config(tmp_path)
    result = run(cfg)
    out = cfg.output
    report = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    x = report["xquad"]["encoders"]["fake"]
    chosen = x["chosen_alpha"]
    main_runs = ["base", f"shift-tatoeba@{chosen['tatoeba']:g}", f"shift-bundled@{chosen['bundled']:g}",
                 f"shift-corpus@{chosen['corpus']:g}", "centering-tatoeba", "lir-tatoeba", "lsar-corpus",
                 "leace-corpus"]
    assert x["main_runs"] == main_runs
    assert set(x["versus_shift"]) == {"tatoeba", "corpus"} and "LSAR and LEACE against SHIFT (`tatoeba`" in md
    assert [r[1] for r in report["xquad"]["main_table"]["rows"]] == [r.split("@")[0] for r in main_runs]
    assert "nDCG@20 (micro)" in report["xquad"]["main_table"]["columns"]  # macro over query languages, micro beside
    per_language = x["result"]["_per_language"]
    assert {f"query language {la}" for la in LANGS} | {"recall@20 by document language"} <= set(per_language)
    assert set(per_language["recall@20 by document language"]["base"]) == set(LANGS)
    # the unit of the tests: the question (its three translations move together)
    assert x["result"]["_meta"]["info"]["test_unit"] == {"unit": "query group", "source": "mapping", "units": 48,
                                                         "queries": 144, "sizes": {"3": 48}}
    assert all(c["unit"] == "query group" and c["n_units"] == 48 for c in x["result"]["_significance"])
    assert set(x["by_query_language_tests"]) == set(LANGS)
    assert all(c["n_units"] == 48 for tests in x["by_query_language_tests"].values() for c in tests)
    # the bundled set has no fr pairs: left unshifted (or filled) and said so
    assert "fr" not in x["vectors"]["bundled"]["pairs"]
    for heading in ("## XQuAD-R: the SHIFT paper's benchmark", "#### nDCG@20 by query language",
                    "#### Recall@20 by document language", "#### Paired tests against base (unit: question)",
                    "over 48 query groups (144 queries, 3 per group)", "### LAReQA: the sentence pool",
                    "Alpha without XQuAD-R's labels"):
        assert heading in md, heading
    assert "## DDTP" not in md  # the part was off
    lq = x["lareqa"]
    assert set(lq["map"]) == {"base", f"shift-tatoeba@{lq['chosen_alpha']['tatoeba']:g}",
                              f"shift-corpus@{lq['chosen_alpha']['corpus']:g}"}
    assert all(c["unit"] == "query group" for c in lq["tests"])
    assert result.xquad[0].lareqa.value("base") == pytest.approx(lq["map"]["base"]["macro"])


def test_figures_equal_metrics_of_the_written_runs(tmp_path):
    """The main table's figures are those of the TREC runs the part writes (gzip, depth 20)."""
    from mlirkit.eval import evaluate
    from mlirkit.io.trec import read_run

    cfg = config(tmp_path, lareqa=None)
    data = XquadData(make_collection())
    x = run(cfg, data).xquad[0]
    topics = data.paragraphs.topics
    doc_langs = dict(zip(data.paragraphs.doc_ids, data.paragraphs.doc_langs))
    for name in x.main_runs:
        trec = read_run(cfg.output / "runs" / "fake" / "xquad-r" / f"{name}.trec.gz")
        assert set(trec) == set(topics.qrels) and all(len(h) == 20 for h in trec.values())
        again = evaluate(topics.qrels, {name: trec}, ["ndcg@20", "tlr@20"], doc_langs=doc_langs,
                         query_langs=topics.query_langs, significance=None)
        for metric in ("ndcg@20", "tlr@20"):
            assert again.value(name, metric) == pytest.approx(x.result.value(name, metric), abs=1e-9)


def test_alpha_is_chosen_without_the_qrels(tmp_path):
    """The same run with every query's relevant documents replaced by random ones chooses the same alphas
    (XQuAD-R and LAReQA): the label-free rule on the documents, as select_alpha gives it."""
    from mlirkit.transforms.alpha_select import select_alpha

    data = XquadData(make_collection(), make_collection("lq", sentences=True))
    first = run(config(tmp_path, output=tmp_path / "a"), data).xquad[0]
    rng = np.random.default_rng(7)
    for coll in (data.paragraphs, data.sentences):
        ids = coll.doc_ids
        for qid in coll.topics.qrels:
            coll.topics.qrels[qid] = {ids[i]: 1 for i in rng.choice(len(ids), size=3, replace=False)}
    second = run(config(tmp_path, output=tmp_path / "b"), data).xquad[0]
    assert second.chosen_alpha == first.chosen_alpha
    assert second.lareqa.chosen_alpha == first.lareqa.chosen_alpha
    assert second.result.value("base", "ndcg@20") != first.result.value("base", "ndcg@20")  # the labels did change
    assert second.lareqa.value("base") != first.lareqa.value("base")
    coll = data.paragraphs
    docs = np.stack([encoder().encode_docs([d.text], [d.lang])[0] for d in coll.docs])
    from mlirkit.transforms import ShiftTransform

    corpus = ShiftTransform("en", vectors="corpus").fit(docs, coll.doc_langs)
    assert first.chosen_alpha["corpus"] == select_alpha(docs, coll.doc_langs, corpus, per_language=False).alpha


def test_query_time_shift_equals_per_language_rebased_indexes():
    """The XQuAD-R SHIFT runs (query-time shift from one index) rank as an index re-based on each query's
    language would (retrieval.retrieve: the transform re-based with derive_source, FAISS inner product)."""
    from mlirkit.benchmark.retrieval import Condition, retrieve
    from mlirkit.benchmark.xquad import shift_run
    from mlirkit.search.query_shift import QueryTimeShift
    from tests.helpers import aligned_shift

    rng = np.random.default_rng(2)
    docs = rng.standard_normal((60, 12)).astype(np.float32)
    doc_langs = [LANGS[i % 3] for i in range(60)]
    doc_ids = [f"d{i:02d}" for i in range(60)]
    queries = rng.standard_normal((9, 12)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    q_langs = [LANGS[i % 3] for i in range(9)]
    q_ids = [f"q{i}" for i in range(9)]
    t = aligned_shift(rng.standard_normal((5, 12)), {"de": rng.standard_normal((5, 12)),
                                                                 "fr": rng.standard_normal((5, 12))}, "en",
                                  encoder={"class": "x"})
    shift = QueryTimeShift(docs, doc_langs, t, metric="cosine", docids=doc_ids)
    for alpha in (0.4, 1.3):
        fast = shift_run(shift, queries, q_ids, q_langs, 10, alpha)
        slow = retrieve(Condition("shift", "s", alpha, t), docs, doc_ids, doc_langs, queries, q_ids, q_langs, 10)
        for q in q_ids:
            assert list(fast[q]) == list(slow[q])
            np.testing.assert_allclose(list(fast[q].values()), list(slow[q].values()), atol=1e-5)


def test_shift_sweep_runs_equal_one_query_time_shift_per_alpha():
    """The XQuAD-R SHIFT sweep from one score matrix (shift_sweep_runs) = shift_run at each alpha."""
    from mlirkit.benchmark.xquad import QUERY_BLOCK, shift_run, shift_sweep_runs
    from mlirkit.search.query_shift import QueryTimeShift
    from tests.helpers import aligned_shift

    rng = np.random.default_rng(6)
    docs = rng.standard_normal((70, 12)).astype(np.float32)
    docs[50:60] = docs[:10]  # exact duplicates: tied scores
    doc_langs = [LANGS[i % 3] for i in range(70)]
    doc_ids = [f"d{i:02d}" for i in range(70)][::-1]
    n = QUERY_BLOCK + 5  # two blocks
    queries = rng.standard_normal((n, 12)).astype(np.float32)
    q_langs = [LANGS[i % 3] for i in range(n)]
    q_ids = [f"q{i}" for i in range(n)]
    t = aligned_shift(rng.standard_normal((5, 12)), {"de": rng.standard_normal((5, 12)),
                                                    "fr": rng.standard_normal((5, 12))}, "en", encoder={"class": "x"})
    shift = QueryTimeShift(docs, doc_langs, t, metric="cosine", docids=doc_ids)
    alphas = [0.2, 0.7, 1.0]
    for alpha, fast in zip(alphas, shift_sweep_runs(shift, queries, q_ids, q_langs, 10, alphas)):
        slow = shift_run(shift, queries, q_ids, q_langs, 10, alpha)
        assert list(fast) == list(slow)
        for q in q_ids:
            assert list(fast[q]) == list(slow[q])
            np.testing.assert_allclose(list(fast[q].values()), list(slow[q].values()), atol=1e-6)


def test_average_precision_equals_ranx_map_on_full_runs():
    """AP over the whole ranking from scores = ranx's map on runs listing every candidate (ties by doc id)."""
    from mlirkit.benchmark.average_precision import average_precision, id_ranks
    from mlirkit.eval import evaluate

    rng = np.random.default_rng(4)
    n, nq = 40, 7
    doc_ids = [f"d{i:03d}" for i in rng.permutation(n)]
    scores = np.round(rng.standard_normal((nq, n)), 1).astype(np.float32)  # rounded: many ties
    relevant = [np.sort(rng.choice(n, size=int(rng.integers(1, 6)), replace=False)) for _ in range(nq)]
    ap = average_precision(scores, relevant, id_ranks(doc_ids))
    qrels = {f"q{i}": {doc_ids[j]: 1 for j in rel} for i, rel in enumerate(relevant)}
    run_ = {f"q{i}": {doc_ids[j]: float(scores[i, j]) for j in range(n)} for i in range(nq)}
    result = evaluate(qrels, {"r": run_}, ["map"], significance=None)
    for i in range(nq):
        assert ap[i] == pytest.approx(result.per_query["r"]["map"][f"q{i}"], abs=1e-9)
    by_hand = average_precision(np.array([[0.9, 0.5, 0.5, 0.1]]), [np.array([1, 3])], np.array([0, 2, 1, 3]))
    assert by_hand[0] == pytest.approx((1 / 3 + 2 / 4) / 2)  # ranks 3 (tie lost to id order) and 4


def test_lareqa_needs_the_xquad_part_and_its_encoders():
    with pytest.raises(MlirkitError, match="runs with the XQuAD-R part"):
        BenchmarkConfig(xquad=None, lareqa=DEFAULT_LAREQA)
    with pytest.raises(MlirkitError, match="LAReQA encoder 'e5' is not one of the encoders"):
        BenchmarkConfig(encoders=("usem",), xquad=DEFAULT_XQUAD, lareqa=DEFAULT_LAREQA, lareqa_encoders=("e5",))
    cfg = BenchmarkConfig(encoders=("a", "b"), xquad=DEFAULT_XQUAD, lareqa=DEFAULT_LAREQA, lareqa_encoders=("b",))
    assert not cfg.runs_lareqa("a") and cfg.runs_lareqa("b")


def test_cli_parts(tmp_path, capsys):
    from mlirkit.benchmark.cli import build_parser, main
    from mlirkit.base.cli import run_cli

    assert build_parser().parse_args([]).parts == ["xquad-r", "ddtp"]  # the main job: the paper's benchmark and DDTP
    assert run_cli(main, ["--parts", "lareqa", "--output", str(tmp_path / "o"), "--quiet"]) == 2
    assert "runs with the XQuAD-R part" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_quick_run_on_the_bundled_xquad_r(tmp_path):
    """--quick on the real bundled XQuAD-R, LAReQA and Tatoeba files (FakeEncoder instead of a model)."""
    from mlirkit.benchmark.pipeline import run_benchmark

    cfg = BenchmarkConfig(encoders=("fake",), quick=True, benchmark=None, xquad=DEFAULT_XQUAD, lareqa=DEFAULT_LAREQA,
                          output=tmp_path / "out",
                          cache_dir=tmp_path / "cache", plots=False, show_progress=False, n_permutations=100)
    result = run_benchmark(cfg, encoders={"fake": FakeEncoder(dim=16, normalize=True)}, command="pytest")
    d = result.xquad_data
    assert d["paragraphs"]["questions"] == 100 and len(d["paragraphs"]["queries_per_language"]) == 8
    assert d["sentences"]["questions"] == 100 and len(d["sentences"]["queries_per_language"]) == 11
    x = result.xquad[0]
    assert x.vectors["tatoeba"]["pairs"] == {la: 50 for la in ("ar", "de", "es", "hi", "ru", "vi", "zh")}
    assert set(x.vectors["bundled"]["pairs"]) == {"de", "es", "ru", "zh"}  # no ar, hi, vi in the bundled sets
    assert x.lareqa is not None and len(x.lareqa.languages) == 11


def test_the_xquad_part_encodes_whole_paragraphs():
    """The XQuAD-R part's encoder options: the part's max length where the encoder takes one (the DDTP
    part keeps its own), the same options otherwise."""
    cfg = BenchmarkConfig(encoders=("multilingual-e5-small-q4", "usem"))
    assert cfg.options_for("multilingual-e5-small-q4")["max_length"] == 256
    assert cfg.xquad_options_for("multilingual-e5-small-q4") == {**cfg.options_for("multilingual-e5-small-q4"),
                                                                 "max_length": 512}
    assert cfg.xquad_options_for("usem") == cfg.options_for("usem")
    assert BenchmarkConfig(xquad_max_length=128).xquad_options_for("multilingual-e5-small-q4")["max_length"] == 128
    with pytest.raises(MlirkitError, match="xquad_max_length"):
        BenchmarkConfig(xquad_max_length=0)


def test_cli_prints_the_xquad_tables(tmp_path, monkeypatch, capsys):
    """`--parts xquad-r lareqa` prints XQuAD-R's main table, the per-language tables and LAReQA's, says how
    alpha was chosen, and runs no DDTP part (the tiny collections here stand in for the registered ids)."""
    import mlirkit.benchmark.pipeline as pipeline
    from mlirkit.benchmark.cli import main

    real = pipeline.run_benchmark

    def tiny(cfg, command=None):
        assert cfg.benchmark is None and cfg.xquad == DEFAULT_XQUAD and cfg.lareqa == DEFAULT_LAREQA
        cfg = cfg.with_(encoders=("fake",), xquad="xq", lareqa="lq", cache_dir=tmp_path / "cache", xquad_pairs=30,
                        xquad_pair_sources={"tatoeba": ("tat",), "bundled": ("bun",)}, n_permutations=200,
                        plots=False)
        return real(cfg, encoders={"fake": encoder()}, parallel_rows=make_rows(), command=command,
                    xquad=XquadData(make_collection(), make_collection("lq", sentences=True)))

    monkeypatch.setattr(pipeline, "run_benchmark", tiny)
    assert main(["--parts", "xquad-r", "lareqa", "--output", str(tmp_path / "o"), "--quiet"]) == 0
    out = capsys.readouterr().out
    for text in ("by the label-free rule of `shift select-alpha`", "fake: nDCG@20 by query language",
                 "then recall@20 by document language", "XQuAD-R (xq:", "LAReQA (lq:", "| shift-tatoeba"):
        assert text in out, text
    assert "DDTP" not in out and (tmp_path / "o" / "report.md").is_file()


def make_partial_collection(name: str = "mq", n_paragraphs: int = 48, seed: int = 2) -> Collection:
    """As :func:`make_collection`, each paragraph kept in en and one other language (MLQA-R's partial
    parallelism): a question's relevant documents are its paragraph's kept versions."""
    full = make_collection(name, n_paragraphs, seed=seed)
    kept = {str(p): ("en", LANGS[p % 2 * 2]) for p in range(n_paragraphs)}  # en + de or fr
    docs = [d for d in full.docs if d.lang in kept[d.doc_id.split("_", 1)[1]]]
    keep = {d.doc_id for d in docs}
    queries = [q for q in full.topics.queries if q.lang in kept[q.group_id[1:].split("q")[0]]]
    qrels = {q.query_id: {d: r for d, r in full.topics.qrels[q.query_id].items() if d in keep} for q in queries}
    return Collection(name, docs, Split("all", queries, qrels))


def test_the_mlqa_r_part_runs_as_the_xquad_part(tmp_path):
    from mlirkit.benchmark.pipeline import run_benchmark

    cfg = config(tmp_path, xquad=None, lareqa=None, mlqa="mq", plots=True)
    result = run_benchmark(cfg, encoders={"fake": encoder()}, mlqa=XquadData(make_partial_collection()),
                           parallel_rows=make_rows(), command="pytest")
    assert not result.xquad and len(result.mlqa) == 1
    x = result.mlqa[0]
    assert x.main_runs[0] == "base" and set(x.chosen_alpha) == {"tatoeba", "bundled", "corpus"}
    report = json.loads((cfg.output / "report.json").read_text())
    md = (cfg.output / "report.md").read_text()
    assert report["xquad"] is None and report["mlqa"]["main_table"]["rows"]
    assert "## MLQA-R: partly parallel" in md and "Alpha without MLQA-R's labels" in md
    assert "every language that has the question (2-4)" in md and "### MLQA-R, fake" in md
    assert (cfg.output / "runs" / "fake" / "mlqa-r" / "base.trec.gz").is_file()
    assert (cfg.output / "plots" / "fake" / "mlqa-r-alpha-tatoeba.png").is_file()
    header = report["mlqa"]["main_table"]["columns"]
    row = report["mlqa"]["main_table"]["rows"][0]
    assert "PEER@20" in header and "MRC@10" in header
    assert float(row[header.index("MRC@10")]) != 0 and row[header.index("PEER@20")] != "n/a"
    # the grouped test covers the fairness metrics too
    assert {c.metric for c in x.result.significance} >= {"peer@20", "mrc@10"}


def test_mrc_of_the_part_equals_mrc_of_runs_that_rank_every_document(tmp_path):
    """MRC@10 from every score (score_rows, as the part computes it) against MRC@10 of mlirkit.eval on runs of
    the same systems that rank every document (retrieve at depth = corpus size)."""
    from mlirkit.benchmark.retrieval import Condition, retrieve, score_rows
    from mlirkit.benchmark.xquad import mrc_by_run
    from mlirkit.eval import evaluate
    from mlirkit.transforms import ShiftTransform

    coll = make_collection()
    enc = encoder()
    docs = enc.encode_docs([d.text for d in coll.docs], coll.doc_langs)
    queries = coll.topics.queries
    qe = enc.encode_queries([q.text for q in queries], [q.lang for q in queries])
    q_ids, q_langs = [q.query_id for q in queries], [q.lang for q in queries]
    means = {la: docs[np.array(coll.doc_langs) == la].mean(axis=0) for la in LANGS}
    shift = ShiftTransform.from_tensors({la: means[la] - means["en"] for la in LANGS if la != "en"}, source_lang="en",
                           encoder=enc.fingerprint)
    conds = [Condition("base"), Condition("shift", "x", 0.7, shift)]
    cfg = BenchmarkConfig(encoders=("fake",), benchmark=None)
    ours = mrc_by_run(cfg, {c.name: score_rows(c, docs, coll.doc_langs, qe, q_langs) for c in conds}, coll)["mrc@10"]
    full = {c.name: retrieve(c, docs, coll.doc_ids, coll.doc_langs, qe, q_ids, q_langs, len(coll.docs)) for c in conds}
    res = evaluate(coll.topics.qrels, full, ["mrc@10"], query_langs=coll.topics.query_langs,
                   query_groups=coll.topics.query_groups, significance=None)
    for c in conds:
        assert res.per_query[c.name]["mrc@10"] == pytest.approx(ours[c.name], abs=1e-4)
    assert ours["base"] != pytest.approx(ours[conds[1].name], abs=1e-3)


def test_the_lareqa_table_has_the_fairness_columns(tmp_path):
    from mlirkit.benchmark import xquad_report

    result = run(config(tmp_path))
    header, rows = xquad_report.lareqa_rows(result)
    assert header[-2:] == ["PEER@20", "MRC@10"] and all(r[-1] != "n/a" for r in rows)
    lq = result.xquad[0].lareqa
    assert {c.metric for c in lq.fairness.significance} == {"peer@20", "mrc@10"}


def test_mlqa_r_missing_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from mlirkit.benchmark.cli import main
    from mlirkit.base.cli import run_cli

    monkeypatch.setenv("MLIRKIT_OFFLINE", "1")
    monkeypatch.delenv("MLIRKIT_DATA", raising=False)
    assert run_cli(main, ["--parts", "mlqa-r", "--output", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: missing file mlqa-r/ar.json (offline mode)") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
