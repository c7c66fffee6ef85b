"""Index types flat / hnsw / ivf-pq: recall against exact search, round trips, meta, SHIFT before training."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.index import DenseIndex, IndexWriter
from mlirkit.index.reader import require_reconstructable
from mlirkit.index.types import INDEX_TYPES, IndexSpec
from mlirkit.base.vectors import l2_normalize

DIM = 32


pytestmark = pytest.mark.usefixtures("one_faiss_thread")


def clustered(n: int, seed: int = 0, dim: int = DIM, centers: int = 50) -> np.ndarray:
    """Unit vectors around random centres (real embeddings are clustered; uniform noise is not)."""
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centers, dim))
    x = c[rng.integers(0, centers, n)] + 0.5 * rng.standard_normal((n, dim))
    return l2_normalize(x.astype(np.float32))


def write(path, vectors, index_type, langs=None, **kw):
    ids = [f"d{i:05d}" for i in range(len(vectors))]
    langs = langs or ["en"] * len(vectors)
    with IndexWriter(path, dim=vectors.shape[1], encoder={"class": "test"}, normalized=True,
                     index_type=index_type, **kw) as w:
        for s in range(0, len(vectors), 700):  # several batches
            w.add(ids[s:s + 700], langs[s:s + 700], vectors[s:s + 700])
    return ids


def recall_at_k(approx: np.ndarray, exact: np.ndarray) -> float:
    k = exact.shape[1]
    return float(np.mean([len(set(a) & set(e)) / k for a, e in zip(approx, exact)]))


@pytest.fixture(scope="module")
def data():
    docs = clustered(4000, seed=0)
    queries = clustered(200, seed=1)
    exact = np.argsort(-(queries @ docs.T), axis=1, kind="stable")[:, :10]
    return docs, queries, exact


@pytest.mark.parametrize("spec, min_recall", [
    (IndexSpec.create("flat"), 1.0),
    (IndexSpec.create("hnsw", {"M": 16, "ef_search": 64}), 0.95),
    (IndexSpec.create("ivf-pq", {"nlist": 32, "m": 16, "nbits": 8, "nprobe": 8}), 0.6),
])
def test_recall_against_exact(tmp_path, data, spec, min_recall):
    docs, queries, exact = data
    write(tmp_path / "i", docs, spec)
    index = DenseIndex(tmp_path / "i")
    _, rows = index.faiss_index.search(queries, 10)
    r = recall_at_k(rows, exact)
    assert r >= min_recall, f"{spec.name} recall@10 {r:.3f}"
    if spec.name == "flat":
        assert r == 1.0
    meta = json.loads((tmp_path / "i" / "meta.json").read_text())
    assert meta["index_type"]["name"] == spec.name
    assert meta["index_type"]["params"] == spec.resolve(DIM, len(docs)).params
    # search settings are stored in the FAISS file, so Pyserini (faiss.read_index) gets them too
    import faiss
    raw = faiss.read_index(str(tmp_path / "i" / "index"))
    if spec.name == "hnsw":
        assert raw.hnsw.efSearch == 64 and meta["index_type"]["factory"] == "HNSW16,Flat"
    if spec.name == "ivf-pq":
        assert raw.nprobe == 8 and raw.nlist == 32 and raw.pq.M == 16
        assert meta["index_type"]["factory"] == "IVF32,PQ16x8" and meta["index_type"]["trained_on"] == 4000


@pytest.mark.parametrize("name", ["flat", "hnsw", "ivf-pq"])
def test_mmap_round_trip_same_results(tmp_path, data, name):
    docs, queries, _ = data
    spec = IndexSpec.create(name, {"nlist": 16, "m": 8} if name == "ivf-pq" else {})
    write(tmp_path / "i", docs, spec)
    d1, i1 = DenseIndex(tmp_path / "i").faiss_index.search(queries, 10)
    d2, i2 = DenseIndex(tmp_path / "i", mmap=True).faiss_index.search(queries, 10)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)
    assert DenseIndex(tmp_path / "i").index_spec.name == name


def test_ivfpq_writer_equals_faiss_on_the_given_vectors(tmp_path, data):
    """The writer trains on (a seeded sample of) exactly the vectors it was given."""
    import faiss

    docs, queries, _ = data
    spec = IndexSpec.create("ivf-pq", {"nlist": 16, "m": 8, "nprobe": 4, "train_size": 2000})
    write(tmp_path / "i", docs, spec)
    manual = faiss.index_factory(DIM, "IVF16,PQ8x8", faiss.METRIC_INNER_PRODUCT)
    manual.do_polysemous_training = False
    sample = np.sort(np.random.default_rng(0).choice(len(docs), size=2000, replace=False))
    manual.train(docs[sample])
    manual.add(docs)
    manual.nprobe = 4
    d1, i1 = DenseIndex(tmp_path / "i").faiss_index.search(queries, 10)
    d2, i2 = manual.search(queries, 10)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(d1, d2, atol=1e-6)
    assert json.loads((tmp_path / "i" / "meta.json").read_text())["index_type"]["trained_on"] == 2000
    assert sorted(p.name for p in (tmp_path / "i").iterdir()) == ["docid", "index", "langs", "meta.json"]


def test_shift_is_applied_before_quantiser_training(tmp_path):
    """With a transform, ivf-pq codes approximate normalize(T(f(d))), not normalize(f(d))."""
    import faiss

    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc
    from mlirkit.transforms import ShiftTransform, save_transform
    from mlirkit.testing.fake_encoder import FakeEncoder

    encoder = FakeEncoder(dim=16, lang_strength=2.0)
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    langs = ["en", "de", "fr"]
    docs = [Doc(f"d{i}", " ".join(rng.choice(words, 4)), langs[i % 3]) for i in range(1500)]
    raw = encoder.encode_docs([d.text for d in docs], [d.lang for d in docs])
    by_lang = {lang: raw[[i for i, d in enumerate(docs) if d.lang == lang]].mean(0) for lang in langs}
    t = ShiftTransform.from_tensors({lang: by_lang[lang] - by_lang["en"] for lang in ("de", "fr")},
                       encoder=encoder.fingerprint, source_lang="en")
    save_transform(t, tmp_path / "t.safetensors")
    spec = IndexSpec.create("ivf-pq", {"nlist": 8, "m": 8, "nbits": 6})
    Indexer(tmp_path / "i", encoder, transform=tmp_path / "t.safetensors", show_progress=False,
            index_type=spec, save_embeddings=True).index(docs)
    index = DenseIndex(tmp_path / "i")
    assert index.meta["transform"]["method"] == "shift" and index.meta["index_type"]["name"] == "ivf-pq"
    np.testing.assert_array_equal(index.embeddings(), raw)
    ivf = faiss.extract_index_ivf(index.faiss_index)
    ivf.make_direct_map()
    decoded = np.stack([ivf.reconstruct(i) for i in range(len(docs))])
    shifted = l2_normalize(t.transform(raw, [d.lang for d in docs], "doc"))
    err_shifted = np.linalg.norm(decoded - shifted, axis=1).mean()
    err_raw = np.linalg.norm(decoded - l2_normalize(raw), axis=1).mean()
    assert err_shifted < 0.5 * err_raw, (err_shifted, err_raw)


def test_require_reconstructable(tmp_path, data):
    docs, _, _ = data
    for name in ("flat", "hnsw"):
        write(tmp_path / name, docs[:300], name)
        require_reconstructable(DenseIndex(tmp_path / name))
        np.testing.assert_allclose(DenseIndex(tmp_path / name).indexed_vectors(), docs[:300], atol=1e-6)
    spec = IndexSpec.create("ivf-pq", {"nlist": 4, "m": 8, "nbits": 4})
    write(tmp_path / "pq", docs[:300], spec)
    with pytest.raises(MlirkitError, match=r"ivf-pq index holds compressed vectors.*rebuild from embeddings.npy, "
                                           r"which this index lacks: re-encode with save_embeddings=True \(and transform\)"):
        require_reconstructable(tmp_path / "pq")
    with pytest.raises(MlirkitError, match="rebuild from embeddings.npy"):
        DenseIndex(tmp_path / "pq").indexed_vectors()
    write(tmp_path / "pq2", docs[:300], spec, save_embeddings=True)
    with pytest.raises(MlirkitError, match=r"rebuild from embeddings.npy \(the untransformed vectors, present in"):
        require_reconstructable(DenseIndex(tmp_path / "pq2"))


def test_spec_parsing_and_errors():
    assert IndexSpec.parse("hnsw", ["M=8", "ef_search=20"]).params == {"M": 8, "ef_construction": 200, "ef_search": 20}
    assert IndexSpec.coerce(None).name == "flat"
    assert IndexSpec.coerce({"name": "hnsw", "params": {"M": 4}}).params["M"] == 4
    resolved = IndexSpec.create("ivf-pq").resolve(384, 1_000_000)
    assert resolved.params["nlist"] == 4000 and resolved.params["m"] == 96 and resolved.params["nprobe"] == 32
    assert IndexSpec.create("ivf-pq").resolve(768, 10_000).params == {
        "nlist": 256, "m": 192, "nbits": 8, "nprobe": 32, "train_size": 100_000}
    with pytest.raises(MlirkitError, match="no parameter 'ef_serch'.*did you mean: ef_search"):
        IndexSpec.parse("hnsw", ["ef_serch=3"])
    with pytest.raises(MlirkitError, match="is not KEY=VALUE"):
        IndexSpec.parse("hnsw", ["M"])
    with pytest.raises(MlirkitError, match="M='x': expected int"):
        IndexSpec.parse("hnsw", ["M=x"])
    with pytest.raises(MlirkitError, match="M=1 must be >= 2"):
        IndexSpec.parse("hnsw", ["M=1"])
    with pytest.raises(MlirkitError, match="unknown index type 'hsnw'.*did you mean: hnsw"):
        IndexSpec.create("hsnw")
    with pytest.raises(MlirkitError, match="m=5 does not divide the dimension 32"):
        IndexSpec.create("ivf-pq", {"m": 5}).resolve(32, 1000)
    with pytest.raises(MlirkitError, match="nlist=64 cells but only 50 training vectors"):
        IndexSpec.create("ivf-pq", {"nlist": 64}).resolve(32, 50)
    with pytest.raises(MlirkitError, match="100 training vectors for 256 codes"):
        IndexSpec.create("ivf-pq", {"nlist": 2}).resolve(32, 100)
    assert INDEX_TYPES.names() == ["flat", "hnsw", "ivf-pq"]


def test_too_few_vectors_for_ivfpq_fails_cleanly(tmp_path, data):
    docs, _, _ = data
    with pytest.raises(MlirkitError, match="training vectors for 256 codes"):
        write(tmp_path / "i", docs[:100], IndexSpec.create("ivf-pq", {"nlist": 2}))
    assert list(tmp_path.iterdir()) == []


def test_memory_model_matches_file_sizes(tmp_path, data):
    """bytes_per_doc * n + fixed is within 10% of the FAISS file (what is loaded into memory)."""
    docs, _, _ = data
    for spec in (IndexSpec.create("flat"), IndexSpec.create("hnsw", {"M": 16}),
                 IndexSpec.create("ivf-pq", {"nlist": 16, "m": 8})):
        write(tmp_path / spec.name, docs, spec)
        resolved = DenseIndex(tmp_path / spec.name).index_spec
        model = resolved.bytes_per_doc(DIM) * len(docs) + resolved.fixed_bytes(DIM)
        size = (tmp_path / spec.name / "index").stat().st_size
        assert abs(model - size) / size < 0.1, (spec.name, model, size)


@pytest.mark.slow
@pytest.mark.jvm
@pytest.mark.parametrize("name", ["hnsw", "ivf-pq"])
def test_pyserini_faiss_searcher_opens_approximate_indexes(tmp_path, name):
    """Pyserini's FaissSearcher reads any FAISS file: same hits as mlirkit's Searcher, settings from the file."""
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc, Query
    from mlirkit.pyserini import boot_jvm
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.search import Searcher
    from mlirkit.testing.fake_encoder import FakeEncoder

    boot_jvm()
    from pyserini.search.faiss import FaissSearcher

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(80)]
    docs = [Doc(f"d{i}", " ".join(rng.choice(words, 5)), "en") for i in range(400)]
    queries = [Query(f"q{i}", " ".join(rng.choice(words, 3)), "en") for i in range(10)]
    encoder = FakeEncoder(lang_strength=0.0)  # Pyserini's query encoder passes no language
    spec = IndexSpec.create(name, {"nlist": 4, "m": 4, "nbits": 4, "nprobe": 2} if name == "ivf-pq" else {"M": 8})
    Indexer(tmp_path / "i", encoder, index_type=spec, show_progress=False).index(docs)
    ours = Searcher(tmp_path / "i", encoder).search(queries, k=10)
    theirs = FaissSearcher(str(tmp_path / "i"), MlirkitQueryEncoder(encoder=encoder)).batch_search(
        [q.text for q in queries], [q.query_id for q in queries], k=10)
    for q in queries:
        assert {h.docid for h in theirs[q.query_id]} == {h.doc_id for h in ours[q.query_id]}
