"""Merging shard directories (== single-run index) and searching shards as one (IndexShards == one index)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.encode import Indexer
from mlirkit.base.errors import MlirkitError
from mlirkit.index import DenseIndex
from mlirkit.index.cli import main as index_main
from mlirkit.index.merge import merge_indexes
from mlirkit.io.records import Doc, Query
from mlirkit.search import Searcher
from mlirkit.search.sharded import ShardedIndex, open_index
from mlirkit.testing.fake_encoder import FakeEncoder

WORDS = "ferry harbour island winter wind morning boat pier ticket storm lighthouse bridge river".split()
LANGS = ["en", "de", "fr"]


pytestmark = pytest.mark.usefixtures("one_faiss_thread")


def make_docs(n: int, seed: int = 0, prefix: str = "d") -> list[Doc]:
    rng = np.random.default_rng(seed)
    return [Doc(f"{prefix}{i:03d}", " ".join(rng.choice(WORDS, size=rng.integers(2, 8))), LANGS[i % 3])
            for i in range(n)]


def queries(n: int = 15) -> list[Query]:
    rng = np.random.default_rng(7)
    return [Query(f"q{i}", " ".join(rng.choice(WORDS, size=3)), "en") for i in range(n)]


def encode(path, docs, encoder=None, shard=(0, 1), **kw):
    Indexer(path, encoder or FakeEncoder(), show_progress=False, chunk_size=17,
            extra_meta={"corpus": "c.jsonl", "shard": {"id": shard[0], "count": shard[1]}}, **kw).index(docs)
    return path


def shards_round_robin(tmp_path, docs, n, **kw):
    return [encode(tmp_path / f"s{i}", docs[i::n], shard=(i, n), **kw) for i in range(n)]


def assert_same_index(a, b):
    a, b = DenseIndex(a), DenseIndex(b)
    assert a.docids == b.docids and a.langs == b.langs
    np.testing.assert_array_equal(a.indexed_vectors(), b.indexed_vectors())
    for key in ("encoder", "dim", "normalized", "transform", "count", "lang_counts", "encoder_name", "corpus"):
        assert a.meta.get(key) == b.meta.get(key), key
    assert a.has_embeddings == b.has_embeddings
    if a.has_embeddings:
        np.testing.assert_array_equal(a.embeddings(), b.embeddings())


@pytest.mark.parametrize("n", [2, 3])
def test_merge_round_robin_shards_equals_single_run(tmp_path, n):
    docs = make_docs(50)
    single = encode(tmp_path / "single", docs, save_embeddings=True)
    shards = shards_round_robin(tmp_path, docs, n, save_embeddings=True)
    summary = merge_indexes(list(reversed(shards)), tmp_path / "merged")  # order given does not matter
    assert summary["order"] == "interleaved" and summary["documents"] == 50
    assert_same_index(single, tmp_path / "merged")
    meta = DenseIndex(tmp_path / "merged").meta
    assert meta["shard"] == {"id": 0, "count": 1} and len(meta["merged_from"]) == n


def test_merge_concatenates_other_shards(tmp_path):
    a = encode(tmp_path / "a", make_docs(10, prefix="a"))
    b = encode(tmp_path / "b", make_docs(7, seed=1, prefix="b"))
    summary = merge_indexes([b, a], tmp_path / "m")
    merged = DenseIndex(tmp_path / "m")
    assert summary["order"] == "concatenated"
    assert merged.docids == DenseIndex(b).docids + DenseIndex(a).docids
    np.testing.assert_array_equal(merged.indexed_vectors(),
                                  np.concatenate([DenseIndex(b).indexed_vectors(), DenseIndex(a).indexed_vectors()]))
    assert not merged.has_embeddings


def test_merge_with_transform_and_index_type(tmp_path):
    from mlirkit.transforms import ShiftTransform, save_transform

    encoder = FakeEncoder()
    rng = np.random.default_rng(0)
    t = ShiftTransform.from_tensors({"de": rng.standard_normal(16).astype(np.float32),
                        "fr": rng.standard_normal(16).astype(np.float32)}, encoder=encoder.fingerprint, source_lang="en")
    save_transform(t, tmp_path / "t.safetensors")
    docs = make_docs(60)
    single = encode(tmp_path / "single", docs, transform=tmp_path / "t.safetensors")
    shards = shards_round_robin(tmp_path, docs, 2, transform=tmp_path / "t.safetensors")
    merge_indexes(shards, tmp_path / "merged")
    assert_same_index(single, tmp_path / "merged")
    assert (tmp_path / "merged" / "transform.safetensors").read_bytes() == (tmp_path / "t.safetensors").read_bytes()
    # the same shards merged into an HNSW index: same vectors, graph built over all of them
    merge_indexes(shards, tmp_path / "hnsw", index_type="hnsw")
    hnsw = DenseIndex(tmp_path / "hnsw")
    assert hnsw.index_spec.name == "hnsw" and hnsw.docids == DenseIndex(single).docids
    np.testing.assert_allclose(hnsw.indexed_vectors(), DenseIndex(single).indexed_vectors(), atol=1e-6)
    # search through the merged index applies the query side as the single index does
    r1 = Searcher(single, encoder).search(queries(), k=5)
    r2 = Searcher(tmp_path / "merged", encoder).search(queries(), k=5)
    assert r1 == r2
    # a shard made with another transform (or none) is refused
    encode(tmp_path / "plain", make_docs(5, prefix="x"))
    with pytest.raises(MlirkitError, match="made with different transforms"):
        merge_indexes([shards[0], tmp_path / "plain"], tmp_path / "bad")


def test_merge_refusals(tmp_path):
    a = encode(tmp_path / "a", make_docs(10, prefix="a"))
    b = encode(tmp_path / "b", make_docs(10, prefix="b"))
    other = encode(tmp_path / "other", make_docs(5, prefix="o"), encoder=FakeEncoder(lang_strength=0.1))
    dup = encode(tmp_path / "dup", make_docs(3, prefix="a"))
    with pytest.raises(MlirkitError, match=r"made with different encoders \(encoder: lang_strength: 0.5 != 0.1\)"):
        merge_indexes([a, other], tmp_path / "m")
    with pytest.raises(MlirkitError, match="duplicate document id 'a000' in .*dup"):
        merge_indexes([a, dup], tmp_path / "m")
    with pytest.raises(MlirkitError, match="given twice"):
        merge_indexes([a, a], tmp_path / "m")
    with pytest.raises(MlirkitError, match="already exists"):
        merge_indexes([a, b], b)
    with pytest.raises(MlirkitError, match="not an index directory"):
        merge_indexes([a, tmp_path / "nothing"], tmp_path / "m")
    (tmp_path / "bare").mkdir()
    for name in ("index", "docid"):
        (tmp_path / "bare" / name).write_bytes((a / name).read_bytes())
    with pytest.raises(MlirkitError, match="has no meta.json"):
        merge_indexes([a, tmp_path / "bare"], tmp_path / "m")
    pq_docs = make_docs(300, prefix="p")
    pq = encode(tmp_path / "pq", pq_docs, index_type={"name": "ivf-pq", "params": {"nlist": 2, "m": 4, "nbits": 4}})
    with pytest.raises(MlirkitError, match="compressed \\(ivf-pq\\) shard.*encode the shards with index_type='flat' and merge with index_type='ivf-pq'"):
        merge_indexes([a, pq], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    assert not list(tmp_path.glob(".m.tmp-*"))


def test_merge_and_info_cli(tmp_path, capsys):
    docs = make_docs(40)
    shards = shards_round_robin(tmp_path, docs, 2)
    code = run_cli(index_main, ["merge", *map(str, shards), "--output", str(tmp_path / "m"), "--quiet",
                                "--index-type", "hnsw", "--index-param", "M=8"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["documents"] == 40 and json.loads(out)["order"] == "interleaved"
    assert DenseIndex(tmp_path / "m").meta["index_type"]["params"]["M"] == 8
    code = run_cli(index_main, ["info", str(tmp_path / "m")])
    info = json.loads(capsys.readouterr()[0])
    assert code == 0 and info["documents"] == 40 and info["index_type"] == "hnsw" and info["dim"] == 16
    assert info["model_bytes_per_doc"] == pytest.approx(4 * 16 + 8 * 8 + 32 / 7 + 12, abs=0.1)
    code = run_cli(index_main, ["merge", str(shards[0]), "--output", str(tmp_path / "m")])
    assert code == 2 and "already exists" in capsys.readouterr()[1]
    code = run_cli(index_main, ["merge", str(shards[0]), "--output", str(tmp_path / "x"), "--index-param", "M=3"])
    assert code == 2 and "--index-param needs --index-type" in capsys.readouterr()[1]


@pytest.mark.parametrize("mmap", [False, True])
def test_index_shards_search_equals_single_index(tmp_path, mmap):
    encoder = FakeEncoder()
    docs = make_docs(90)
    single = encode(tmp_path / "single", docs)
    parts = [encode(tmp_path / f"p{i}", docs[i * 30:(i + 1) * 30], shard=(i, 3)) for i in range(3)]
    sharded = ShardedIndex(parts, mmap=mmap, threads=1)
    assert sharded.docids == DenseIndex(single).docids
    qv = Searcher(single, encoder).encode_queries(queries(40))
    s1, r1 = DenseIndex(single).faiss_index.search(qv, 12)
    s2, r2 = sharded.search(qv, 12, batch_size=7)
    np.testing.assert_allclose(s1, s2, atol=1e-6)
    # same hits; rows may only differ among exactly tied scores
    assert [set(np.array(sharded.docids)[r]) for r in r2] == [set(np.array(sharded.docids)[r]) for r in r1] \
        or np.array_equal(r1, r2)
    assert Searcher(sharded, encoder).search(queries(40), k=10) == Searcher(single, encoder).search(queries(40), k=10)


def test_sharded_search_refusals_and_layout(tmp_path):
    a = encode(tmp_path / "a", make_docs(10, prefix="a"))
    other = encode(tmp_path / "o", make_docs(5, prefix="o"), encoder=FakeEncoder(lang_strength=0.2))
    dup = encode(tmp_path / "dup", make_docs(3, prefix="a"))
    with pytest.raises(MlirkitError, match="different encoders"):
        ShardedIndex([a, other])
    with pytest.raises(MlirkitError, match="duplicate document id"):
        ShardedIndex([a, dup])
    with pytest.raises(MlirkitError, match="no index directories"):
        ShardedIndex([])
    # a directory of shard-* subdirectories opens as its shards
    layout = tmp_path / "layout"
    docs = make_docs(20)
    for i in range(2):
        encode(layout / f"shard-{i:03d}", docs[i * 10:(i + 1) * 10])
    opened = open_index(layout)
    assert isinstance(opened, ShardedIndex) and opened.docids == [d.doc_id for d in docs]
    assert not isinstance(open_index(a), ShardedIndex)


def test_approximate_shards_search_and_cli_refusal(tmp_path, capsys):
    from mlirkit.search.cli import main as search_main
    
    docs = make_docs(60)
    single = encode(tmp_path / "single", docs, index_type="hnsw")
    parts = [encode(tmp_path / f"p{i}", docs[i * 20:(i + 1) * 20], shard=(i, 3), index_type="hnsw") for i in range(3)]
    # 60 documents, ef_search 200: the HNSW graphs are searched exhaustively, so shards == one index
    one = Searcher(open_index([single], mmap=True, ef_search=200), FakeEncoder()).search(queries(5), k=10).to_run()
    many = Searcher(open_index(parts, mmap=True, ef_search=200), FakeEncoder()).search(queries(5), k=10).to_run()
    assert one == many
    topics = tmp_path / "q.tsv"
    topics.write_text("".join(f"{q.query_id}\t{q.text}\ten\n" for q in queries(5)), encoding="utf-8")
    # indexes from the Python API with the fake encoder do not name a loadable encoder
    code = run_cli(search_main, ["--index", *map(str, parts), "--topics", str(topics), "--output",
                                 str(tmp_path / "r.trec"), "--mmap", "--quiet"])
    assert code == 2 and "does not record its encoder" in capsys.readouterr()[1]
    assert not (tmp_path / "r.trec").exists()


def test_encode_shards_merge_search_cli_with_tiny_model(tmp_path, tiny_model_dir, capsys):
    """CLI end to end: --num-shards encode, merge == single, search over shards == search of one index."""
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.io.trec import read_run
    from mlirkit.search.cli import main as search_main

    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("".join(f"{d.doc_id}\t{d.text}\t{d.lang}\n" for d in make_docs(24)), encoding="utf-8")
    common = ["--corpus", str(corpus), "--encoder", str(tiny_model_dir), "--encoder-option", "max_length=16", "--quiet"]
    assert run_cli(encode_main, [*common, "--output", str(tmp_path / "single")]) == 0
    for i in range(2):
        assert run_cli(encode_main, [*common, "--output", str(tmp_path / f"s{i}"), "--shard-id", str(i),
                                     "--num-shards", "2"]) == 0
    assert run_cli(index_main, ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--output",
                                str(tmp_path / "merged"), "--quiet"]) == 0
    single, merged = DenseIndex(tmp_path / "single"), DenseIndex(tmp_path / "merged")
    assert merged.docids == single.docids
    np.testing.assert_allclose(merged.indexed_vectors(), single.indexed_vectors(), atol=1e-5)
    topics = tmp_path / "q.tsv"
    topics.write_text("q1\tferry harbour\ten\nq2\tstorm bridge\ten\n", encoding="utf-8")
    for name, index_args in (("one", [str(tmp_path / "single")]), ("many", [str(tmp_path / "s0"), str(tmp_path / "s1")])):
        assert run_cli(search_main, ["--index", *index_args, "--topics", str(topics), "--output",
                                     str(tmp_path / f"{name}.trec"), "--hits", "5", "--mmap", "--quiet"]) == 0
    one, many = read_run(tmp_path / "one.trec"), read_run(tmp_path / "many.trec")
    assert one.keys() == many.keys()
    for qid in one:
        assert list(one[qid]) == list(many[qid])
        np.testing.assert_allclose(list(one[qid].values()), list(many[qid].values()), atol=1e-4)
    # --index-type through the encode CLI
    assert run_cli(encode_main, [*common, "--output", str(tmp_path / "h"), "--index-type", "hnsw",
                                 "--index-param", "M=4"]) == 0
    assert DenseIndex(tmp_path / "h").meta["index_type"]["factory"] == "HNSW4,Flat"
    capsys.readouterr()
    assert run_cli(encode_main, [*common, "--output", str(tmp_path / "x"), "--index-param", "ef=3"]) == 2
    assert "has no parameter 'ef'" in capsys.readouterr()[1]
    assert run_cli(encode_main, [*common, "--output", str(tmp_path / "x"), "--num-workers", "3"]) == 2
    assert "--num-workers needs --engine ray" in capsys.readouterr()[1]
    assert not (tmp_path / "x").exists()


def _shard_layout(root, n=3, per=10):
    docs = make_docs(n * per)
    for i in range(n):
        encode(root / f"shard-{i:03d}", docs[i * per:(i + 1) * per], shard=(i, n))
    return docs


@pytest.mark.parametrize("lost", ["index", "docid"])
def test_an_incomplete_shard_is_refused_unless_skipped(tmp_path, caplog, lost):
    """A shard-* directory without its FAISS ``index`` (or ``docid``) file: refused with one line naming it and
    the missing file; with the skip option the other shards are searched and the lost documents counted."""
    docs = _shard_layout(tmp_path / "ix")
    (tmp_path / "ix" / "shard-001" / lost).unlink()
    with pytest.raises(MlirkitError, match=rf"shard .*shard-001 has no '{lost}' file.*--skip-incomplete-shards"):
        open_index(tmp_path / "ix")
    with caplog.at_level("WARNING", logger="mlirkit.search.sharded"):
        opened = open_index(tmp_path / "ix", skip_incomplete=True)
    assert opened.docids == [d.doc_id for d in docs[:10] + docs[20:]]
    warning = " ".join(r.getMessage() for r in caplog.records)
    # the documents lost: the docid file's lines, else meta.json's count
    assert "skipped 1 incomplete or missing shard(s) holding 10 document(s)" in warning


def test_a_missing_shard_is_refused_unless_skipped(tmp_path, caplog):
    """The shards' meta.json say there are 3; only 2 are there."""
    import shutil

    _shard_layout(tmp_path / "ix")
    shutil.rmtree(tmp_path / "ix" / "shard-002")
    with pytest.raises(MlirkitError, match=r"shard 2 of 3 \(meta.json 'shard' records\) is missing"):
        open_index(tmp_path / "ix")
    with caplog.at_level("WARNING", logger="mlirkit.search.sharded"):
        assert len(open_index(tmp_path / "ix", skip_incomplete=True).docids) == 20
    assert "of unknown size" in caplog.text


def test_search_cli_refuses_an_incomplete_shard_in_one_line(tmp_path, tiny_model_dir, capsys):
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.search.cli import main as search_main

    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": f"text {i}", "lang": "en"}) + "\n"
                                              for i in range(6)), "utf-8")
    enc = ["--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=32"]
    for i in range(2):
        assert run_cli(encode_main, ["--corpus", str(tmp_path / "c.jsonl"), "--output", str(tmp_path / "ix" / f"shard-{i}"),
                                     "--num-shards", "2", "--shard-id", str(i), *enc, "--quiet"]) == 0
    (tmp_path / "ix" / "shard-1" / "index").unlink()
    (tmp_path / "t.tsv").write_text("q1\ttext\ten\n", "utf-8")
    cmd = ["--index", str(tmp_path / "ix"), "--topics", str(tmp_path / "t.tsv"), "--output", str(tmp_path / "r.trec"),
           "--quiet"]
    capsys.readouterr()
    assert run_cli(search_main, cmd) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "shard-1 has no 'index' file" in err and not (tmp_path / "r.trec").exists()
    assert run_cli(search_main, [*cmd, "--skip-incomplete-shards"]) == 0
    err = capsys.readouterr().err
    assert "holding 3 document(s)" in err
    from mlirkit.io.trec import read_run

    assert {d for docs in read_run(tmp_path / "r.trec").values() for d in docs} == {"d0", "d2", "d4"}
