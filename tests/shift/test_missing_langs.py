"""Index languages a SHIFT transform lacks: filled from the corpus or kept, the same at index time, post hoc
and at query time, said in one line and recorded in meta.json."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.vectors import l2_normalize
from mlirkit.io.records import Doc
from mlirkit.transforms import load_transform, save_transform
from mlirkit.testing.fake_encoder import FakeEncoder
from mlirkit.transforms.hybrid import fill_missing_from_corpus
from mlirkit.transforms.shift_transform import ShiftTransform

WORDS = "ferry file package library image tool night river city paper".split()
LANG_ORDER = ["en", "de", "en", "ar", "de", "en", "ar", "und"]  # ar: no vector


def make_docs(n: int = 200) -> list[Doc]:
    rng = np.random.default_rng(2)
    langs = ["en", "de"] * 10 + [LANG_ORDER[i % len(LANG_ORDER)] for i in range(n - 20)]  # chunk 1: no ar
    return [Doc(f"d{i:03d}", " ".join(rng.choice(WORDS, size=rng.integers(2, 6))), la) for i, la in enumerate(langs)]


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    from mlirkit.encode import Indexer

    d = tmp_path_factory.mktemp("missing")
    enc = FakeEncoder()
    t = ShiftTransform.from_tensors({"de": np.random.default_rng(1).normal(scale=0.3, size=enc.dim)}, encoder=enc.fingerprint,
                       source_lang="en")
    save_transform(t, d / "shift.safetensors")
    docs = make_docs()
    Indexer(d / "plain", enc, save_embeddings=True, show_progress=False).index(docs)
    return enc, d, docs


def expected_vectors(d, docs, alpha, missing):
    raw = np.load(d / "plain/embeddings.npy")
    langs = [x.lang for x in docs]
    t = fill_missing_from_corpus(load_transform(d / "shift.safetensors"), raw, langs, policy=missing)
    return l2_normalize(t.transform(raw, langs, "doc", alpha)), t


@pytest.mark.parametrize("missing", [None, "keep"])
def test_apply_fills_or_keeps_and_says_so(bed, tmp_path, capsys, missing):
    from mlirkit.index import DenseIndex
    from mlirkit.shift.cli import main

    _, d, docs = bed
    argv = ["apply", "--index", str(d / "plain"), "--transform", str(d / "shift.safetensors"), "--alpha", "0.7",
            "--output", str(tmp_path / "out")] + ([] if missing is None else ["--missing", missing])
    assert main(argv) == 0
    captured = capsys.readouterr()
    stats = json.loads(captured.out)
    want, t = expected_vectors(d, docs, 0.7, missing)
    out = DenseIndex(tmp_path / "out")
    np.testing.assert_allclose(out.indexed_vectors(), want, atol=1e-6)
    record = out.transform["missing_languages"]
    ar = [i for i, x in enumerate(docs) if x.lang == "ar"]
    plain = DenseIndex(d / "plain").indexed_vectors()
    if missing is None:  # the default: filled from the corpus
        assert record["policy"] == "corpus" and record["filled"] == {"ar": len(ar)}
        assert stats["missing_languages"] == record and "missing:ar" not in stats
        stored = load_transform(tmp_path / "out/transform.safetensors")
        np.testing.assert_array_equal(stored.params_["ar"], t.params_["ar"])
        assert out.transform["sha256"] == stored.sha256 and out.transform["provenance"]["ar"]["from"] == "corpus"
        assert not np.allclose(out.indexed_vectors()[ar], plain[ar])
    else:
        assert record == {"policy": "keep", "filled": {}, "kept": {"ar": "policy keep"}}
        assert stats["missing:ar"] == len(ar)
        np.testing.assert_array_equal(out.indexed_vectors()[ar], plain[ar])  # unshifted
        assert (tmp_path / "out/transform.safetensors").read_bytes() == (d / "shift.safetensors").read_bytes()
    line = [x for x in captured.err.splitlines() if "no vector" in x]
    assert len(line) == 1 and ("ar filled from the corpus" if missing is None else "ar left unshifted") in line[0]


@pytest.mark.parametrize("kind", [None, "hnsw"])
@pytest.mark.parametrize("missing", [None, "keep"])
def test_index_time_equals_posthoc(bed, tmp_path, kind, missing):
    """The indexer keeps the documents of a language without a vector aside and indexes them once the corpus
    is in: the vectors, the stored transform's vectors and the record equal post-hoc apply's."""
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex
    from mlirkit.shift.posthoc import apply_to_index, fill_missing_from_index

    enc, d, docs = bed
    Indexer(tmp_path / "direct", enc, transform=d / "shift.safetensors", alpha=0.7, show_progress=False,
            chunk_size=16, index_type=kind, missing=missing).index(docs)
    step = fill_missing_from_index(d / "plain", d / "shift.safetensors", missing=missing)  # the fit step
    apply_to_index(d / "plain", step, tmp_path / "post", alpha=0.7, missing=missing)
    a, b = DenseIndex(tmp_path / "direct"), DenseIndex(tmp_path / "post")
    assert a.meta["index_type"]["name"] == (kind or "flat")
    if kind is None:
        assert a.indexed_vectors().tobytes() == b.indexed_vectors().tobytes()
    else:
        np.testing.assert_array_equal(a.faiss_index.reconstruct_n(0, len(docs)), b.indexed_vectors())
    assert a.transform["missing_languages"] == b.transform["missing_languages"]
    ta, tb = load_transform(tmp_path / "direct/transform.safetensors"), load_transform(tmp_path / "post/transform.safetensors")
    assert ta.params_.keys() == tb.params_.keys() and all(np.array_equal(ta.params_[k], tb.params_[k]) for k in ta.params_)
    assert not list((tmp_path / "direct").glob("*.f32"))  # no spool left behind


def test_query_time_fill_equals_the_filled_transform(bed):
    from mlirkit.base.errors import MlirkitError
    from mlirkit.search.query_shift import QueryTimeShift

    enc, d, docs = bed
    raw = np.load(d / "plain/embeddings.npy")
    langs = [x.lang for x in docs]
    queries = l2_normalize(np.random.default_rng(4).normal(size=(9, enc.dim))).astype(np.float32)
    qlangs = ["en", "de", "ar"] * 3
    t = load_transform(d / "shift.safetensors")
    with pytest.raises(MlirkitError, match="ar .* fit them from the corpus first"):  # the shift never fits
        QueryTimeShift(raw, langs, t)
    step = fill_missing_from_corpus(t, raw, langs)  # the fit step, then the shift
    default = QueryTimeShift(raw, langs, step)
    by_hand = QueryTimeShift(raw, langs, step, missing="keep")
    np.testing.assert_array_equal(default.scores(queries, qlangs, 0.6), by_hand.scores(queries, qlangs, 0.6))
    assert "ar" in default.langs and not default.counts  # ar queries have their own vector now
    assert default.describe(0.6)["missing_languages"]["filled"] == {"ar": langs.count("ar")}
    keep = QueryTimeShift(raw, langs, t, missing="keep")
    assert keep.describe(0.6)["docs_never_shifted"] == langs.count("ar") + langs.count("und")
    keep.scores(queries, qlangs, 0.6)
    assert keep.counts["pivot_fallback:ar"] == 3


def test_encode_cli_refuses_a_corpus_fill_per_shard(bed, tmp_path, capsys):
    from mlirkit.encode.cli import main
    from tests.helpers import assert_refused

    _, d, docs = bed
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"_id": x.doc_id, "text": x.text, "lang": x.lang}) + "\n" for x in docs))
    assert_refused(main, ["--corpus", str(corpus), "--output", str(tmp_path / "i"), "--encoder", "fake",
                          "--transform", str(d / "shift.safetensors"), "--missing", "corpus", "--num-shards", "2"],
                   capsys, tmp_path, "--num-shards 2: transform")
