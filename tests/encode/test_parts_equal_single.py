"""An encode that sees part of the corpus at a time (``--num-shards``, Ray) gives the vectors of a
single-process encode with the same transform, or refuses with one line before anything is encoded: it cannot
fill the languages a transform lacks from the whole corpus (a single-process encode does, by default)."""
from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.encode.cli import main as encode_main
from mlirkit.index import DenseIndex
from mlirkit.transforms import ShiftTransform, save_transform
from tests.helpers import in_ray_child

LANGS = ["en", "de", "fr", "ja"]


def corpus(tmp_path, n=60):
    rng = np.random.default_rng(0)
    words = "ferry file package library image tool night river city paper".split()
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": f"d{i:03d}", "text": " ".join(rng.choice(words, size=4)),
                                        "lang": LANGS[i % 4]}) + "\n" for i in range(n)))
    return path


def shift(tmp_path, fingerprint, dim, langs):
    rng = np.random.default_rng(1)
    t = ShiftTransform.from_tensors({la: 0.1 * rng.standard_normal(dim).astype(np.float32) for la in langs},
                                    encoder=fingerprint, source_lang="en")
    return save_transform(t, tmp_path / f"shift-{'-'.join(langs)}.safetensors")


def same_vectors(a, b, atol=0.0):
    """Same documents, vectors (``atol``: the HF encoder's float32 output moves by a few ulps with the batch a
    text is padded in; the transform is row-wise) and transform record, the languages kept included."""
    a, b = DenseIndex(a), DenseIndex(b)
    assert a.docids == b.docids and a.langs == b.langs
    np.testing.assert_allclose(a.indexed_vectors(), b.indexed_vectors(), atol=atol, rtol=0)
    assert a.transform == b.transform


def encode(tmp_path, tiny_model_dir, capsys, out, *extra):
    code = run_cli(encode_main, ["--corpus", str(corpus(tmp_path)), "--output", str(tmp_path / out), "--encoder",
                                 str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=64", "--quiet", *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("langs, missing", [(("de", "fr", "ja"), []), (("de", "fr"), ["--missing", "keep"])])
def test_shards_merged_equal_a_single_process_encode(tmp_path, tiny_model_dir, tiny_encoder, capsys, langs, missing):
    from mlirkit.index.merge import merge_indexes

    t = shift(tmp_path, tiny_encoder.fingerprint, tiny_encoder.dim, langs)
    assert encode(tmp_path, tiny_model_dir, capsys, "single", "--transform", str(t), *missing)[0] == 0
    for shard in (0, 1):
        code, err = encode(tmp_path, tiny_model_dir, capsys, f"shard{shard}", "--transform", str(t), *missing,
                           "--shard-id", str(shard), "--num-shards", "2")
        assert code == 0, err
    merge_indexes([tmp_path / "shard0", tmp_path / "shard1"], tmp_path / "merged")
    same_vectors(tmp_path / "single", tmp_path / "merged", atol=1e-7)


def test_shards_refuse_a_fill_they_cannot_do(tmp_path, tiny_model_dir, tiny_encoder, capsys, monkeypatch):
    import mlirkit.encoders as encoders

    t = shift(tmp_path, tiny_encoder.fingerprint, tiny_encoder.dim, ("de", "fr"))  # no ja vector
    loaded = []
    real = encoders.load_encoder
    monkeypatch.setattr(encoders, "load_encoder", lambda *a, **k: loaded.append(a) or real(*a, **k))
    code, err = encode(tmp_path, tiny_model_dir, capsys, "shard0", "--transform", str(t), "--shard-id", "0",
                       "--num-shards", "2")
    assert code == 2 and err.count("\n") == 1 and loaded == []  # before any model loads
    assert "--num-shards 2: transform" in err and "no vector for ja (15 documents)" in err and "--missing keep" in err
    assert not (tmp_path / "shard0").exists()


@in_ray_child
def test_ray_equals_a_single_process_encode_or_refuses(tmp_path, tiny_encoder):
    ray = pytest.importorskip("ray")
    from mlirkit.base.errors import MlirkitError
    from mlirkit.encode import Indexer
    from mlirkit.encode.ray_engine import RayOptions, encode_with_ray
    from mlirkit.io.corpus import read_corpus
    from mlirkit.testing.fake_encoder import FakeEncoder

    enc = FakeEncoder()
    docs = list(read_corpus(str(corpus(tmp_path))))
    full = shift(tmp_path, enc.fingerprint, enc.dim, ("de", "fr", "ja"))
    partial_t = shift(tmp_path, enc.fingerprint, enc.dim, ("de", "fr"))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        for t, options in ((full, {}), (partial_t, {"missing": "keep"})):
            name = t.stem + "-" + options.get("missing", "default")
            Indexer(tmp_path / f"single-{name}", enc, transform=t, show_progress=False,
                    missing=options.get("missing")).index(docs)
            encode_with_ray(iter(docs), tmp_path / f"ray-{name}", make_encoder=partial(FakeEncoder), transform=t,
                            options=RayOptions(num_workers=2, block_size=20), show_progress=False,
                            indexer_options=options)
            same_vectors(tmp_path / f"single-{name}", tmp_path / f"ray-{name}")
        with pytest.raises(MlirkitError, match=r"^Ray: transform .* no vector for ja \(15 documents\)"):
            encode_with_ray(iter(docs), tmp_path / "ray-refused", make_encoder=partial(FakeEncoder), transform=partial_t,
                            options=RayOptions(num_workers=2, block_size=20), show_progress=False)
        assert not (tmp_path / "ray-refused").exists()
    finally:
        ray.shutdown()
