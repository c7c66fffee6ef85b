"""The benchmark pipeline end to end on tiny synthetic data (FakeEncoder), its cache, selection and CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlirkit.benchmark.cache import EmbeddingCache, data_digest
from mlirkit.benchmark.config import BenchmarkConfig
from mlirkit.benchmark.data import BenchmarkData, Split, load_parallel, select
from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc, ParallelQuery, Query
from mlirkit.testing.fake_encoder import FakeEncoder

LANGS = ("en", "de", "fr")


class CountingEncoder(FakeEncoder):
    """FakeEncoder that counts the texts it encodes per side."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls = {"doc": 0, "query": 0}
        self.texts = {"doc": 0, "query": 0}

    def encode_docs(self, texts, langs=None, *, batch_size=None, show_progress=False):
        self.calls["doc"] += 1
        self.texts["doc"] += len(texts)
        return super().encode_docs(texts, langs)

    def encode_queries(self, texts, langs=None, *, batch_size=None, show_progress=False):
        self.calls["query"] += 1
        self.texts["query"] += len(texts)
        return super().encode_queries(texts, langs)


def _words(rng: np.random.Generator, n: int) -> list[str]:
    return [f"w{int(i)}" for i in rng.integers(0, 400, size=n)]


def make_data(n_groups: int = 24, seed: int = 0, langs=LANGS) -> BenchmarkData:
    """Groups of 'translations' (same topic words, per-language noise words); en queries = part of the topic."""
    rng = np.random.default_rng(seed)
    docs, splits = [], {"dev": Split("dev", [], {}), "test": Split("test", [], {})}
    for g in range(n_groups):
        topic = _words(rng, 8)
        members = []
        for lang in langs:
            text = " ".join(topic + [f"{lang}{int(i)}" for i in rng.integers(0, 30, size=4)])
            docs.append(Doc(f"g{g:03d}/{lang}", text, lang))
            members.append(f"g{g:03d}/{lang}")
        split = splits["dev" if g % 3 == 0 else "test"]
        qid = f"q/g{g:03d}/en"
        split.queries.append(Query(qid, " ".join(topic[:4]), "en"))
        split.qrels[qid] = {m: 1 for m in members}
    return BenchmarkData("synthetic", docs, splits)


def make_rows(n_groups: int = 40, seed: int = 1, langs=LANGS):
    rng = np.random.default_rng(seed)
    table = {}
    for name in ("setA", "setB"):
        rows = []
        for g in range(n_groups):
            topic = _words(rng, 6)
            for lang in langs:
                if name == "setB" and lang == "fr" and g % 2:
                    continue
                rows.append((f"{name}-{g}", lang, " ".join(topic + [f"{lang}x{int(i)}" for i in rng.integers(0, 9, 2)])))
        table[name] = rows
    return lambda source: iter(table[source])


def config(tmp_path: Path, **kw) -> BenchmarkConfig:
    base = dict(encoders=("fake",), output=tmp_path / "out", cache_dir=tmp_path / "cache", alphas=(0.5, 1.0),
                fit_sources={"ood": ("setA", "setB"), "ddtp": ("setA",)}, max_pairs=20, n_permutations=200,
                plots=False, show_progress=False, depth=30, xquad=None, lareqa=None)
    base.update(kw)
    return BenchmarkConfig(**base)


def run(cfg: BenchmarkConfig, encoder, data=None):
    from mlirkit.benchmark.pipeline import run_benchmark

    return run_benchmark(cfg, encoders={"fake": encoder}, data=data if data is not None else make_data(),
                         parallel_rows=make_rows(), command="pytest")


# ---------------------------------------------------------------------------- end to end
def test_end_to_end_outputs(tmp_path):
    from mlirkit.io.provenance import read_sidecar
    from mlirkit.io.trec import read_run
    from mlirkit.transforms import load_transform

    enc = CountingEncoder(dim=32, lang_strength=1.0, normalize=True)
    cfg = config(tmp_path)
    result = run(cfg, enc)
    out = cfg.output
    assert not list(tmp_path.glob(".out.tmp-*"))  # written atomically
    report = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    main_runs = ["base", f"shift-ood@{result.encoders[0].chosen_alpha['ood']:g}", "centering-ood", "lir-ood",
                 f"shift-ddtp@{result.encoders[0].chosen_alpha['ddtp']:g}", "centering-ddtp", "lir-ddtp",
                 "lsar-corpus", "leace-corpus"]
    assert report["encoders"]["fake"]["main_runs"] == main_runs
    assert len(report["main_table"]["rows"]) == 9
    versus = report["encoders"]["fake"]["versus_shift"]  # LSAR and LEACE against each SHIFT too
    assert set(versus) == {"ood", "ddtp"} and "LSAR and LEACE against SHIFT (`ddtp`" in md
    assert {(c["run_a"], c["run_b"]) for c in versus["ddtp"]["_significance"]} == {
        (main_runs[4], "lsar-corpus"), (main_runs[4], "leace-corpus")}
    assert report["main_table"]["columns"][:3] == ["encoder", "system", "alpha"]
    assert set(report["encoders"]["fake"]["chosen_alpha"].values()) <= {0.5, 1.0}
    assert "dev split" in report["split"] and "test split" in report["split"]
    assert "## Main table (test split)" in md and "dev chooses, test reports" in md
    assert "Precision: `fake`: its own computation." in md  # hf encoders: "backend openvino, precision bf16"
    test = report["encoders"]["fake"]["test"]
    for run_name in main_runs:
        assert set(test[run_name]) >= {"ndcg@20", "recall@20", "mrr@10", "tlr@20", "samelang@20"}
    # significance: every non-base main system against base, for every metric, Holm-corrected
    comps = test["_significance"]
    assert {(c["run_a"], c["run_b"]) for c in comps} == {("base", r) for r in main_runs[1:]}
    # MRC needs the queries' translations (registered {benchmark}/multi/test); the synthetic bed has none: n/a
    tested = [m for m in cfg.metrics if m != "mrc@10"]
    assert len(comps) == 8 * len(tested) and all(c["test"] == "fisher" for c in comps)
    mrc_column = report["main_table"]["columns"].index("MRC@10")
    assert {row[mrc_column] for row in report["main_table"]["rows"]} == {"n/a"}
    # every sweep alpha on dev and test
    assert set(report["encoders"]["fake"]["test_sweep"]) == {"base", "shift-ood@0.5", "shift-ood@1", "centering-ood",
                                                              "lir-ood", "shift-ddtp@0.5", "shift-ddtp@1",
                                                              "centering-ddtp", "lir-ddtp", "lsar-corpus",
                                                              "leace-corpus"}
    # TREC runs: main systems, both splits, readable, the right queries and depth
    data = make_data()
    for split in ("dev", "test"):
        for run_name in main_runs:
            trec = read_run(out / "runs" / "fake" / split / f"{run_name}.trec")
            assert set(trec) == {q.query_id for q in data.splits[split].queries}
            assert read_sidecar(out / "runs" / "fake" / split / f"{run_name}.trec")["command"] == ["pytest"]
            assert all(len(h) == 30 for h in trec.values())
    # transform files load and belong to this encoder
    for source in ("ood", "ddtp"):
        for method in ("shift", "centering", "lir"):
            t = load_transform(out / "transforms" / "fake" / f"{source}-{method}.safetensors")
            assert t.method == method and t.encoder == enc.fingerprint
    assert load_transform(out / "transforms" / "fake" / "ood-shift.safetensors").meta["pairs"] == {"de": 20, "fr": 20}
    assert not (out / "plots").exists()


def test_concurrent_encoders_write_what_one_at_a_time_writes(tmp_path):
    """Two encoders at once (threads) = one after the other: the same report figures and the same runs, byte
    for byte; only the timings differ."""
    from mlirkit.benchmark.pipeline import run_benchmark

    def outputs(workers: int) -> tuple[dict, dict]:
        root = tmp_path / str(workers)
        cfg = config(root, encoders=("fake", "fake2"), concurrent_encoders=workers)
        run_benchmark(cfg, encoders={"fake": FakeEncoder(dim=32, lang_strength=1.0, normalize=True),
                                     "fake2": FakeEncoder(dim=16, lang_strength=0.7)},
                      data=make_data(), parallel_rows=make_rows(), command="pytest")
        report = json.loads((cfg.output / "report.json").read_text())
        for key in ("timings", "stages", "cache", "cache_entries", "created", "config"):
            report.pop(key, None)
        for part in report["encoders"].values():
            part.pop("timings")
        runs = {p.relative_to(cfg.output): p.read_bytes() for p in sorted((cfg.output / "runs").rglob("*.trec"))}
        return report, runs

    one, two = outputs(1), outputs(2)
    assert one[0] == two[0]
    assert len(one[1]) == 2 * 2 * 9 and one[1] == two[1]  # 2 encoders x 2 splits x 9 main systems


@pytest.mark.slow
def test_plots_are_written_and_linked(tmp_path):
    cfg = config(tmp_path, plots=True)
    result = run(cfg, FakeEncoder(dim=32, lang_strength=1.0, normalize=True))
    out = cfg.output
    for name in ("alpha-ood-test", "alpha-ddtp-test", "language-mix-test", "projection-shift-ood",
                 "projection-shift-ddtp"):
        for ext in ("png", "svg"):
            assert (out / "plots" / "fake" / f"{name}.{ext}").stat().st_size > 1000
    assert sorted(result.encoders[0].files["plots"]) == sorted(
        str(p.relative_to(out)) for p in (out / "plots").rglob("*.*"))
    md = (out / "report.md").read_text()
    assert "![language-mix-test](plots/fake/language-mix-test.png)" in md


def test_main_table_values_match_recomputed_metrics(tmp_path):
    """The reported base and SHIFT figures equal metrics recomputed from the written TREC runs."""
    from mlirkit.eval import evaluate
    from mlirkit.io.trec import read_run

    result = run(config(tmp_path), FakeEncoder(dim=32, lang_strength=1.0, normalize=True))
    enc = result.encoders[0]
    data = make_data()
    sp = data.splits["test"]
    for run_name in enc.main_runs:
        trec = read_run(cfg_out(tmp_path) / "runs" / "fake" / "test" / f"{run_name}.trec")
        again = evaluate(sp.qrels, {run_name: trec}, ["ndcg@20", "tlr@20"], doc_langs=data.doc_langs,
                         query_langs=sp.query_langs, significance=None)
        for metric in ("ndcg@20", "tlr@20"):
            assert again.value(run_name, metric) == pytest.approx(enc.test.value(run_name, metric), abs=1e-9)


def cfg_out(tmp_path: Path) -> Path:
    return tmp_path / "out"


def test_alpha_chosen_on_dev_only(tmp_path):
    """Changing only the test qrels never changes the chosen alpha (selection is blind to test)."""
    enc = FakeEncoder(dim=32, lang_strength=1.0, normalize=True)
    data = make_data()
    r1 = run(config(tmp_path, output=tmp_path / "a", alphas=(0.2, 0.6, 1.0)), enc, data)
    for qid in data.splits["test"].qrels:
        data.splits["test"].qrels[qid] = {d: 1 for d in list(data.splits["test"].qrels[qid])[:1]}
    r2 = run(config(tmp_path, output=tmp_path / "b", alphas=(0.2, 0.6, 1.0)), enc, data)
    assert r1.encoders[0].chosen_alpha == r2.encoders[0].chosen_alpha
    dev = r1.encoders[0].dev
    best = max((dev.value(f"shift-ood@{a:g}", "ndcg@20"), -a) for a in (0.2, 0.6, 1.0))
    assert r1.encoders[0].chosen_alpha["ood"] == -best[1]


def test_shift_reduces_planted_language_bias(tmp_path):
    """With a strong per-language offset, base prefers the query's language; SHIFT lowers that share
    and raises TLR@20 (the effect the benchmark exists to show)."""
    result = run(config(tmp_path, alphas=(1.0,)), FakeEncoder(dim=64, lang_strength=2.0, normalize=False))
    test = result.encoders[0].test
    assert test.value("base", "samelang@20") > test.value("shift-ood@1", "samelang@20")
    assert test.value("shift-ood@1", "tlr@20") > test.value("base", "tlr@20")


def test_output_exists_refused_then_overwritten(tmp_path):
    enc = FakeEncoder(dim=16)
    cfg = config(tmp_path)
    run(cfg, enc)
    with pytest.raises(MlirkitError, match="already exists"):
        run(cfg, enc)
    run(cfg.with_(overwrite=True), enc)
    assert (cfg.output / "report.json").is_file()


def test_overwrite_refuses_an_output_holding_a_user_file(tmp_path, capsys):
    """A benchmark output with a file of the user's added: --overwrite is refused in one line naming it,
    through the CLI before any work and in Python; nothing is removed."""
    from mlirkit.base.cli import run_cli
    from mlirkit.benchmark.cli import main

    cfg = config(tmp_path, plots=True)
    run(cfg, FakeEncoder(dim=16))
    assert sorted(p.name for p in cfg.output.iterdir()) == ["plots", "report.json", "report.md", "runs", "transforms"]
    (cfg.output / "my-notes.md").write_text("what I saw\n")
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(MlirkitError, match="my-notes.md is not mlirkit's"):
        run(cfg.with_(overwrite=True), FakeEncoder(dim=16))
    assert run_cli(main, ["--output", str(cfg.output), "--overwrite", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()  # (logging other tests configured may precede it)
    assert [line for line in err if "error" in line] == err[-1:] and "Traceback" not in "".join(err)
    assert "my-notes.md is not mlirkit's" in err[-1] and "even with --overwrite" in err[-1]
    assert sorted(p for p in tmp_path.rglob("*")) == before


# ---------------------------------------------------------------------------- cache
def test_second_run_reuses_the_cache(tmp_path):
    enc = CountingEncoder(dim=16)
    run(config(tmp_path), enc)
    first = dict(enc.texts)
    assert first["doc"] > 0 and first["query"] == 8 + 16
    enc2 = CountingEncoder(dim=16)  # same fingerprint, fresh counters
    result = run(config(tmp_path, output=tmp_path / "out2"), enc2)
    assert enc2.calls == {"doc": 0, "query": 0}
    assert result.cache["hits"] == 4 and result.cache["misses"] == 0 and result.cache["texts_encoded"] == 0
    # and the figures are identical
    assert json.loads((tmp_path / "out" / "report.json").read_text())["main_table"] == \
        json.loads((tmp_path / "out2" / "report.json").read_text())["main_table"]


def test_encoder_change_invalidates_the_cache(tmp_path):
    run(config(tmp_path), CountingEncoder(dim=16, lang_strength=0.5))
    enc = CountingEncoder(dim=16, lang_strength=0.7)  # another fingerprint
    result = run(config(tmp_path, output=tmp_path / "out2"), enc)
    assert enc.texts["query"] == 24 and enc.texts["doc"] > 0
    assert result.cache["misses"] == 4 and result.cache["removed_stale"] == 4
    # only the new encoder's entries are left
    digests = {p.name.split("-")[-2] for p in (tmp_path / "cache" / "fake").glob("*.npy")}
    assert digests == {enc.digest}


def test_data_change_invalidates_only_what_changed(tmp_path):
    run(config(tmp_path), CountingEncoder(dim=16))
    data = make_data()
    d = data.docs[5]
    data.docs[5] = d._replace(text=d.text + " changed")
    enc = CountingEncoder(dim=16)
    result = run(config(tmp_path, output=tmp_path / "out2"), enc, data)
    assert enc.texts == {"doc": len(data.docs), "query": 0}  # the corpus again; queries and pairs from the cache
    assert result.cache["hits"] == 3 and result.cache["misses"] == 1


def test_cache_resumes_an_interrupted_encoding(tmp_path):
    class Failing(CountingEncoder):
        fail_after = 2

        def encode_docs(self, texts, langs=None, **kw):
            if self.calls["doc"] >= self.fail_after:
                raise KeyboardInterrupt
            return super().encode_docs(texts, langs)

    texts = [f"text number {i} " + "x " * (i % 7) for i in range(50)]
    langs = ["en"] * 50
    cache = EmbeddingCache(tmp_path, chunk_size=10, show_progress=False)
    with pytest.raises(KeyboardInterrupt):
        cache.embed(Failing(dim=8), "fake", "corpus", "doc", texts, langs)
    enc = CountingEncoder(dim=8)
    out = EmbeddingCache(tmp_path, chunk_size=10, show_progress=False).embed(enc, "fake", "corpus", "doc", texts, langs)
    assert enc.texts["doc"] == 30  # two chunks of ten were kept
    np.testing.assert_allclose(out, FakeEncoder(dim=8).encode_docs(texts, langs), rtol=0, atol=0)
    assert not list(tmp_path.rglob("*.parts*"))


def test_cache_rejects_a_damaged_entry(tmp_path):
    texts, langs = ["a b", "c d e"], ["en", "de"]
    cache = EmbeddingCache(tmp_path, show_progress=False)
    enc = CountingEncoder(dim=8)
    cache.embed(enc, "fake", "x", "doc", texts, langs)
    path = next(tmp_path.rglob("*.npy"))
    np.save(path, np.zeros((3, 8), dtype=np.float32))  # wrong shape
    again = EmbeddingCache(tmp_path, show_progress=False).embed(enc, "fake", "x", "doc", texts, langs)  # a later run
    assert enc.calls["doc"] == 2 and again.shape == (2, 8)


def test_cache_encodes_only_texts_the_run_has_not_seen(tmp_path):
    """Within one run, an entry encodes only the (side, lang, text) it has not computed or read before; the
    vectors equal a fresh encoding, and the entry is stored whole for the next run."""
    enc = CountingEncoder(dim=8)
    cache = EmbeddingCache(tmp_path / "whole", show_progress=False)
    first = cache.embed(enc, "fake", "a", "query", ["x y", "z w"], ["en", "de"])
    whole = cache.embed(enc, "fake", "w", "query", ["x y", "new one"], ["en", "en"])  # no reuse: encoded whole
    assert enc.texts["query"] == 2 + 2
    np.testing.assert_allclose(whole[0], first[0], rtol=0, atol=0)
    enc = CountingEncoder(dim=8)
    cache = EmbeddingCache(tmp_path / "c", show_progress=False)
    first = cache.embed(enc, "fake", "a", "query", ["x y", "z w"], ["en", "de"])
    both = cache.embed(enc, "fake", "b", "query", ["z w", "z w", "x y", "new one"], ["de", "fr", "en", "en"],
                       reuse=True)
    assert enc.texts["query"] == 2 + 2  # "z w"/fr is another language: encoded
    assert cache.stats.texts_reused == 2 and cache.stats.texts_encoded == 4
    fresh = FakeEncoder(dim=8).encode_queries(["z w", "z w", "x y", "new one"], ["de", "fr", "en", "en"])
    np.testing.assert_allclose(both, fresh, rtol=0, atol=0)
    np.testing.assert_allclose(both[[2, 0]], first, rtol=0, atol=0)
    assert enc.texts["doc"] == 0  # the other side is never reused from queries
    cache.embed(enc, "fake", "d", "doc", ["x y"], ["en"], reuse=True)
    assert enc.texts["doc"] == 1
    later = CountingEncoder(dim=8)
    again = EmbeddingCache(tmp_path / "c", show_progress=False).embed(later, "fake", "b", "query",
                                                                       ["z w", "z w", "x y", "new one"],
                                                                       ["de", "fr", "en", "en"])
    assert later.texts["query"] == 0
    np.testing.assert_array_equal(again, both)


def test_cache_resume_never_mixes_chunks_of_other_texts(tmp_path):
    """An interrupted encoding resumes only from chunks of the same texts: when the run had already seen
    part of an entry's texts, what is left to encode differs, and so does the folder of its chunks."""
    class Failing(CountingEncoder):
        def encode_docs(self, texts, langs=None, **kw):
            if self.calls["doc"] >= 1:
                raise KeyboardInterrupt
            return super().encode_docs(texts, langs)

    texts = [f"text {i} " + "x " * (i % 5) for i in range(30)]
    langs = ["en"] * 30
    with pytest.raises(KeyboardInterrupt):
        EmbeddingCache(tmp_path, chunk_size=10, show_progress=False).embed(Failing(dim=8), "fake", "c", "doc", texts,
                                                                          langs)
    cache = EmbeddingCache(tmp_path, chunk_size=10, show_progress=False)
    enc = CountingEncoder(dim=8)
    cache.embed(enc, "fake", "other", "doc", texts[:7], langs[:7])  # seen before the entry is asked for
    out = cache.embed(enc, "fake", "c", "doc", texts, langs, reuse=True)
    assert enc.texts["doc"] == 7 + 23  # the chunks of the interrupted run (30 texts) are not those of the 23 left
    np.testing.assert_allclose(out, FakeEncoder(dim=8).encode_docs(texts, langs), rtol=0, atol=0)
    assert not list(tmp_path.rglob("*.parts*"))


def test_data_digest_sensitivity():
    base = data_digest("doc", ["a", "b"], ["en", "de"])
    assert base == data_digest("doc", ["a", "b"], ["en", "de"])
    assert len({base, data_digest("query", ["a", "b"], ["en", "de"]), data_digest("doc", ["b", "a"], ["de", "en"]),
                data_digest("doc", ["a", "b"], ["en", "fr"]), data_digest("doc", ["ab", ""], ["en", "de"]),
                data_digest("doc", ["a", "b "], ["en", "de"])}) == 6


# ---------------------------------------------------------------------------- retrieval
def test_retrieval_matches_numpy_cosine_and_tie_breaking():
    from mlirkit.benchmark.retrieval import Condition, retrieve
    from tests.helpers import aligned_shift

    rng = np.random.default_rng(3)
    docs = rng.standard_normal((40, 8)).astype(np.float32)
    docs[7] = docs[3] * 2  # same direction: a tie broken by doc id
    doc_ids = [f"d{i:02d}" for i in range(40)]
    doc_langs = ["en", "de"] * 20
    queries = rng.standard_normal((5, 8)).astype(np.float32)
    queries[0] = docs[3]
    qids = [f"q{i}" for i in range(5)]
    t = aligned_shift(rng.standard_normal((6, 8)), {"de": rng.standard_normal((6, 8))}, "en",
                                  encoder={"class": "x"})
    for cond, alpha in ((Condition("base"), 0.0), (Condition("shift", "s", 0.7, t), 0.7)):
        run_ = retrieve(cond, docs, doc_ids, doc_langs, queries, qids, ["en"] * 5, k=10)
        shifted = docs.astype(np.float64) - alpha * np.outer(np.array([lang == "de" for lang in doc_langs]),
                                                             t.params_["de"])
        d = shifted / np.linalg.norm(shifted, axis=1, keepdims=True)
        q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        scores = q @ d.T
        for i, qid in enumerate(qids):
            expected = sorted(range(40), key=lambda j: (-round(scores[i, j], 5), doc_ids[j]))[:10]
            assert list(run_[qid]) == [doc_ids[j] for j in expected]
            np.testing.assert_allclose([run_[qid][doc_ids[j]] for j in expected], scores[i, expected], atol=1e-5)
    base = retrieve(Condition("base"), docs, doc_ids, doc_langs, queries, qids, ["en"] * 5, k=3)
    assert list(base["q0"])[:2] == ["d03", "d07"]


def test_shift_sweep_equals_one_retrieval_per_alpha_ties_included():
    """The DDTP part's SHIFT runs from one score matrix (retrieval.shift_sweep) = retrieve at each alpha (a FAISS
    search of the shifted, normalised documents): same documents in the same order, exact ties (duplicated
    documents) by doc id, scores to float rounding; queries in the source language and in a re-based one, a
    document language without a vector left unshifted."""
    from mlirkit.benchmark.retrieval import Condition, retrieve, shift_sweep
    from tests.helpers import aligned_shift

    rng = np.random.default_rng(5)
    docs = rng.standard_normal((90, 8)).astype(np.float32)
    docs[60:75] = docs[:15]  # exact duplicates: tied scores
    doc_langs = [("en", "de", "fr", "ja")[i % 4] for i in range(90)]  # ja: no vector
    doc_langs[60:75] = doc_langs[:15]
    doc_ids = [f"d{i:02d}" for i in range(90)][::-1]
    queries = rng.standard_normal((12, 8)).astype(np.float32)
    q_langs = ["en", "de"] * 6
    qids = [f"q{i}" for i in range(12)]
    t = aligned_shift(rng.standard_normal((6, 8)), {"de": rng.standard_normal((6, 8)),
                                                   "fr": rng.standard_normal((6, 8))}, "en", encoder={"class": "x"})
    alphas = (0.1, 0.5, 0.9, 1.0)
    swept = shift_sweep(t, alphas, docs, doc_ids, doc_langs, queries, qids, q_langs, 30)
    ties = 0
    for alpha, run_ in zip(alphas, swept):
        want = retrieve(Condition("shift", "s", alpha, t), docs, doc_ids, doc_langs, queries, qids, q_langs, 30)
        assert list(run_) == list(want)  # the queries in the same order
        for q in qids:
            assert list(run_[q]) == list(want[q])
            np.testing.assert_allclose(list(run_[q].values()), list(want[q].values()), atol=1e-6)
            scores = list(run_[q].values())
            ties += sum(a == b for a, b in zip(scores, scores[1:]))
    assert ties > 0


def test_shift_is_rebased_for_other_query_languages():
    from mlirkit.benchmark.retrieval import transform_for_query_lang
    from tests.helpers import aligned_shift

    rng = np.random.default_rng(0)
    t = aligned_shift(rng.standard_normal((4, 3)), {"de": rng.standard_normal((4, 3)),
                                                                 "fr": rng.standard_normal((4, 3))}, "en",
                                  encoder={"class": "x"})
    assert transform_for_query_lang(t, "en") is t
    de = transform_for_query_lang(t, "de")
    np.testing.assert_allclose(de.params_["fr"], t.params_["fr"] - t.params_["de"], atol=1e-6)
    np.testing.assert_allclose(de.params_["en"], -t.params_["de"], atol=1e-6)
    with pytest.raises(MlirkitError, match="no vector for the query language 'ja'"):
        transform_for_query_lang(t, "ja")


# ---------------------------------------------------------------------------- data selection
def test_parallel_pairs_are_shared_evenly_and_deterministic():
    rows = make_rows(n_groups=40)
    ps = load_parallel("ood", ["setA", "setB"], source_lang="en", target_langs=["en", "de", "fr", "ja"],
                       pairs_per_lang=30, rows=rows)
    assert ps.pairs == {"de": 30, "fr": 30}  # ja: no pairs (warned), en: the source
    assert ps.by_source == {"setA": {"de": 15, "fr": 15}, "setB": {"de": 15, "fr": 15}}
    for lang, (tgt, src) in ps.alignment.items():
        assert all(ps.langs[i] == lang for i in tgt) and all(ps.langs[i] == "en" for i in src)
    # same groups for every language: the English texts are shared
    assert len(ps.rows_of("en")) == len(set(ps.alignment["de"][1]) | set(ps.alignment["fr"][1]))
    again = load_parallel("ood", ["setA", "setB"], source_lang="en", target_langs=["de", "fr", "ja"],
                          pairs_per_lang=30, rows=make_rows(n_groups=40))
    assert again.texts == ps.texts and again.alignment == ps.alignment
    # setB has only 20 fr groups: the rest comes from setA
    more = load_parallel("ood", ["setA", "setB"], source_lang="en", target_langs=["fr"], pairs_per_lang=70, rows=rows)
    assert more.by_source == {"setB": {"fr": 20}, "setA": {"fr": 40}}
    with pytest.raises(MlirkitError, match="no translation pairs"):
        load_parallel("x", ["setA"], source_lang="en", target_langs=["ja"], pairs_per_lang=5, rows=rows)


def test_select_languages_and_quick():
    data = make_data(n_groups=30)
    only = select(data, langs=["en", "de"])
    assert {d.lang for d in only.docs} == {"en", "de"}
    assert all(set(r) <= {d.doc_id for d in only.docs} for s in only.splits.values() for r in s.qrels.values())
    quick = select(data, quick_groups=6)
    assert quick.notes["quick_groups"] == {"dev": 2, "test": 4}
    assert len(quick.docs) == 6 * 3
    assert {d.doc_id for d in quick.docs} == {d for s in quick.splits.values() for r in s.qrels.values() for d in r}
    with pytest.raises(MlirkitError, match=r"no documents of ja in synthetic.*\(languages present: de, en, fr\)"):
        select(data, langs=["en", "ja"])
    empty_dev = BenchmarkData("x", data.docs, {"dev": Split("dev", [], {}), "test": data.splits["test"]})
    with pytest.raises(MlirkitError, match="no dev queries left"):
        select(empty_dev)


# ---------------------------------------------------------------------------- config and CLI
@pytest.mark.parametrize("kw, match", [
    (dict(encoders=()), "no encoders"),
    (dict(encoders=("a", "a")), "given twice"),
    (dict(alphas=(0.5, 2.5)), "outside"),
    (dict(alphas=(0.0,)), "outside"),
    (dict(max_pairs=0), "max_pairs"),
    (dict(languages=()), "empty"),
    (dict(select_metric="map@10"), "selection metric"),
])
def test_config_errors(kw, match):
    with pytest.raises(MlirkitError, match=match):
        BenchmarkConfig(**kw)


def test_config_sweep():
    assert BenchmarkConfig().sweep == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert BenchmarkConfig(quick=True).sweep == (0.2, 0.4, 0.6, 0.8, 1.0)
    assert BenchmarkConfig(alphas=(1.0, 0.5, 0.5)).sweep == (0.5, 1.0)


def test_cli_quick_slice_writes_beside_the_main_job(tmp_path, capsys, monkeypatch):
    """--quick without --output writes runs/benchmark-quick: the main job's runs/benchmark does not stop it."""
    from mlirkit.benchmark.cli import main
    from mlirkit.base.cli import run_cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "benchmark").mkdir(parents=True)
    assert run_cli(main, ["--quiet"]) == 2
    assert "runs/benchmark already exists" in capsys.readouterr().err
    (tmp_path / "runs" / "benchmark-quick").mkdir()  # (so the slice stops before any work)
    assert run_cli(main, ["--quick", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "runs/benchmark-quick already exists" in err and "runs/benchmark " not in err


def test_cli_refuses_existing_output_and_bad_languages(tmp_path, capsys):
    from mlirkit.benchmark.cli import main
    from mlirkit.base.cli import run_cli

    (tmp_path / "out").mkdir()
    assert run_cli(main, ["--output", str(tmp_path / "out"), "--quiet"]) == 2
    assert "already exists" in capsys.readouterr().err
    rc = run_cli(main, ["--output", str(tmp_path / "o2"), "--langs", "en,xx", "--encoders", "usem",
                        "--cache-dir", str(tmp_path / "c"), "--quiet", "--quick"])
    assert rc == 2
    assert "no documents of xx in mlirkit/ddtp" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()


def test_cli_encoder_options(capsys):
    from mlirkit.benchmark.cli import build_parser, encoder_options

    args = build_parser().parse_args(["--encoders", "multilingual-e5-small-q4", "usem", "--encoder-option", "max_length=128",
                                      "--encoder-option", "quantize=int8", "--threads", "2"])
    opts = encoder_options(args)
    assert opts["multilingual-e5-small-q4"] == {"max_length": 128, "batch_size": 32, "backend": "auto",
                                                "quantize": "int8", "threads": 2}
    assert opts["usem"] == {"threads": 2}
    # the default: the fastest backend at fp32 fidelity, no int8
    default = encoder_options(build_parser().parse_args([]))
    assert default["multilingual-e5-small-q4"] == {"max_length": 256, "batch_size": 32, "backend": "auto"}
    assert default["usem"] == {}
    fp32 = encoder_options(build_parser().parse_args(["--encoder-option", "quantize=none", "--encoder-option", "backend=torch"]))
    assert fp32["multilingual-e5-small-q4"] == {"max_length": 256, "batch_size": 32, "backend": "torch"}
    ov = encoder_options(build_parser().parse_args(["--encoder-option", "backend=openvino", "--encoder-option", "precision=fp32"]))
    assert ov["multilingual-e5-small-q4"] == {"max_length": 256, "batch_size": 32, "backend": "openvino",
                                              "precision": "fp32"}
    # a key no encoder of the run takes: one error with "did you mean"; a flag per key is no option of the command
    with pytest.raises(MlirkitError, match="did you mean: max_length"):
        encoder_options(build_parser().parse_args(["--encoder-option", "max_lenght=64"]))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--max-length", "128"])
    assert "unrecognized arguments: --max-length 128" in capsys.readouterr().err


@pytest.mark.slow
def test_quick_run_on_the_bundled_benchmark(tmp_path):
    """--quick on the real bundled DDTP collection and parallel sets (FakeEncoder instead of a model)."""
    from mlirkit.benchmark.pipeline import run_benchmark

    cfg = BenchmarkConfig(encoders=("fake",), quick=True, output=tmp_path / "out", cache_dir=tmp_path / "cache",
                          plots=False, show_progress=False, n_permutations=100, xquad=None, lareqa=None)
    result = run_benchmark(cfg, encoders={"fake": FakeEncoder(dim=16, normalize=True)}, command="pytest")
    d = result.data
    assert d["benchmark"] == "mlirkit/ddtp" and sum(d["groups"].values()) == 100
    assert d["queries"]["dev"] + d["queries"]["test"] == 100 and len(d["documents_per_language"]) >= 8
    ood = result.encoders[0].parallel["ood"]
    assert ood["sources"] == ["mlirkit/parallel/libreoffice-help", "mlirkit/parallel/gettext"]
    assert all(n == 50 for n in ood["pairs"].values())
    assert (tmp_path / "out" / "report.md").is_file()


@pytest.mark.slow
def test_end_to_end_with_a_tiny_hf_model(tmp_path, tiny_encoder):
    """The same pipeline with a real (tiny, random) transformer through the HF encoder class."""
    cfg = config(tmp_path, plots=True)
    from mlirkit.benchmark.pipeline import run_benchmark

    result = run_benchmark(cfg, encoders={"fake": tiny_encoder}, data=make_data(), parallel_rows=make_rows(),
                           command="pytest")
    assert result.encoders[0].dim == tiny_encoder.dim
    assert (cfg.output / "report.md").is_file() and (cfg.output / "plots" / "fake" / "alpha-ood-test.png").is_file()
    result2 = run_benchmark(cfg.with_(output=tmp_path / "again"), encoders={"fake": tiny_encoder}, data=make_data(),
                            parallel_rows=make_rows(), command="pytest")
    assert result2.cache["texts_encoded"] == 0


def test_a_variant_never_evicts_the_default_entries(tmp_path):
    """--quick / --languages runs keep their own cache entries; the default run's stay reusable."""
    run(config(tmp_path), CountingEncoder(dim=16))
    before = sorted(p.name for p in (tmp_path / "cache").rglob("*.npy"))
    run(config(tmp_path, output=tmp_path / "o2", languages=("en", "de")), CountingEncoder(dim=16))
    after = sorted(p.name for p in (tmp_path / "cache").rglob("*.npy"))
    assert set(before) < set(after) and any("langs=de+en" in n for n in after)
    enc = CountingEncoder(dim=16)
    run(config(tmp_path, output=tmp_path / "o3"), enc)
    assert enc.texts == {"doc": 0, "query": 0}


def test_queries_in_two_languages(tmp_path):
    """German queries next to English ones: SHIFT is re-based on German for them, per-language tables."""
    data = make_data()
    for split in data.splits.values():
        for q in list(split.queries):
            qid = q.query_id.replace("/en", "/de")
            split.queries.append(Query(qid, q.text, "de"))
            split.qrels[qid] = dict(split.qrels[q.query_id])
    result = run(config(tmp_path), FakeEncoder(dim=32, lang_strength=1.0, normalize=True), data)
    test = result.encoders[0].test
    assert test.info["query_languages"] == {"de": 16, "en": 16}
    assert {"query language de", "query language en"} <= set(test.per_language)
    header = (tmp_path / "out" / "report.md").read_text().split("## Main table (test split)")[1].split("\n")[2]
    cells = [c.strip() for c in header.split("|")]
    assert cells[cells.index("nDCG@20") + 1] == "nDCG@20 (micro)"  # macro over de/en, micro beside it
    assert test.info["test_unit"]["unit"] == "query"  # plain Query records: no groups


def test_translated_queries_are_tested_per_description(tmp_path):
    """Topics whose queries carry a group (ParallelQuery, as mlirkit/ddtp/*): the paired tests move the
    translations of one description together, and the report says so."""
    data = make_data()
    for split in data.splits.values():
        queries = list(split.queries)
        split.queries.clear()
        for q in queries:
            group = q.query_id.split("/")[1]
            split.queries.append(ParallelQuery(q.query_id, q.text, "en", group))
            qid = q.query_id.replace("/en", "/de")
            split.queries.append(ParallelQuery(qid, q.text, "de", group))
            split.qrels[qid] = dict(split.qrels[q.query_id])
    assert data.splits["test"].query_groups["q/g001/de"] == data.splits["test"].query_groups["q/g001/en"] == "g001"
    result = run(config(tmp_path), FakeEncoder(dim=32, lang_strength=1.0, normalize=True), data)
    test = result.encoders[0].test
    assert test.info["test_unit"] == {"unit": "query group", "source": "mapping", "units": 16, "queries": 32,
                                      "sizes": {2: 16}}
    assert test.significance and all(c.n_units == 16 and c.unit == "query group" for c in test.significance)
    assert "over 16 query groups (32 queries, 2 per group)" in (tmp_path / "out" / "report.md").read_text()
