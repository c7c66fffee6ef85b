"""SHIFT, centering and LIR against their formulas; transform files; every refused input."""
from __future__ import annotations

from collections import Counter

import json
import struct

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import LanguageTransform, derive_source, load_transform, save_transform
from tests.helpers import aligned_shift, fitted_by_language
from mlirkit.transforms.io import read_shift_pt, sniff
from mlirkit.transforms.shift_transform import ShiftTransform

ENC = {"class": "hf", "model": "toy", "normalize": False, "doc_prefix": "passage: "}
LANGS = ["de", "fr", "ja"]


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.fixture
def planted():
    """Source embeddings and translations offset by a planted per-language vector plus noise."""
    r = rng(1)
    n, d = 4000, 16
    src = r.normal(size=(n, d)).astype(np.float32)
    offsets = {lang: r.normal(size=d).astype(np.float32) for lang in LANGS}
    tgt = {lang: (src + offsets[lang] + 0.01 * r.normal(size=(n, d))).astype(np.float32) for lang in LANGS}
    return src, tgt, offsets


# ----------------------------------------------------------------------------- SHIFT
def test_shift_vectors_equal_numpy_mean_of_differences():
    r = rng()
    src = r.normal(size=(50, 8)).astype(np.float32)
    de = r.normal(size=(50, 8)).astype(np.float32)
    t = aligned_shift(src, {"de": de}, "en", encoder=ENC)
    expected = (de.astype(np.float64) - src.astype(np.float64)).mean(axis=0)
    np.testing.assert_allclose(t.params_["de"], expected, rtol=1e-6, atol=1e-7)
    assert t.meta["pairs"] == {"de": 50}


def test_shift_with_src_index_pairs_only_matching_rows():
    r = rng()
    src = r.normal(size=(10, 4)).astype(np.float32)
    idx = np.array([1, 3, 3, 7])
    ja = r.normal(size=(4, 4)).astype(np.float32)
    t = aligned_shift(src, {"ja": (ja, idx)}, "en", encoder=ENC)
    np.testing.assert_allclose(t.params_["ja"], (ja - src[idx]).mean(0), rtol=1e-5, atol=1e-6)


def test_fit_recovers_planted_offsets(planted):
    src, tgt, offsets = planted
    t = aligned_shift(src, tgt, "en", encoder=ENC)
    for lang in LANGS:
        np.testing.assert_allclose(t.params_[lang], offsets[lang], atol=2e-3)
    shifted = t.transform(tgt["de"], ["de"] * len(src), "doc")
    assert np.abs(shifted - src).max() < 0.1  # the language offset is gone


def test_shift_apply_formula_and_alpha():
    r = rng(2)
    t = ShiftTransform.from_tensors({"de": r.normal(size=6), "fr": r.normal(size=6)}, encoder=ENC, source_lang="en")
    x = r.normal(size=(5, 6)).astype(np.float32)
    langs = ["de", "en", "fr", "und", "de"]
    out = t.transform(x, langs, "doc", alpha=0.6)
    for i, lang in enumerate(langs):
        exp = x[i] - 0.6 * t.params_[lang] if lang in ("de", "fr") else x[i]
        np.testing.assert_allclose(out[i], exp, rtol=1e-6, atol=1e-6)
    assert out.dtype == np.float32
    # per-language alpha: "*" default, override for fr
    out2 = t.transform(x, langs, "doc", alpha={"*": 0.5, "fr": 1.5})
    np.testing.assert_allclose(out2[0], x[0] - 0.5 * t.params_["de"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out2[2], x[2] - 1.5 * t.params_["fr"], rtol=1e-6, atol=1e-6)
    # without "*" the default is 1.0
    out3 = t.transform(x, langs, "doc", alpha={"fr": 0.0})
    np.testing.assert_array_equal(out3[2], x[2])
    np.testing.assert_allclose(out3[0], x[0] - t.params_["de"], rtol=1e-6, atol=1e-6)
    assert not np.shares_memory(out, x)


def test_shift_leaves_queries_source_and_unknown_bit_identical():
    r = rng(3)
    t = ShiftTransform.from_tensors({"de": r.normal(size=6)}, encoder=ENC, source_lang="en")
    x = r.normal(size=(4, 6)).astype(np.float32)
    x[0, 0] = -0.0
    q = t.transform(x, ["de"] * 4, "query", alpha=1.0)
    assert q.tobytes() == x.tobytes()
    d = t.transform(x, ["en", "und", "", "en"], "doc", alpha=2.0)
    assert d.tobytes() == x.tobytes()
    assert t.touches("doc") and not t.touches("query")


@pytest.mark.parametrize("method", ["shift", "centering", "lir"])
def test_untouched_rows_bit_identical_even_negative_zero(method):
    r = rng(11)
    embs = {l: r.normal(size=(20, 6)) for l in ["en", "de"]}
    t = {"shift": lambda: aligned_shift(embs["en"], {"de": embs["de"]}, "en", encoder=ENC),
         "centering": lambda: fitted_by_language("centering", embs, encoder=ENC),
         "lir": lambda: fitted_by_language("lir", embs, rank=2, encoder=ENC)}[method]()
    x = r.normal(size=(6, 6)).astype(np.float32)
    x[:, 0] = -0.0
    langs = ["und", "de", "ko", "de", "und", "en"]
    out = t.transform(x, langs, "doc", alpha={"*": 1.0, "de": 0.0})
    for i in (0, 1, 2, 3, 4):  # unknown, alpha 0, no parameters
        assert out[i].tobytes() == x[i].tobytes()
    assert (out[5].tobytes() == x[5].tobytes()) == (method == "shift")


def test_apply_is_independent_of_chunking_and_order():
    r = rng(4)
    t = fitted_by_language("lir", {l: r.normal(size=(30, 8)) for l in ["en", "de", "fr"]}, rank=2, encoder=ENC)
    x = r.normal(size=(101, 8)).astype(np.float32)
    langs = list(r.choice(["en", "de", "fr", "und"], size=101))
    full = t.transform(x, langs, "doc", 0.7)
    parts = np.concatenate([t.transform(x[a:a + 13], langs[a:a + 13], "doc", 0.7) for a in range(0, 101, 13)])
    assert full.tobytes() == parts.tobytes()
    t.chunk_rows = 7
    assert t.transform(x, langs, "doc", 0.7).tobytes() == full.tobytes()
    t.sub_rows = 3
    assert t.transform(x, langs, "doc", 0.7).tobytes() == full.tobytes()
    order = np.argsort(langs, kind="stable")  # sorted: one language per block, broadcast path
    sorted_out = t.transform(x[order], [langs[i] for i in order], "doc", 0.7)
    assert sorted_out.tobytes() == full[order].tobytes()
    single = np.concatenate([t.transform(x[i:i + 1], langs[i:i + 1], "doc", 0.7) for i in range(101)])
    assert single.tobytes() == full.tobytes()


def test_apply_in_place_with_out():
    r = rng(5)
    t = ShiftTransform.from_tensors({"de": r.normal(size=4)}, encoder=ENC, source_lang="en")
    x = r.normal(size=(3, 4)).astype(np.float32)
    expected = t.transform(x, ["de", "en", "de"], "doc")
    y = x.copy()
    res = t.transform(y, ["de", "en", "de"], "doc", out=y)
    assert res is y and y.tobytes() == expected.tobytes()


# ----------------------------------------------------------------------------- centering
def test_centering_means_and_apply_both_sides():
    r = rng(6)
    embs = {"en": r.normal(size=(20, 5)), "de": r.normal(loc=2.0, size=(30, 5))}
    t = fitted_by_language("centering", embs, encoder=ENC, source_lang="en")
    for lang, e in embs.items():
        np.testing.assert_allclose(t.params_[lang], e.mean(0), rtol=1e-6, atol=1e-7)
    x = r.normal(size=(3, 5)).astype(np.float32)
    for side in ("doc", "query"):
        assert t.touches(side)
        out = t.transform(x, ["en", "de", "und"], side)
        np.testing.assert_allclose(out[0], x[0] - t.params_["en"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(out[1], x[1] - t.params_["de"], rtol=1e-6, atol=1e-6)
        assert out[2].tobytes() == x[2].tobytes()
    assert t.meta["pairs"] == {"en": 20, "de": 30}


# ----------------------------------------------------------------------------- LIR
@pytest.mark.parametrize("rank", [1, 3])
def test_lir_components_are_top_right_singular_vectors_of_uncentred_matrix(rank):
    r = rng(7)
    embs = {"en": r.normal(loc=1.0, size=(40, 6)), "de": r.normal(loc=-0.5, size=(25, 6))}
    t = fitted_by_language("lir", embs, rank=rank, encoder=ENC, source_lang="en")
    x = r.normal(size=(4, 6)).astype(np.float32)
    for lang, e in embs.items():
        _, _, vt = np.linalg.svd(e, full_matrices=False)  # uncentred
        c = vt[:rank]
        # same subspace: projection matrices agree (signs of singular vectors are arbitrary)
        np.testing.assert_allclose(t.params_[lang].T @ t.params_[lang], c.T @ c, atol=1e-5)
        out = t.transform(x, [lang] * 4, "query")
        expected = x - (x @ c.T) @ c  # x' = x - sum_i (c_i . x) c_i
        np.testing.assert_allclose(out, expected, atol=1e-5)
        # the removed directions are gone
        np.testing.assert_allclose(out @ c.T, 0, atol=1e-5)
    assert t.meta["rank"] == rank


def test_lir_alpha_scales_projection():
    r = rng(8)
    t = fitted_by_language("lir", {"en": r.normal(size=(10, 4))}, encoder=ENC)
    x = r.normal(size=(2, 4)).astype(np.float32)
    c = t.params_["en"]
    np.testing.assert_allclose(t.transform(x, ["en", "en"], "doc", 0.5), x - 0.5 * (x @ c.T) @ c, atol=1e-6)


# ----------------------------------------------------------------------------- files
@pytest.mark.parametrize("method", ["shift", "centering", "lir"])
def test_save_load_roundtrip_any_name(tmp_path, method):
    r = rng(9)
    embs = {l: r.normal(size=(12, 4)).astype(np.float32) for l in ["en", "de"]}
    t = {"shift": lambda: aligned_shift(embs["en"], {"de": embs["de"]}, "en", encoder=ENC),
         "centering": lambda: fitted_by_language("centering", embs, encoder=ENC),
         "lir": lambda: fitted_by_language("lir", embs, rank=2, encoder=ENC)}[method]()
    path = tmp_path / "weird.name.txt"  # any extension: the format is sniffed
    save_transform(t, path)
    u = load_transform(path)
    assert isinstance(u, LanguageTransform) and u.method == method
    assert u.encoder == ENC and u.source_lang == "en" and u.dim == 4
    for lang in t.params_:
        assert u.params_[lang].tobytes() == t.params_[lang].tobytes()
    import hashlib
    assert u.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() == t.sha256
    desc = u.describe({"*": 0.6, "de": 1.0})
    assert desc["method"] == method and desc["alpha"] == {"*": 0.6, "de": 1.0}
    assert desc["sha256"] == u.sha256 and desc["file"] == "weird.name.txt"
    assert desc["languages"] == u.languages
    json.dumps(desc)
    with pytest.raises(MlirkitError, match="already exists"):
        save_transform(t, path)
    save_transform(t, path, overwrite=True)


def _write_raw_safetensors(path, tensors, meta):
    from safetensors.numpy import save_file
    save_file(tensors, str(path), metadata={"format": "mlirkit-transform", "format_version": "1",
                                            "meta": json.dumps(meta)})


def test_load_refuses_nan_inf_and_malformed_files(tmp_path):
    meta = {"method": "shift", "encoder": ENC, "source_lang": "en", "languages": ["de"]}
    for bad in (np.nan, np.inf):
        v = np.ones(4, dtype=np.float32)
        v[2] = bad
        _write_raw_safetensors(tmp_path / "bad", {"vector.de": v}, meta)
        with pytest.raises(MlirkitError, match="NaN or inf"):
            load_transform(tmp_path / "bad")
    (tmp_path / "text").write_text("hello")
    with pytest.raises(MlirkitError, match="not an mlirkit transform"):
        load_transform(tmp_path / "text")
    with pytest.raises(MlirkitError, match="no such"):
        load_transform(tmp_path / "absent")
    _write_raw_safetensors(tmp_path / "m", {"vector.de": np.ones(4, np.float32)}, {"method": "shiftt", "encoder": ENC,
                                                                                 "source_lang": "en"})
    with pytest.raises(MlirkitError, match="did you mean: shift"):
        load_transform(tmp_path / "m")
    _write_raw_safetensors(tmp_path / "m2", {"vector.de": np.ones(4, np.float64)}, meta)
    with pytest.raises(MlirkitError, match="float32"):
        load_transform(tmp_path / "m2")
    _write_raw_safetensors(tmp_path / "m3", {"vector.de": np.ones(4, np.float32)}, {"method": "shift", "encoder": ENC})
    with pytest.raises(MlirkitError, match="source_lang"):
        load_transform(tmp_path / "m3")
    _write_raw_safetensors(tmp_path / "m4", {"vector.de": np.ones(4, np.float32), "vector.fr": np.ones(5, np.float32)},
                           {**meta, "languages": ["de", "fr"]})
    with pytest.raises(MlirkitError, match="different dimensions"):
        load_transform(tmp_path / "m4")
    good = tmp_path / "good"
    save_transform(ShiftTransform.from_tensors({"de": np.ones(4)}, encoder=ENC, source_lang="en"), good)
    (tmp_path / "trunc").write_bytes(good.read_bytes()[:-3])
    with pytest.raises(MlirkitError):
        load_transform(tmp_path / "trunc")


def test_nan_in_fitting_input_and_in_params_refused():
    with pytest.raises(MlirkitError, match="NaN or inf"):
        ShiftTransform.from_tensors({"de": np.array([1.0, np.nan])}, encoder=ENC, source_lang="en")
    src = np.zeros((3, 2), np.float32)
    tgt = src.copy()
    tgt[1, 1] = np.inf
    with pytest.raises(MlirkitError, match="NaN or inf"):
        aligned_shift(src, {"de": tgt}, "en", encoder=ENC)


# ----------------------------------------------------------------------------- errors of apply
def test_encoder_mismatch_refused_unless_force(caplog):
    t = ShiftTransform.from_tensors({"de": np.ones(4)}, encoder=ENC, source_lang="en")
    t.check_encoder(dict(ENC))
    other = {**ENC, "model": "other"}
    with pytest.raises(MlirkitError, match="another encoder.*model.*use force=True to apply it anyway"):
        t.check_encoder(other)
    with caplog.at_level("WARNING"):
        t.check_encoder(other, force=True)
    assert "another encoder" in caplog.text
    with pytest.raises(MlirkitError, match="dimension 4"):
        t.check_encoder(other, force=True, dim=8)
    with pytest.raises(MlirkitError, match="dimension 4"):
        t.check_encoder({**ENC, "dim": 8}, force=True)


def test_dimension_mismatch_in_apply_refused():
    t = ShiftTransform.from_tensors({"de": np.ones(4)}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="dimension 5"):
        t.transform(np.zeros((2, 5), np.float32), ["de", "de"], "doc")
    with pytest.raises(MlirkitError, match="2 languages for 3"):
        t.transform(np.zeros((3, 4), np.float32), ["de", "de"], "doc")
    with pytest.raises(MlirkitError, match="side"):
        t.transform(np.zeros((2, 4), np.float32), ["de", "de"], "docs")


def test_language_without_vector_left_unchanged_counted_or_strict(caplog):
    t = ShiftTransform.from_tensors({"de": np.ones(4)}, encoder=ENC, source_lang="en")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    counts = Counter()
    with caplog.at_level("WARNING"):
        out = t.transform(x, ["ko", "de", "ko"], "doc", counts=counts)
    assert out[0].tobytes() == x[0].tobytes() and out[2].tobytes() == x[2].tobytes()
    np.testing.assert_array_equal(out[1], x[1] - 1)
    assert counts["missing:ko"] == 2
    assert caplog.text.count("'ko'") == 1
    caplog.clear()
    with caplog.at_level("WARNING"):  # logged once per caller's counts
        t.transform(x, ["ko", "de", "ko"], "doc", counts=counts)
    assert counts["missing:ko"] == 4 and "'ko'" not in caplog.text
    with pytest.raises(MlirkitError, match="ko"):
        t.transform(x, ["ko", "de", "ko"], "doc", strict=True)
    t.transform(x, ["en", "und", "de"], "doc", strict=True, counts=counts)  # source and unknown: fine in strict mode
    assert counts["unknown"] == 1


@pytest.mark.parametrize("alpha", [-0.1, 2.01, float("nan"), {"*": 0.5, "de": 3.0}, {"de": -1}, "x"])
def test_alpha_outside_range_refused(alpha):
    t = ShiftTransform.from_tensors({"de": np.ones(4)}, encoder=ENC, source_lang="en")
    with pytest.raises(MlirkitError, match="alpha"):
        t.transform(np.zeros((1, 4), np.float32), ["de"], "doc", alpha=alpha)
    with pytest.raises(MlirkitError, match="alpha"):
        t.describe(alpha)


# ----------------------------------------------------------------------------- derive, .pt import
def test_derive_other_source(tmp_path):
    r = rng(10)
    t = ShiftTransform.from_tensors({l: r.normal(size=4) for l in ["de", "fr", "zh"]}, encoder=ENC, source_lang="en",
                       meta={"pairs": {"de": 10, "fr": 20, "zh": 5}})
    save_transform(t, tmp_path / "en")
    t = load_transform(tmp_path / "en")
    u = derive_source(t, "zh")
    assert u.source_lang == "zh" and sorted(u.languages) == ["de", "en", "fr"]
    np.testing.assert_allclose(u.params_["de"], t.params_["de"] - t.params_["zh"], atol=1e-6)
    np.testing.assert_allclose(u.params_["en"], -t.params_["zh"], atol=1e-6)
    assert u.meta["derived_from"]["sha256"] == t.sha256
    # exact on N-way aligned data: deriving equals fitting with the new source directly
    n = 100
    base = r.normal(size=(n, 4))
    embs = {l: base + r.normal(size=4) + 0.1 * r.normal(size=(n, 4)) for l in ["en", "de", "zh"]}
    en = aligned_shift(embs["en"], {"de": embs["de"], "zh": embs["zh"]}, "en", encoder=ENC)
    zh = aligned_shift(embs["zh"], {"de": embs["de"], "en": embs["en"]}, "zh", encoder=ENC)
    d = derive_source(en, "zh")
    for lang in ("de", "en"):
        np.testing.assert_allclose(d.params_[lang], zh.params_[lang], atol=1e-5)
    with pytest.raises(MlirkitError, match="no vector"):
        derive_source(t, "ko")
    with pytest.raises(MlirkitError, match="already"):
        derive_source(t, "en")


def test_derive_cli(tmp_path, capsys):
    from mlirkit.shift.cli import main
    t = ShiftTransform.from_tensors({"de": np.ones(3), "fr": np.full(3, 2.0)}, encoder=ENC, source_lang="en")
    save_transform(t, tmp_path / "t")
    assert main(["derive", "--transform", str(tmp_path / "t"), "--source-lang", "fr", "--output", str(tmp_path / "u")]) == 0
    u = load_transform(tmp_path / "u")
    np.testing.assert_array_equal(u.params_["de"], -np.ones(3, np.float32))
    np.testing.assert_array_equal(u.params_["en"], np.full(3, -2.0, np.float32))
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "u")]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["source_lang"] == "fr" and info["norms"]["de"] == pytest.approx(3 ** 0.5)


def _write_pt(path, d=4, **extra):
    import torch
    payload = {"model_name": "toy/model", "source_lang": "en",
               **{f"v_{l}": torch.arange(d, dtype=torch.float32) * (i + 1) for i, l in enumerate(["ar", "de", "dt"])},
               **extra}
    torch.save(payload, path)


def test_read_shift_pt(tmp_path):
    _write_pt(tmp_path / "vec.pt")
    assert sniff(tmp_path / "vec.pt") == "torch"
    model, src, vecs = read_shift_pt(tmp_path / "vec.pt")
    assert model == "toy/model" and src == "en" and sorted(vecs) == ["ar", "de", "dt"]
    np.testing.assert_array_equal(vecs["de"], np.arange(4, dtype=np.float32) * 2)
    with pytest.raises(MlirkitError, match="import"):
        load_transform(tmp_path / "vec.pt")
    import torch
    torch.save({"model_name": "m", "source_lang": "en", "v_de": torch.tensor([1.0, float("nan")])}, tmp_path / "nan.pt")
    with pytest.raises(MlirkitError, match="NaN"):
        read_shift_pt(tmp_path / "nan.pt")
    torch.save({"model_name": "m", "v_de": torch.ones(3)}, tmp_path / "nosrc.pt")
    with pytest.raises(MlirkitError, match="source_lang"):
        read_shift_pt(tmp_path / "nosrc.pt")


def test_import_and_cli_parser_are_light():
    import subprocess
    import sys
    heavy = ("torch", "faiss", "pyserini", "transformers", "sklearn", "safetensors", "ir_datasets")
    code = ("import sys, mlirkit.shift, mlirkit.shift.cli\nmlirkit.shift.cli.build_parser()\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
