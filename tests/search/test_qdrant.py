"""A Qdrant Edge shard of an index searches as the FAISS index does: export round trip, the top-10 of the five
modes (plain, index-time SHIFT, query-time SHIFT ip and cosine, one language's documents) equal to the FAISS
path, and one-line refusals."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("qdrant_edge")

from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.io.records import Doc, Query  # noqa: E402
from mlirkit.testing.fake_encoder import FakeEncoder  # noqa: E402

WORDS = "ferry file package library image tool night river city paper harbour bridge window garden".split()
LANGS = ("en", "de", "fr", "ja")  # ja: no pairs, filled from the corpus


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    from mlirkit.encode import Indexer
    from mlirkit.index.qdrant_export import export_qdrant
    from mlirkit.transforms import ShiftTransform, save_transform

    tmp = tmp_path_factory.mktemp("qdrant")
    rng = np.random.default_rng(3)
    enc = FakeEncoder(dim=24, lang_strength=0.8)
    texts = [" ".join(rng.choice(WORDS, size=4)) for _ in range(30)]
    x, langs, groups = [], [], []
    for g, text in enumerate(texts):
        for la in ("en", "de", "fr"):
            x.append(enc.encode_docs([text], [la])[0])
            langs.append(la)
            groups.append(g)
    t = ShiftTransform("en").fit(np.asarray(x), langs, groups)
    t.encoder = enc.fingerprint
    save_transform(t, tmp / "pivot.shift")
    docs = [Doc(f"{la}-{i}", " ".join([*rng.choice(WORDS, size=rng.integers(3, 7)), f"{la}{i}"]), la)
            for la in LANGS for i in range(30)]
    queries = [Query(f"q-{la}-{i}", " ".join(rng.choice(WORDS, size=3)), la) for la in LANGS for i in range(6)]
    Indexer(tmp / "plain", enc, save_embeddings=True, show_progress=False).index(docs)
    Indexer(tmp / "shift", enc, transform=tmp / "pivot.shift", alpha=0.9, save_embeddings=True,
            show_progress=False).index(docs)
    for name in ("plain", "shift"):
        export_qdrant(tmp / name, tmp / f"{name}.qdrant")
    return tmp, enc, docs, queries


def top10(results):
    return {q: [h.doc_id for h in hits] for q, hits in results.items()}


def test_export_round_trip(bed):
    from mlirkit.index import DenseIndex
    from mlirkit.index.qdrant_export import INDEXED_VECTOR, SHIFT_VECTOR
    from mlirkit.search.qdrant_searcher import QdrantShard

    tmp, *_ = bed
    index = DenseIndex(tmp / "shift")
    shard = QdrantShard(tmp / "shift.qdrant")
    records = shard.records()
    assert [int(r.id) for r in records] == list(range(len(index.docids)))
    assert [r.payload["docid"] for r in records] == index.docids
    assert [r.payload["lang"] for r in records] == index.langs
    np.testing.assert_allclose([r.vector[INDEXED_VECTOR] for r in records], index.indexed_vectors(), atol=1e-6)
    stored = np.array([r.vector[SHIFT_VECTOR] for r in records])
    np.testing.assert_allclose(stored[:, :index.dim], index.embeddings(), atol=1e-6)
    codes = stored[:, index.dim:] / shard.shard_meta["code_scale"]
    np.testing.assert_allclose(codes.sum(axis=1), 1, atol=1e-6)
    assert ((codes < 1e-6) | (codes > 1 - 1e-6)).all()
    assert [sorted(LANGS)[int(j)] for j in codes.argmax(axis=1)] == index.langs
    assert shard.meta["encoder"] == index.encoder and shard.transform == index.transform
    assert shard.shard.info().payload_schema["lang"].points == len(records)


@pytest.mark.parametrize("mode", ["plain", "index-time", "ip", "cosine", "lang", "given-transform"])
def test_top10_equals_the_faiss_path(bed, mode):
    from mlirkit.search.qdrant_searcher import QdrantSearcher
    from mlirkit.search.searcher import Searcher, search_index

    tmp, enc, docs, queries = bed
    name = "plain" if mode in ("plain", "lang", "given-transform") else "shift"
    options = {"ip": {"query_shift": "ip"}, "cosine": {"query_shift": "cosine"},  # exact: every document re-scored
               "given-transform": {"query_shift": "cosine", "transform": tmp / "pivot.shift", "alpha": 0.7}
               }.get(mode, {})
    if mode == "lang":
        import faiss

        from mlirkit.index import DenseIndex

        index = DenseIndex(tmp / "plain")
        rows = [i for i, la in enumerate(index.langs) if la == "de"]
        sub = faiss.IndexFlatIP(index.dim)
        sub.add(index.indexed_vectors()[rows])
        faiss_searcher = Searcher(tmp / "plain", enc)
        vectors = faiss_searcher.encode_queries(queries)
        want = dict(zip([q.query_id for q in queries],
                        search_index(sub, [index.docids[i] for i in rows], vectors, 10)))
        got = QdrantSearcher(tmp / "plain.qdrant", enc, lang="de").search(queries, k=10)
        assert all(h.doc_id.startswith("de-") for hits in got.values() for h in hits)
    else:
        want = Searcher(tmp / name, enc, **options).search(queries, k=10)
        got = QdrantSearcher(tmp / f"{name}.qdrant", enc, **options).search(queries, k=10)
    assert top10(got) == top10(want)
    for q in want:
        np.testing.assert_allclose([h.score for h in got[q]], [h.score for h in want[q]], atol=1e-5)


def test_refuses_another_encoder_in_one_line(bed):
    from mlirkit.search.qdrant_searcher import QdrantSearcher

    tmp, *_ = bed
    with pytest.raises(MlirkitError) as e:
        QdrantSearcher(tmp / "plain.qdrant", FakeEncoder(dim=24, lang_strength=0.3))
    assert "\n" not in str(e.value) and "plain.qdrant" in str(e.value)


def test_refuses_a_missing_field_in_one_line(bed, tmp_path):
    import shutil

    from mlirkit.search.qdrant_searcher import QdrantSearcher

    tmp, enc, *_ = bed
    broken = tmp_path / "broken"
    shutil.copytree(tmp / "plain.qdrant", broken)
    meta = json.loads((broken / "mlirkit_qdrant.json").read_text())
    del meta["vectors"]
    (broken / "mlirkit_qdrant.json").write_text(json.dumps(meta))
    with pytest.raises(MlirkitError, match="mlirkit_qdrant.json: missing field 'vectors'") as e:
        QdrantSearcher(broken, enc)
    assert "\n" not in str(e.value)
    with pytest.raises(MlirkitError, match="needs a SHIFT index or a shift transform"):
        QdrantSearcher(tmp / "plain.qdrant", enc, query_shift="ip")


def test_export_refuses_to_overwrite(bed):
    from mlirkit.index.qdrant_export import export_qdrant

    tmp, *_ = bed
    with pytest.raises(MlirkitError):
        export_qdrant(tmp / "plain", tmp / "plain.qdrant")
    export_qdrant(tmp / "plain", tmp / "plain.qdrant", overwrite=True)


def test_index_cli_writes_a_shard(bed, tmp_path, capsys):
    from mlirkit.index.cli import main
    from mlirkit.search.qdrant_searcher import is_qdrant_shard

    tmp, *_ = bed
    assert main(["qdrant", str(tmp / "shift"), "--output", str(tmp_path / "s"), "--quiet"]) == 0
    assert is_qdrant_shard(tmp_path / "s") and json.loads(capsys.readouterr().out)["documents"] == 120
    with pytest.raises(MlirkitError, match="already exists .use --overwrite"):
        main(["qdrant", str(tmp / "shift"), "--output", str(tmp_path / "s"), "--quiet"])


def test_cosine_certified_depth_equals_the_exhaustive_search(bed):
    """The cosine re-scoring stops once the k-th cosine clears the bound of the documents not fetched: the
    top 10 is the FAISS path's exhaustive one, and some queries stop before every document is fetched."""
    from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard
    from mlirkit.search.searcher import Searcher

    tmp, enc, docs, queries = bed
    shard = QdrantShard(tmp / "shift.qdrant")
    options = {"query_shift": "cosine", "transform": tmp / "pivot.shift", "alpha": 0.7}
    want = Searcher(tmp / "shift", enc, **options).search(queries, k=10)
    searcher = QdrantSearcher(shard, enc, **options)
    searcher.FIRST_DEPTH = 11  # the tiny shard: start below its 120 documents
    depths: list[list[int]] = []
    query = searcher._query

    def counting(vector, using, limit, with_vector=False):
        depths[-1].append(limit)
        return query(vector, using, limit, with_vector)

    searcher._query = counting
    got = {}
    for q in queries:
        depths.append([])
        got[q.query_id] = searcher.search([q], k=10)[q.query_id]
    del searcher._query  # no reference cycle keeps the shard open
    assert top10(got) == top10(want)
    for q in want:
        np.testing.assert_allclose([h.score for h in got[q]], [h.score for h in want[q]], atol=1e-5)
    assert any(max(d) < len(docs) for d in depths)  # certified early
    assert any(len(d) > 1 for d in depths)  # and deeper where it had to


def test_alpha_per_call_equals_a_searcher_built_with_it(bed):
    from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard

    tmp, enc, docs, queries = bed
    shard = QdrantShard(tmp / "plain.qdrant")
    options = {"query_shift": "cosine", "transform": tmp / "pivot.shift"}
    vectors = QdrantSearcher(shard, enc).encode_queries(queries)
    langs = [q.lang for q in queries]
    want = QdrantSearcher(shard, enc, alpha=0.4, **options).search_vectors(vectors, 10, langs)
    searcher = QdrantSearcher(shard, enc, **options)
    assert searcher.search_vectors(vectors, 10, langs, alpha=0.4) == want
    assert searcher.search_vectors(vectors, 10, langs) != want


def test_export_builds_the_hnsw_graph(bed):
    from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard

    tmp, enc, docs, queries = bed
    shard = QdrantShard(tmp / "plain.qdrant")
    assert shard.shard.info().indexed_vectors_count == 2 * len(docs)  # indexed and shift, every point
    assert shard.shard_meta["hnsw"]["m"] == 16
    exact = QdrantSearcher(shard, enc).search(queries, k=10)
    # below full_scan_threshold a search with hnsw_ef scans the segment: the exact top 10
    assert top10(QdrantSearcher(shard, enc, hnsw_ef=16).search(queries, k=10)) == top10(exact)


def test_a_tar_of_the_shard_restores_through_the_snapshot_reader(bed, tmp_path):
    """As far as Qdrant Edge goes (it reads snapshots, it writes none): a tar of the exported ``shard/``, unpacked by
    ``EdgeShard.unpack_snapshot`` beside the shard's mlirkit files, has the same points and graph and searches alike."""
    import shutil
    import tarfile

    import qdrant_edge as qd

    from mlirkit.index.qdrant_export import SHARD_DIR
    from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard

    tmp, enc, docs, queries = bed
    source_dir, restored_dir = tmp_path / "source", tmp_path / "restored"
    shutil.copytree(tmp / "shift.qdrant", source_dir)  # a shard directory is open once per process
    with tarfile.open(tmp_path / "shard.snapshot", "w") as tar:
        for part in sorted((source_dir / SHARD_DIR).iterdir()):
            tar.add(part, arcname=part.name)
    shutil.copytree(source_dir, restored_dir, ignore=shutil.ignore_patterns(SHARD_DIR))
    qd.EdgeShard.unpack_snapshot(str(tmp_path / "shard.snapshot"), str(restored_dir / SHARD_DIR))
    source, restored = QdrantShard(source_dir), QdrantShard(restored_dir)
    assert [(r.id, r.payload, r.vector) for r in restored.records()] == \
        [(r.id, r.payload, r.vector) for r in source.records()]
    assert restored.shard.info().indexed_vectors_count == source.shard.info().indexed_vectors_count
    options = {"query_shift": "cosine"}
    assert top10(QdrantSearcher(restored, enc, **options).search(queries, k=10)) == \
        top10(QdrantSearcher(source, enc, **options).search(queries, k=10))


def test_a_shard_open_elsewhere_is_one_line(bed, tmp_path):
    import shutil

    from mlirkit.search.qdrant_searcher import QdrantShard

    tmp, *_ = bed
    shutil.copytree(tmp / "plain.qdrant", tmp_path / "s")
    first = QdrantShard(tmp_path / "s")
    assert first.shard.info().points_count == 120
    with pytest.raises(MlirkitError, match="cannot open the Qdrant shard .* holds it open") as e:
        QdrantShard(tmp_path / "s").shard
    assert "\n" not in str(e.value)


def test_a_format_1_shard_unscaled_code_searches_alike(bed, tmp_path, monkeypatch):
    """Shards written before the language code was scaled (``code_scale`` absent: 1) search as before."""
    from mlirkit.index import qdrant_export
    from mlirkit.search.qdrant_searcher import QdrantSearcher

    tmp, enc, docs, queries = bed
    monkeypatch.setattr(qdrant_export, "CODE_SCALE", 1.0)
    qdrant_export.export_qdrant(tmp / "shift", tmp_path / "old")
    meta = json.loads((tmp_path / "old" / "mlirkit_qdrant.json").read_text())
    del meta["code_scale"]
    meta["format_version"] = 1
    (tmp_path / "old" / "mlirkit_qdrant.json").write_text(json.dumps(meta))
    for metric in ("ip", "cosine"):
        got = QdrantSearcher(tmp_path / "old", enc, query_shift=metric).search(queries, k=10)
        want = QdrantSearcher(tmp / "shift.qdrant", enc, query_shift=metric).search(queries, k=10)
        assert top10(got) == top10(want)


def test_index_cli_refuses_a_foreign_output_before_reading_the_index(tmp_path):
    from mlirkit.index.cli import main

    out = tmp_path / "s"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(MlirkitError, match="s exists but is not an mlirkit Qdrant shard directory written by mlirkit"):
        main(["qdrant", str(tmp_path / "no-such-index"), "--output", str(out), "--overwrite", "--quiet"])
    assert [p.name for p in out.iterdir()] == ["holiday.jpg"]


def _cut_segments(shard):
    for p in sorted((shard / "shard").rglob("*")):
        if p.is_file() and p.stat().st_size > 64:
            p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _empty_segments(shard):
    import shutil

    for p in (shard / "shard" / "segments").iterdir():
        shutil.rmtree(p) if p.is_dir() else p.unlink()


def _meta_change(change):
    def damage(shard):
        meta = json.loads((shard / "mlirkit_qdrant.json").read_text())
        change(meta)
        (shard / "mlirkit_qdrant.json").write_text(json.dumps(meta))
    return damage


def _meta_link(shard):
    (shard / "mlirkit_qdrant.json").unlink()
    (shard / "mlirkit_qdrant.json").symlink_to("/dev/zero")


@pytest.mark.parametrize("damage, message", [
    (_cut_segments, r"shard: cannot open the Qdrant shard \(Service runtime error"),
    (_empty_segments, "shard: holds 0 points where mlirkit_qdrant.json says 120 documents"),
    (lambda s: (s / "mlirkit_qdrant.json").write_text("[" * 100_000 + "]" * 100_000), "mlirkit_qdrant.json: not valid JSON"),
    (_meta_link, "mlirkit_qdrant.json: not a regular file"),
    (_meta_change(lambda m: m.update(doc_languages=["de\0", "en", "fr", "ja"])),
     r"field 'doc_languages\[0\]' must be a language code"),
    (_meta_change(lambda m: m.update(documents=999)), "fields 'doc_languages', 'lang_counts' and 'documents' disagree"),
    (_meta_change(lambda m: m.update(vectors=[24])), "field 'vectors' must be an object"),
    (lambda s: np.save(s / "lang_means.npy", np.array([None] * 4, dtype=object), allow_pickle=True),
     "lang_means.npy: Object arrays cannot be loaded"),
    (lambda s: np.save(s / "lang_means.npy", np.full((4, 24), np.nan)), "lang_means.npy: the language means contains NaN"),
])
def test_a_damaged_or_forged_shard_is_one_line(bed, tmp_path, damage, message):
    """Each of these ended in a traceback (qdrant-edge's bare Exception, KeyError, RecursionError, numpy's
    ValueError) or in a run of empty or NaN rankings, exit 0."""
    import shutil

    from mlirkit.search.qdrant_searcher import QdrantSearcher

    tmp, enc, _, queries = bed
    shard = tmp_path / "shift.qdrant"
    shutil.copytree(tmp / "shift.qdrant", shard)
    damage(shard)
    with pytest.raises(MlirkitError, match=message) as e:
        QdrantSearcher(shard, enc, query_shift="cosine").search(queries[:2], k=3)
    assert "\n" not in str(e.value)
