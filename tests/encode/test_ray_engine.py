"""Ray encoding on a local 2-CPU cluster: same index as one process, document for document, exactly once."""
from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.index import DenseIndex
from mlirkit.io.records import Doc
from mlirkit.testing.fake_encoder import FakeEncoder

from tests.helpers import in_ray_child

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

WORDS = "ferry harbour island winter wind morning boat pier ticket storm lighthouse bridge river".split()
LANGS = ["en", "de", "fr", "ja"]


@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def make_docs(n: int) -> list[Doc]:
    rng = np.random.default_rng(0)
    return [Doc(f"d{i:04d}", " ".join(rng.choice(WORDS, size=rng.integers(2, 9))), LANGS[i % 4]) for i in range(n)]


def assert_same(a, b, atol=0.0):
    a, b = DenseIndex(a), DenseIndex(b)
    assert a.docids == b.docids and a.langs == b.langs
    np.testing.assert_allclose(a.indexed_vectors(), b.indexed_vectors(), atol=atol, rtol=0)
    for key in ("encoder", "transform", "count", "lang_counts", "dim", "normalized", "index_type", "encoder_name"):
        assert a.meta.get(key) == b.meta.get(key), key
    assert a.has_embeddings == b.has_embeddings
    if a.has_embeddings:
        np.testing.assert_allclose(a.embeddings(), b.embeddings(), atol=atol, rtol=0)


@in_ray_child
def test_ray_equals_single_process_with_shift_and_crash(tmp_path, ray_cluster):
    from mlirkit.encode import Indexer
    from mlirkit.encode.ray_engine import RayOptions, encode_with_ray
    from mlirkit.transforms import ShiftTransform, save_transform

    encoder = FakeEncoder()
    rng = np.random.default_rng(1)
    t = ShiftTransform.from_tensors({lang: rng.standard_normal(16).astype(np.float32) for lang in ("de", "fr", "ja")},
                       encoder=encoder.fingerprint, source_lang="en")
    save_transform(t, tmp_path / "t.safetensors")
    docs = make_docs(230)
    meta = {"encoder_name": "fake", "encoder_options": {}}
    Indexer(tmp_path / "single", encoder, transform=tmp_path / "t.safetensors", alpha=0.7, save_embeddings=True,
            show_progress=False, encoder_name="fake", encoder_options={}).index(docs)
    marker = tmp_path / "crashed"
    summary = encode_with_ray(iter(docs), tmp_path / "ray", make_encoder=partial(FakeEncoder), transform=tmp_path / "t.safetensors",
                              alpha=0.7, save_embeddings=True, options=RayOptions(num_workers=2, block_size=40),
                              show_progress=False, _crash_once_marker=str(marker), **meta)
    assert marker.exists(), "the test hook did not kill a worker"
    assert summary["documents"] == 230 and summary["blocks"] == 6
    assert summary["retried_blocks_skipped"] >= 1, "the retried block did not find its finished shard"
    assert_same(tmp_path / "single", tmp_path / "ray")
    assert (tmp_path / "ray" / "transform.safetensors").read_bytes() == (tmp_path / "t.safetensors").read_bytes()
    assert DenseIndex(tmp_path / "ray").meta["engine"]["name"] == "ray"
    assert not list(tmp_path.glob(".ray.ray-shards-*")), "shards left behind"


@in_ray_child
def test_ray_ivfpq_trained_once_on_all(tmp_path, ray_cluster):
    from mlirkit.encode import Indexer
    from mlirkit.encode.ray_engine import RayOptions, encode_with_ray
    from mlirkit.index.types import IndexSpec

    spec = IndexSpec.create("ivf-pq", {"nlist": 4, "m": 4, "nbits": 4})
    docs = make_docs(300)
    Indexer(tmp_path / "single", FakeEncoder(), show_progress=False, index_type=spec,
            encoder_name="fake", encoder_options={}).index(docs)
    encode_with_ray(docs, tmp_path / "ray", make_encoder=FakeEncoder, encoder_name="fake", encoder_options={},
                    index_type=spec, options=RayOptions(num_workers=2, block_size=70), show_progress=False)
    a, b = DenseIndex(tmp_path / "single"), DenseIndex(tmp_path / "ray")
    assert a.docids == b.docids and a.meta["index_type"] == b.meta["index_type"]
    q = FakeEncoder().encode_queries(["ferry harbour", "storm bridge river"])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    np.testing.assert_array_equal(a.faiss_index.search(q, 5)[1], b.faiss_index.search(q, 5)[1])


@in_ray_child
def test_ray_refusals(tmp_path, ray_cluster):
    from mlirkit.encode.ray_engine import RayOptions, check_tiling, encode_with_ray

    with pytest.raises(MlirkitError, match="no documents"):
        encode_with_ray(iter([]), tmp_path / "r", make_encoder=FakeEncoder, show_progress=False)
    with pytest.raises(MlirkitError, match="^num_workers must be >= 1"):
        encode_with_ray(iter([]), tmp_path / "r", make_encoder=FakeEncoder, options=RayOptions(num_workers=0))
    with pytest.raises(MlirkitError, match="gap at corpus row 5"):
        check_tiling([{"start": 0, "stop": 5}, {"start": 6, "stop": 9}], 9)
    with pytest.raises(MlirkitError, match="overlap at corpus row 3"):
        check_tiling([{"start": 0, "stop": 5}, {"start": 3, "stop": 9}], 9)
    with pytest.raises(MlirkitError, match="covered 5 of 9"):
        check_tiling([{"start": 0, "stop": 5}], 9)
    # a range reported twice (a retried task) counts once
    assert len(check_tiling([{"start": 5, "stop": 9}, {"start": 0, "stop": 5}, {"start": 0, "stop": 5}], 9)) == 2
    assert list(tmp_path.iterdir()) == []


@in_ray_child
def test_ray_cli_equals_local_cli(tmp_path, tiny_model_dir, capsys):
    """``--engine ray`` through the CLI (it starts and stops its own local cluster) with the tiny HF model."""
    from mlirkit.base.cli import run_cli
    from mlirkit.encode.cli import main as encode_main

    if ray.is_initialized():
        ray.shutdown()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d.doc_id, "text": d.text, "lang": d.lang}) + "\n"
                              for d in make_docs(45)), encoding="utf-8")
    common = ["--corpus", str(corpus), "--encoder", str(tiny_model_dir), "--encoder-option", "max_length=16", "--quiet",
              "--save-embeddings"]
    assert run_cli(encode_main, [*common, "--output", str(tmp_path / "local")]) == 0
    capsys.readouterr()
    code = run_cli(encode_main, [*common, "--output", str(tmp_path / "ray"), "--engine", "ray", "--num-workers", "2",
                                 "--block-size", "10"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["blocks"] == 5
    assert_same(tmp_path / "local", tmp_path / "ray", atol=1e-5)


@in_ray_child
def test_ray_actor_user_error_is_one_line(tmp_path, ray_cluster):
    from mlirkit.encode.ray_engine import encode_with_ray, encoder_factory

    with pytest.raises(MlirkitError, match=r"^unknown encoder '.*no-such-model': no such directory") as info:
        encode_with_ray(make_docs(5), tmp_path / "r", make_encoder=encoder_factory(str(tmp_path / "no-such-model")),
                        show_progress=False)
    assert "Traceback" not in str(info.value)
    assert list(tmp_path.iterdir()) == []
