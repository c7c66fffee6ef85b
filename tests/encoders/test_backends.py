"""Backends of the ``hf`` encoder (torch, OpenVINO, ONNX Runtime): equivalence to torch fp32, the
conversion cache (reuse, locking), backend resolution, and index compatibility across backends."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.encoders import load_encoder
from mlirkit.encoders.backends import cpu_supports_bf16, installed, resolve_backend
from mlirkit.encoders.backends import conversion
from mlirkit.encoders.base import EncoderMismatchError, check_same_encoder
from mlirkit.base.errors import MlirkitError
from tests.helpers import SHARED_DATA, require_shared_data

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["hello world", "Hallo Welt, wie geht's dir heute? Gut, danke.", "日本語のテキストです", "x",
         "Программа копирует файлы в каталог, " * 6, "Le traversier quitte le port deux fois par jour."]
needs_openvino = pytest.mark.skipif(not installed("openvino"), reason="openvino not installed")
needs_onnx = pytest.mark.skipif(not installed("onnx"), reason="onnxruntime not installed")


@pytest.fixture(scope="module")
def torch_ref(tiny_model_dir):
    enc = load_encoder(str(tiny_model_dir), "hf", backend="torch", max_length=64)
    return enc, enc.encode_docs(TEXTS), enc.encode_queries(TEXTS)


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize("backend, precision, atol", [
    pytest.param("openvino", "fp32", 1e-5, marks=needs_openvino),
    pytest.param("openvino", "bf16", None, marks=needs_openvino),
    pytest.param("onnx", "fp32", 1e-5, marks=needs_onnx),
])
def test_backend_matches_torch_fp32(tiny_model_dir, torch_ref, backend, precision, atol):
    ref, docs, queries = torch_ref
    enc = load_encoder(str(tiny_model_dir), "hf", backend=backend, precision=precision, max_length=64, threads=1)
    assert (enc.backend, enc.precision) == (backend, precision)
    got_docs = enc.encode_docs(TEXTS, batch_size=4)  # mixed lengths: padded batches
    got_queries = np.concatenate([enc.encode_queries([t]) for t in TEXTS])  # one at a time: batch 1
    if atol is not None:
        np.testing.assert_allclose(got_docs, docs, atol=atol)
        np.testing.assert_allclose(got_queries, queries, atol=atol)
    else:  # bf16 arithmetic: close, not equal
        assert _cosine(got_docs, docs).min() > 0.999 and _cosine(got_queries, queries).min() > 0.999
        assert not np.array_equal(got_docs, docs)
    fp = enc.fingerprint
    assert fp["backend"] == backend and fp["precision"] == precision and enc.digest != ref.digest
    check_same_encoder(ref.fingerprint, fp, "an index")  # equivalent vectors: accepted


@needs_openvino
def test_openvino_honours_threads_and_precision(tiny_model_dir):
    enc = load_encoder(str(tiny_model_dir), "hf", backend="openvino", precision="fp32", threads=1, max_length=64)
    compiled = enc._runner.compiled
    assert int(compiled.get_property("INFERENCE_NUM_THREADS")) == 1
    assert "float32" in str(compiled.get_property("INFERENCE_PRECISION_HINT"))


@needs_openvino
def test_conversion_is_cached_and_reused(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRKIT_CACHE", str(tmp_path / "cache"))
    before = len(conversion.CONVERSIONS)
    a = load_encoder(str(tiny_model_dir), "hf", backend="openvino", precision="fp32", max_length=64)
    assert len(conversion.CONVERSIONS) == before + 1
    converted = conversion.CONVERSIONS[-1]
    assert converted.parent == tmp_path / "cache" / "converted" / "openvino"
    key = json.loads((converted / conversion.MARKER).read_text())
    assert key["weights"] == a.fingerprint["weights"] and key["backend"] == "openvino"
    mtime = (converted / "model.xml").stat().st_mtime_ns
    b = load_encoder(str(tiny_model_dir), "hf", backend="openvino", precision="bf16", max_length=64)
    assert len(conversion.CONVERSIONS) == before + 1  # the same IR serves both precisions
    assert (converted / "model.xml").stat().st_mtime_ns == mtime
    assert a.encode_docs(TEXTS[:2]).shape == b.encode_docs(TEXTS[:2]).shape == (2, 32)
    assert not list((tmp_path / "cache" / "converted" / "openvino").glob(".*tmp-*"))  # nothing half-written


def test_failed_conversion_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRKIT_CACHE", str(tmp_path))

    def broken(directory: Path) -> None:
        (directory / "model.xml").write_text("half")
        raise RuntimeError("converter crashed")

    with pytest.raises(MlirkitError, match="crashed.*backend='torch'"):
        conversion.converted_path("openvino", {"model": "m", "weights": "w"}, "model.xml", broken)
    assert [p.name for p in (tmp_path / "converted" / "openvino").iterdir() if not p.name.endswith(".lock")] == []
    calls = []
    path = conversion.converted_path("openvino", {"model": "m", "weights": "w"}, "model.xml",
                                     lambda d: (calls.append(1), (d / "model.xml").write_text("ok")))
    assert path.read_text() == "ok" and calls == [1]


LOCK_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from mlirkit.encoders.backends import conversion
    def slow(directory):
        time.sleep(1.5)
        (directory / "model.xml").write_text("converted")
    start = time.time()
    path = conversion.converted_path("openvino", {"model": "m", "weights": "w1"}, "model.xml", slow)
    print(json.dumps({"path": str(path), "converted": len(conversion.CONVERSIONS), "start": start, "end": time.time()}))
""")


def test_two_processes_convert_once(tmp_path):
    """Two processes at once: one converts, the other waits on the lock and reuses the result."""
    env = {**__import__("os").environ, "MLIRKIT_CACHE": str(tmp_path), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", LOCK_SCRIPT], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(o["converted"] for o in outs) == [0, 1]
    assert outs[0]["path"] == outs[1]["path"] and Path(outs[0]["path"]).read_text() == "converted"
    converter, waiter = sorted(outs, key=lambda o: -o["converted"])
    if waiter["start"] < converter["end"] - 1.0:  # they overlapped: the waiter returned after the conversion
        assert waiter["end"] >= converter["end"] - 0.05


def test_resolve_backend(monkeypatch):
    import mlirkit.encoders.backends as backends

    monkeypatch.delenv(backends.BACKEND_ENV, raising=False)
    monkeypatch.setattr(backends, "installed", lambda name: True)
    monkeypatch.setattr(backends, "cpu_supports_bf16", lambda: True)
    cpu = {"device_type": "cpu", "dtype": "float32", "quantize": None}
    assert resolve_backend(None, None, **cpu) == ("openvino", "bf16")
    assert resolve_backend("auto", "fp32", **cpu) == ("openvino", "fp32")
    assert resolve_backend("auto", None, **{**cpu, "quantize": "int8"}) == ("torch", "fp32")
    assert resolve_backend("auto", None, **{**cpu, "dtype": "bfloat16"}) == ("torch", "fp32")
    assert resolve_backend("auto", None, **{**cpu, "device_type": "cuda"}) == ("torch", "fp32")
    assert resolve_backend("onnx", None, **cpu) == ("onnx", "fp32")
    monkeypatch.setattr(backends, "cpu_supports_bf16", lambda: False)
    assert resolve_backend("openvino", "auto", **cpu) == ("openvino", "fp32")
    monkeypatch.setenv(backends.BACKEND_ENV, "torch")
    assert resolve_backend(None, None, **cpu) == ("torch", "fp32")
    for args, message in [(("tensorrt", None, cpu), "unknown backend"), (("auto", "int4", cpu), "unknown precision"),
                          (("onnx", "bf16", cpu), "no precision 'bf16'"),
                          (("openvino", None, {**cpu, "quantize": "int8"}), "torch dynamic quantisation"),
                          (("openvino", None, {**cpu, "device_type": "cuda"}), "CPU only"),
                          (("torch", "bf16", cpu), "dtype='bfloat16'")]:
        with pytest.raises(MlirkitError, match=message):
            resolve_backend(args[0], args[1], **args[2])
    monkeypatch.setattr(backends, "installed", lambda name: False)
    assert resolve_backend("auto", None, **cpu) == ("torch", "fp32")
    with pytest.raises(MlirkitError, match="pip install openvino"):
        resolve_backend("openvino", None, **cpu)


def test_cpu_flags_match_proc_cpuinfo():
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        pytest.skip("no /proc/cpuinfo")
    assert cpu_supports_bf16() == (" avx512_bf16" in flags or " amx_bf16" in flags)


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return set()


@needs_openvino
def test_bf16_vectors_do_not_depend_on_the_batch(tiny_model_dir):
    """bf16 arithmetic: a text's vector is the same alone, in the encoder's sorted batches and in Pyserini-style
    batches of 3 (equal-length batches: no padding); padded batches would move it (the cause, shown here)."""
    enc = load_encoder(str(tiny_model_dir), "hf", backend="openvino", precision="bf16", max_length=64, threads=1)
    assert enc.equal_length_batches and enc.fingerprint["batches"] == "equal-length"
    texts = TEXTS * 3
    together = enc.encode_docs(texts)
    alone = np.concatenate([enc.encode_docs([t]) for t in texts])
    in_threes = np.concatenate([enc.encode_docs(texts[i:i + 3]) for i in range(0, len(texts), 3)])
    queries = enc.encode_queries(texts), np.concatenate([enc.encode_queries([t]) for t in texts])
    if not _cpu_flags() & {"amx_bf16", "amx_tile"}:
        np.testing.assert_array_equal(together, alone)
        np.testing.assert_array_equal(together, in_threes)
        np.testing.assert_array_equal(*queries)
    else:
        # AMX tiles: OpenVINO's kernels block the rows of a batch, so the number of texts moves a vector by a few
        # float32 roundings (docs/encoders.md, "Batching"); padding moved it about a hundred times more
        for a, b in [(together, alone), (together, in_threes), queries]:
            assert np.abs(a - b).max() < 2e-5
    fp32 = load_encoder(str(tiny_model_dir), "hf", backend="openvino", precision="fp32", max_length=64, threads=1)
    assert not fp32.equal_length_batches and "batches" not in fp32.fingerprint
    check_same_encoder(fp32.fingerprint, enc.fingerprint, "an index")  # equivalent vectors: accepted


def test_fingerprint_compatibility_rules():
    base = {"class": "hf", "model": "m", "weights": "sha256:x", "dtype": "float32"}
    torch_fp32 = {**base, "backend": "torch", "precision": "fp32"}
    ov_bf16 = {**base, "backend": "openvino", "precision": "bf16"}
    int8 = {**base, "backend": "torch", "precision": "int8", "quantize": "int8"}
    check_same_encoder(torch_fp32, ov_bf16, "index")
    check_same_encoder(base, ov_bf16, "index")  # written before backends existed = torch fp32
    for a, b in [(int8, torch_fp32), (ov_bf16, int8), (int8, base)]:
        with pytest.raises(EncoderMismatchError, match="quantize"):
            check_same_encoder(a, b, "index")
    with pytest.raises(EncoderMismatchError, match="dtype"):  # torch bf16 weights are another model
        check_same_encoder(torch_fp32, {**base, "dtype": "bfloat16", "backend": "torch", "precision": "bf16"}, "index")


@needs_openvino
def test_index_searchable_across_equivalent_backends_int8_refused(tmp_path, tiny_model_dir, capsys):
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.index import DenseIndex
    from mlirkit.io.trec import read_run
    from mlirkit.search.cli import main as search_main

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": t, "lang": "en"}, ensure_ascii=False) + "\n"
                              for i, t in enumerate(TEXTS)), encoding="utf-8")
    topics = tmp_path / "q.tsv"
    topics.write_text("q1\tferry harbour\ten\nq2\tcopy files\ten\n", encoding="utf-8")
    index = tmp_path / "index"
    assert run_cli(encode_main, ["--corpus", str(corpus), "--output", str(index), "--encoder", str(tiny_model_dir),
                                 "--encoder-option", "backend=torch", "--encoder-option", "max_length=64", "--quiet"]) == 0
    meta = DenseIndex(index).meta
    assert meta["encoder"]["backend"] == "torch" and meta["encoder_options"]["backend"] == "torch"
    search = ["--index", str(index), "--topics", str(topics), "--hits", "6", "--quiet"]
    runs = {}
    for backend in ("torch", "openvino"):
        out = tmp_path / f"{backend}.trec"
        assert run_cli(search_main, [*search, "--output", str(out), "--encoder-option", f"backend={backend}"]) == 0
        runs[backend] = read_run(out)
    assert {q: sorted(h) for q, h in runs["torch"].items()} == {q: sorted(h) for q, h in runs["openvino"].items()}
    capsys.readouterr()
    code = run_cli(search_main, [*search, "--output", str(tmp_path / "int8.trec"), "--encoder-option", "quantize=int8"])
    err = capsys.readouterr().err
    assert code == 2 and "made with another encoder" in err and "quantize" in err and "--force" in err
    assert not (tmp_path / "int8.trec").exists()
    assert run_cli(search_main, [*search, "--output", str(tmp_path / "int8.trec"), "--encoder-option", "quantize=int8", "--force"]) == 0


def test_pyserini_search_wrapper_batches_queries_by_default(monkeypatch):
    import mlirkit.pyserini.search.cli as cli

    seen = {}
    monkeypatch.setattr(cli, "run", lambda argv, settings, command=None: seen.update(argv=list(argv), command=command))
    cli.main(["--topics", "t.tsv", "--index", "nowhere", "--output", "r.trec"])
    assert seen["argv"][-2:] == ["--batch-size", str(cli.DEFAULT_QUERY_BATCH)]
    assert seen["command"] == ["python", "-m", "mlirkit.pyserini.search", "--topics", "t.tsv", "--index", "nowhere",
                               "--output", "r.trec"]  # what the run's provenance records: the command as given
    seen.clear()
    cli.main(["--topics", "t.tsv", "--index", "nowhere", "--output", "r.trec", "--batch-size", "1"])
    assert seen["argv"].count("--batch-size") == 1 and seen["argv"][-1] == "1"


DDTP_DIR = SHARED_DATA / "ddtp"


@pytest.mark.slow
@needs_openvino
@needs_onnx
def test_real_e5_backends_keep_fp32_fidelity():
    """The offline e5-small on real multilingual DDTP descriptions: fp32 and bf16 paths >= 0.9999."""
    import gzip

    DDTP = require_shared_data(DDTP_DIR) / "descriptions.jsonl.gz"
    texts, langs = [], set()
    with gzip.open(DDTP, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            texts.append((rec["short"] + "\n" + rec["long"]).strip())
            langs.add(rec["lang"])
            if len(texts) >= 48:
                break
    assert len(langs) >= 5
    opts = {"max_length": 256, "threads": 2}
    ref = load_encoder("multilingual-e5-small-q4", backend="torch", **opts)
    docs, queries = ref.encode_docs(texts), ref.encode_queries([t[:80] for t in texts])
    report = {}
    for backend, precision in [("openvino", "fp32"), ("openvino", "bf16"), ("onnx", "fp32"), ("torch", "int8")]:
        extra = {"quantize": "int8"} if precision == "int8" else {"precision": precision}
        enc = load_encoder("multilingual-e5-small-q4", backend=backend, **opts, **extra)
        cos = min(_cosine(enc.encode_docs(texts), docs).min(),
                  _cosine(enc.encode_queries([t[:80] for t in texts]), queries).min())
        report[f"{backend} {precision}"] = float(cos)
        if precision != "int8":
            assert cos >= 0.9999, (backend, precision, cos)
    print("min cosine to torch fp32:", report)
    assert report["torch int8"] < 0.9999  # int8 is not an equivalent path (why it is refused)


def test_pyserini_wrappers_take_backend_options():
    from mlirkit.encoders.options import parse_encoder_options

    assert parse_encoder_options(["backend=openvino", "precision=bf16", "threads=2"]) == {
        "backend": "openvino", "precision": "bf16", "threads": 2}


@needs_openvino
def test_openvino_conversion_sends_no_telemetry(tiny_model_dir, tmp_path, monkeypatch):
    """OpenVINO's converter would send usage telemetry from a forked process (offline, that process can
    hang in getaddrinfo and block the interpreter's exit); mlirkit converts with it off."""
    from openvino_telemetry import Telemetry
    from transformers import AutoModel

    from mlirkit.encoders.backends import openvino as ov_backend

    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no consent file: telemetry would be on
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("CI", raising=False)  # the converter turns telemetry off in CI only
    sent = []
    monkeypatch.setattr(Telemetry, "send_event", lambda self, *a, **k: sent.append(a))
    monkeypatch.setattr(Telemetry, "start_session", lambda self, *a, **k: sent.append(("session",) + a))
    (tmp_path / "ir").mkdir()
    ov_backend.convert(AutoModel.from_pretrained(str(tiny_model_dir)), 1, tmp_path / "ir")
    assert (tmp_path / "ir" / "model.xml").is_file()
    assert sent == []
    import sys
    assert sys.modules["openvino_telemetry"].Telemetry is Telemetry  # the package itself is left as it was


@needs_openvino
def test_converted_backends_read_config_json_as_autoconfig_does(tiny_model_dir, tmp_path):
    """A local directory on a converted backend takes its config from config.json directly: the fields the
    encoder reads equal AutoConfig's, and the encoder ends up with the same length, pad id and dimension."""
    from transformers import AutoConfig

    from mlirkit.encoders.hf import _read_config

    auto, own = AutoConfig.from_pretrained(tiny_model_dir), _read_config(Path(tiny_model_dir))
    for field in ("model_type", "hidden_size", "max_position_embeddings", "pad_token_id"):
        assert getattr(own, field) == getattr(auto, field), field
    ov = load_encoder(str(tiny_model_dir), "hf", backend="openvino", precision="fp32", max_length=10_000)
    ref = load_encoder(str(tiny_model_dir), "hf", backend="torch", max_length=10_000)
    assert (ov.max_length, ov._pad_id, ov.dim) == (ref.max_length, ref._pad_id, ref.dim)
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        _read_config(tmp_path)
