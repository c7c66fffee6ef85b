"""Index-time vs post-hoc transformation (bit for bit), ShiftedFaissIndexer, Pyserini-style indexes."""
from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc, Query
from mlirkit.shift import ShiftedFaissIndexer
from mlirkit.transforms import load_transform, save_transform
from tests.helpers import fit_from_groups
from mlirkit.transforms.parallel import ParallelGroup
from mlirkit.shift.posthoc import apply_to_index

PAIRS = [
    ParallelGroup("1", {"en": "The ferry leaves twice a day.", "de": "Die Fähre fährt zweimal am Tag.",
                        "fr": "Le ferry part deux fois par jour."}),
    ParallelGroup("2", {"en": "Install the package with apt.", "de": "Installieren Sie das Paket mit apt.",
                        "fr": "Installez le paquet avec apt."}),
    ParallelGroup("3", {"en": "The file could not be opened.", "de": "Die Datei konnte nicht geöffnet werden.",
                        "fr": "Le fichier n'a pas pu être ouvert."}),
]
DOCS = [Doc(f"d{i}", text, lang) for i, (text, lang) in enumerate([
    ("A small library for parsing JSON.", "en"), ("Eine kleine Bibliothek zum Parsen von JSON.", "de"),
    ("Une petite bibliothèque pour analyser du JSON.", "fr"), ("Command line tool for images.", "en"),
    ("Kommandozeilenwerkzeug für Bilder.", "de"), ("Outil en ligne de commande pour images.", "fr"),
    ("Texte sans langue connue.", "und"), ("日本語のテキスト", "ja"), ("Documentation of the API.", "en")])]
QUERIES = [Query("q1", "JSON parser library", "en"), Query("q2", "Bildwerkzeug", "de")]


@pytest.fixture(scope="module")
def transforms(tiny_encoder, tmp_path_factory):
    d = tmp_path_factory.mktemp("transforms")
    out = {}
    for method in ("shift", "centering", "lir", "lsar", "leace"):
        t, _ = fit_from_groups(tiny_encoder, PAIRS, method=method, source_lang="en", rank=2)
        save_transform(t, d / f"{method}.safetensors")
        out[method] = d / f"{method}.safetensors"
    return out


def tree_digest(path):
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def comparable_meta(path):
    meta = json.loads((path / "meta.json").read_text())
    meta.pop("created")
    meta.pop("posthoc", None)
    return meta


@pytest.mark.parametrize("method,alpha", [("shift", 0.6), ("shift", {"*": 1.0, "fr": 0.3}), ("centering", 1.0),
                                          ("lir", 0.8), ("lsar", 1.0), ("leace", {"*": 1.0, "de": 0.5})])
def test_index_time_equals_posthoc_bit_for_bit(tmp_path, tiny_encoder, transforms, method, alpha):
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex
    from mlirkit.search.searcher import Searcher

    Indexer(tmp_path / "plain", tiny_encoder, save_embeddings=True, show_progress=False, chunk_size=4).index(DOCS)
    Indexer(tmp_path / "direct", tiny_encoder, transform=transforms[method], alpha=alpha, save_embeddings=True,
            show_progress=False, chunk_size=3).index(DOCS)
    before = tree_digest(tmp_path / "plain")
    stats = apply_to_index(tmp_path / "plain", transforms[method], tmp_path / "post", alpha=alpha, chunk_rows=5)
    assert tree_digest(tmp_path / "plain") == before  # input untouched
    assert stats["vectors"] == "embeddings.npy"
    if method in ("lsar", "leace"):  # one map for every row, whatever its language
        assert "missing:ja" not in stats and "unknown" not in stats
    else:
        assert stats["missing:ja"] == 1 and stats["unknown"] == 1

    a, b = DenseIndex(tmp_path / "direct"), DenseIndex(tmp_path / "post")
    assert a.indexed_vectors().tobytes() == b.indexed_vectors().tobytes()
    assert a.docids == b.docids and a.langs == b.langs
    assert np.load(tmp_path / "direct/embeddings.npy").tobytes() == np.load(tmp_path / "post/embeddings.npy").tobytes()
    assert comparable_meta(tmp_path / "direct") == comparable_meta(tmp_path / "post")
    assert (tmp_path / "direct/transform.safetensors").read_bytes() == (tmp_path / "post/transform.safetensors").read_bytes()
    assert sorted(p.name for p in (tmp_path / "direct").iterdir()) == sorted(p.name for p in (tmp_path / "post").iterdir())
    meta = json.loads((tmp_path / "post/meta.json").read_text())
    t = load_transform(transforms[method])
    assert meta["transform"]["sha256"] == t.sha256 and meta["transform"]["method"] == method
    ra = Searcher(tmp_path / "direct", tiny_encoder).search(QUERIES, k=5)
    rb = Searcher(tmp_path / "post", tiny_encoder).search(QUERIES, k=5)
    assert ra == rb

    # the vectors are exactly normalize(T(raw)) computed by hand
    raw = np.load(tmp_path / "plain/embeddings.npy")
    expected = t.transform(raw, [d.lang for d in DOCS], "doc", alpha)
    expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(b.indexed_vectors(), expected, atol=1e-6)
    # shift leaves source-language and unknown documents exactly as in the plain index
    plain = DenseIndex(tmp_path / "plain").indexed_vectors()
    for i, d in enumerate(DOCS):
        same = plain[i].tobytes() == b.indexed_vectors()[i].tobytes()
        if method == "shift":
            assert same == (d.lang in ("en", "und", "ja"))


def test_shifted_faiss_indexer_and_query_side(tmp_path, tiny_encoder, transforms):
    from mlirkit.index import DenseIndex
    from mlirkit.search.searcher import Searcher

    ShiftedFaissIndexer(tmp_path / "s", tiny_encoder, transform=transforms["shift"], alpha=0.5,
                        show_progress=False).index(DOCS)
    idx = DenseIndex(tmp_path / "s")
    assert idx.transform["method"] == "shift" and idx.transform["alpha"] == 0.5
    searcher = Searcher(tmp_path / "s", tiny_encoder)
    assert searcher.query_transform is None  # SHIFT never touches queries
    with pytest.raises(MlirkitError, match="needs a fitted transform"):
        ShiftedFaissIndexer(tmp_path / "c", tiny_encoder, transform=None)
    with pytest.raises(MlirkitError, match="alpha"):
        ShiftedFaissIndexer(tmp_path / "c", tiny_encoder, transform=transforms["shift"], alpha=2.5)
    # any fitted transform, file or estimator: the Indexer with it, byte for byte
    from mlirkit.encode import Indexer
    for method in ("centering", "lir", "lsar", "leace"):
        fitted = load_transform(transforms[method])
        ShiftedFaissIndexer(tmp_path / method, tiny_encoder, transform=fitted, show_progress=False).index(DOCS)
        Indexer(tmp_path / f"{method}2", tiny_encoder, transform=transforms[method], show_progress=False).index(DOCS)
        assert (tmp_path / method / "index").read_bytes() == (tmp_path / f"{method}2" / "index").read_bytes()
        assert DenseIndex(tmp_path / method).transform["method"] == method
    # centering's query side: the searcher applies it
    (tmp_path / "centering").rename(tmp_path / "c")
    searcher = Searcher(tmp_path / "c", tiny_encoder)
    q = searcher.encode_queries(QUERIES)
    t = load_transform(transforms["centering"])
    raw = tiny_encoder.encode_queries([x.text for x in QUERIES], ["en", "de"])
    exp = t.transform(raw, ["en", "de"], "query")
    np.testing.assert_allclose(q, exp / np.linalg.norm(exp, axis=1, keepdims=True), atol=1e-6)


def test_posthoc_on_pyserini_style_index_with_doc_langs(tmp_path, tiny_encoder, transforms, caplog):
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex

    Indexer(tmp_path / "plain", tiny_encoder, show_progress=False).index(DOCS)
    pyserini = tmp_path / "pyserini"
    pyserini.mkdir()
    for name in ("index", "docid"):
        shutil.copyfile(tmp_path / "plain" / name, pyserini / name)
    (tmp_path / "langs.tsv").write_text("".join(f"{d.doc_id}\t{d.lang}\n" for d in DOCS if d.lang != "fr"))
    with caplog.at_level("WARNING"):
        stats = apply_to_index(pyserini, transforms["shift"], tmp_path / "out", alpha=1.0,
                               doc_langs=tmp_path / "langs.tsv")
    assert "no meta.json" in caplog.text and "have no language" in caplog.text
    assert stats["vectors"] == "reconstructed"
    out = DenseIndex(tmp_path / "out")
    assert out.langs == [d.lang if d.lang != "fr" else "und" for d in DOCS]
    # reconstruction gives the indexed (normalised) vectors; the shift acts on those
    t = load_transform(transforms["shift"])
    indexed = DenseIndex(pyserini).indexed_vectors()
    exp = t.transform(indexed, out.langs, "doc")
    np.testing.assert_allclose(out.indexed_vectors(), exp / np.linalg.norm(exp, axis=1, keepdims=True), atol=1e-6)
    assert sorted(p.name for p in pyserini.iterdir()) == ["docid", "index"]


def test_posthoc_errors(tmp_path, tiny_encoder, transforms):
    from mlirkit.encode import Indexer
    from mlirkit.shift.cli import main

    Indexer(tmp_path / "shifted", tiny_encoder, transform=transforms["shift"], show_progress=False).index(DOCS)
    with pytest.raises(MlirkitError, match="transformed vectors.*embeddings.npy"):
        apply_to_index(tmp_path / "shifted", transforms["lir"], tmp_path / "o")
    Indexer(tmp_path / "plain", tiny_encoder, show_progress=False, save_embeddings=True).index(DOCS)
    with pytest.raises(MlirkitError, match="never modifies"):
        apply_to_index(tmp_path / "plain", transforms["shift"], tmp_path / "plain", overwrite=True)
    with pytest.raises(MlirkitError, match="alpha"):
        apply_to_index(tmp_path / "plain", transforms["shift"], tmp_path / "o", alpha=-1)
    with pytest.raises(MlirkitError, match="ja"):
        apply_to_index(tmp_path / "plain", transforms["shift"], tmp_path / "o", strict=True)
    assert not (tmp_path / "o").exists() and not list(tmp_path.glob(".o.tmp-*"))
    # another encoder's transform: refused, --force warns and applies
    t = load_transform(transforms["shift"])
    t.encoder = {**t.encoder, "model": "someone-else"}
    save_transform(t, tmp_path / "other.st")
    with pytest.raises(MlirkitError, match="another encoder"):
        apply_to_index(tmp_path / "plain", tmp_path / "other.st", tmp_path / "o")
    apply_to_index(tmp_path / "plain", tmp_path / "other.st", tmp_path / "o", force=True)
    # a transform of another dimension: refused even with force
    bad = load_transform(transforms["shift"])
    from mlirkit.transforms.shift_transform import ShiftTransform
    save_transform(ShiftTransform.from_tensors({"de": np.ones(bad.dim + 1)}, encoder=bad.encoder, source_lang="en"), tmp_path / "d.st")
    with pytest.raises(MlirkitError, match="dimension"):
        apply_to_index(tmp_path / "plain", tmp_path / "d.st", tmp_path / "o2", force=True)
    # the CLI end to end
    assert main(["apply", "--index", str(tmp_path / "plain"), "--transform", str(transforms["shift"]),
                 "--alpha", "0.5", "fr=1.0", "--output", str(tmp_path / "cli")]) == 0
    meta = json.loads((tmp_path / "cli/meta.json").read_text())
    assert meta["transform"]["alpha"] == {"*": 0.5, "fr": 1.0}


def test_shifted_faiss_indexer_langid_for_unlabelled_docs(tmp_path, tiny_encoder):
    from mlirkit.index import DenseIndex

    t, _ = fit_from_groups(tiny_encoder, PAIRS, method="shift", source_lang="en", fit_langid=True)
    path = save_transform(t, tmp_path / "t.st")
    docs = [Doc(d.doc_id, d.text, "und") for d in DOCS[:6]]
    idx = ShiftedFaissIndexer(tmp_path / "i", tiny_encoder, transform=path, langid_threshold=0.0,
                              show_progress=False)
    idx.index(docs)
    raw = tiny_encoder.encode_docs([d.text for d in docs], [d.lang for d in docs])
    predicted, _ = t.langid.predict(raw)
    exp = t.transform(raw, predicted, "doc")
    exp = exp / np.linalg.norm(exp, axis=1, keepdims=True)
    np.testing.assert_allclose(DenseIndex(tmp_path / "i").indexed_vectors(), exp, atol=1e-6)
    assert DenseIndex(tmp_path / "i").transform["langid"]["used"] is True
    assert sum(v for k, v in idx.counts.items() if k.startswith("langid:")) == 6  # the indexer counts them
    with pytest.raises(MlirkitError, match="no language classifier"):
        t2, _ = fit_from_groups(tiny_encoder, PAIRS, method="shift", source_lang="en")
        ShiftedFaissIndexer(tmp_path / "j", tiny_encoder, transform=save_transform(t2, tmp_path / "t2.st"),
                            langid_threshold=0.5)


def test_encode_cli_langid_equals_shifted_faiss_indexer(tmp_path, tiny_encoder, tiny_model_dir, capsys):
    """``mlirkit.encode --transform T --langid 0`` on a corpus without languages == ShiftedFaissIndexer."""
    from mlirkit.base.cli import run_cli
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.encoders import load_encoder
    from mlirkit.index import DenseIndex

    encoder = load_encoder(str(tiny_model_dir), "hf")  # the CLI's default options
    t, _ = fit_from_groups(encoder, PAIRS, method="shift", source_lang="en", fit_langid=True)
    path = save_transform(t, tmp_path / "t.st")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d.doc_id, "text": d.text}) + "\n" for d in DOCS[:6]), encoding="utf-8")
    code = run_cli(encode_main, ["--corpus", str(corpus), "--output", str(tmp_path / "cli"), "--encoder",
                                 str(tiny_model_dir), "--transform", str(path), "--langid", "0.0", "--quiet"])
    assert code == 0, capsys.readouterr().err
    docs = [Doc(d.doc_id, d.text, "und") for d in DOCS[:6]]
    ShiftedFaissIndexer(tmp_path / "api", encoder, transform=path, langid_threshold=0.0, show_progress=False).index(docs)
    cli, api = DenseIndex(tmp_path / "cli"), DenseIndex(tmp_path / "api")
    np.testing.assert_array_equal(cli.indexed_vectors(), api.indexed_vectors())
    assert cli.langs == ["und"] * 6 and cli.transform["langid"]["used"] is True
    # without --langid a document without a language is still an error
    code = run_cli(encode_main, ["--corpus", str(corpus), "--output", str(tmp_path / "x"), "--encoder",
                                 str(tiny_model_dir), "--transform", str(path), "--quiet"])
    assert code == 2 and 'missing field "lang"' in capsys.readouterr().err
