"""Binary inputs (mlirkit.io.binary and its users): a truncated, corrupt or unsafe safetensors, .npy, torch or
FAISS file is one MlirkitError naming the file, never a traceback from the library underneath; the sound ones
load as the library loads them."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

from mlirkit.base.errors import MlirkitError
from mlirkit.io.binary import check_safetensors, check_torch_file, load_npy


def _safetensors(path):
    save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(4, dtype=np.float16)}, str(path))
    return path


def test_sound_safetensors_pass(tmp_path):
    header = check_safetensors(_safetensors(tmp_path / "w.safetensors"))
    assert header["a"]["shape"] == [2, 3] and header["b"]["dtype"] == "F16"


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[:-4], "the tensors need"),
    (lambda b: b[: len(b) // 2], "header length"),
    (lambda b: b[:5], "shorter than the 8-byte header length"),
    (lambda b: struct.pack("<Q", 10**9) + b[8:], "header length"),
    (lambda b: b[:8] + b"x" * (len(b) - 8), "header is not JSON"),
    (lambda b: b"", "shorter than the 8-byte header length"),
])
def test_damaged_safetensors_are_one_line(tmp_path, damage, message):
    path = _safetensors(tmp_path / "w.safetensors")
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(MlirkitError, match=rf"w\.safetensors: truncated or corrupt safetensors file \(.*{message}") as e:
        check_safetensors(path)
    assert "\n" not in str(e.value)


def test_inconsistent_safetensors_header(tmp_path):
    header = json.dumps({"t": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}}).encode()
    (tmp_path / "h.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 12)
    with pytest.raises(MlirkitError, match="needs 16 bytes, its offsets give 12"):
        check_safetensors(tmp_path / "h.safetensors")


def test_npy_loads_without_pickle_and_refuses_damage(tmp_path):
    good = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "e.npy", good)
    np.testing.assert_array_equal(load_npy(tmp_path / "e.npy"), good)
    np.testing.assert_array_equal(load_npy(tmp_path / "e.npy", mmap=True), good)
    data = (tmp_path / "e.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(data[:-5])
    with pytest.raises(MlirkitError, match=r"cut\.npy: truncated \.npy file: shape \(3, 4\) float32 needs"):
        load_npy(tmp_path / "cut.npy")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, "x"], dtype=object), allow_pickle=True)
    with pytest.raises(MlirkitError, match=r"obj\.npy: holds Python objects .*allow_pickle=False"):
        load_npy(tmp_path / "obj.npy")
    (tmp_path / "text.npy").write_text("not numpy", "utf-8")
    with pytest.raises(MlirkitError, match=r"text\.npy: not a NumPy \.npy file"):
        load_npy(tmp_path / "text.npy")


def test_torch_files(tmp_path):
    import torch

    torch.save({"w": torch.ones(3)}, tmp_path / "m.bin")
    check_torch_file(tmp_path / "m.bin")
    data = (tmp_path / "m.bin").read_bytes()
    (tmp_path / "cut.bin").write_bytes(data[: len(data) // 2])
    with pytest.raises(MlirkitError, match=r"cut\.bin: truncated or corrupt torch file"):
        check_torch_file(tmp_path / "cut.bin")
    named = bytearray(data)  # a member name in the central directory that is not UTF-8 (the zip says it is)
    at = named.rindex(b"m/data.pkl")
    named[at] = 0x80
    (tmp_path / "name.bin").write_bytes(bytes(named))
    with pytest.raises(MlirkitError, match=r"name\.bin: truncated or corrupt torch file"):
        check_torch_file(tmp_path / "name.bin")
    (tmp_path / "x.bin").write_bytes(b"hello")
    with pytest.raises(MlirkitError, match=r"x\.bin: not a torch file"):
        check_torch_file(tmp_path / "x.bin")


@pytest.mark.parametrize("data", [b"Q", b"b", b"\x80\x02Q.", b"\x80\x02}q\x00(X\x01\x00\x00\x00aQ."])
def test_damaged_shift_pt_files_are_one_line(tmp_path, data):
    """What the slow property test drew: streams on which torch's weights-only unpickler raised IndexError."""
    from mlirkit.transforms.io import read_shift_pt

    (tmp_path / "v.pt").write_bytes(data)
    with pytest.raises(MlirkitError, match=r"v\.pt: (not a torch file|cannot read as a SHIFT vector file)") as e:
        read_shift_pt(tmp_path / "v.pt")
    assert "\n" not in str(e.value)


def _tiny_index(root, n=3):
    import faiss

    root.mkdir()
    index = faiss.IndexFlatIP(4)
    index.add(np.eye(4, dtype=np.float32)[:n])
    faiss.write_index(index, str(root / "index"))
    (root / "docid").write_text("".join(f"d{i}\n" for i in range(n)), "utf-8")
    return root


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_corrupt_faiss_index_is_one_line(tmp_path, damage):
    from mlirkit.index import DenseIndex

    root = _tiny_index(tmp_path / "ix")
    data = (root / "index").read_bytes()
    (root / "index").write_bytes(data[: len(data) // 2] if damage == "truncated" else b"\x00garbage" * 5)
    with pytest.raises(MlirkitError, match=r"ix/index: not a readable FAISS index \(truncated or corrupt") as e:
        DenseIndex(root).faiss_index
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("mmap", [False, True])
def test_a_faiss_size_field_larger_than_the_file_is_refused_not_allocated(tmp_path, mmap):
    """A flat index whose codes claim 64 GiB: FAISS (limit 1 TiB) zero-filled them until the kernel killed the
    process. Read in a child process capped at 4 GiB of address space, so the old behaviour is a MemoryError
    traceback there rather than a machine out of memory."""
    import subprocess
    import sys

    root = _tiny_index(tmp_path / "ix")
    data = bytearray((root / "index").read_bytes())
    at = data.index(struct.pack("<Q", 3 * 4))  # the codes' size field, in floats: 3 vectors x 4
    struct.pack_into("<Q", data, at, 1 << 34)
    (root / "index").write_bytes(bytes(data))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
            "from mlirkit.base.cli import run_cli; from mlirkit.index import DenseIndex; "
            f"sys.exit(run_cli(lambda argv: DenseIndex({str(root)!r}, mmap={mmap}).faiss_index and 0, []))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "ix/index: not a readable FAISS index" in done.stderr


@pytest.mark.parametrize("bad", ["truncated", "object", "rows"])
def test_index_embeddings_are_checked(tmp_path, bad):
    from mlirkit.index import DenseIndex

    root = _tiny_index(tmp_path / "ix")
    if bad == "truncated":
        np.save(root / "embeddings.npy", np.eye(4, dtype=np.float32)[:3])
        data = (root / "embeddings.npy").read_bytes()
        (root / "embeddings.npy").write_bytes(data[:-8])
        match = "truncated .npy file"
    elif bad == "object":
        np.save(root / "embeddings.npy", np.array([None, 1, "x"], dtype=object), allow_pickle=True)
        match = "holds Python objects"
    else:
        np.save(root / "embeddings.npy", np.eye(4, dtype=np.float32)[:2])
        match = r"expected a float array of 3 rows"
    with pytest.raises(MlirkitError, match=match):
        DenseIndex(root).embeddings()
