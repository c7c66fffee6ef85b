"""Structural checks of the binary files mlirkit reads: safetensors, NumPy ``.npy``, torch zip/pickle files.

Each check reads only the header and the file size, so a multi-gigabyte file costs nothing, and turns a
truncated, corrupt or unsafe file into one :class:`~mlirkit.base.errors.MlirkitError` naming the file and what
is wrong (instead of a traceback from deep inside safetensors, NumPy or torch):

- **safetensors** (:func:`check_safetensors`): an 8-byte little-endian header length, a JSON object header
  whose tensors (``dtype``, ``shape``, ``data_offsets``) have consistent sizes and follow each other back to
  back, and a file exactly as long as header and tensors;
- **.npy** (:func:`load_npy`): a NumPy header, a dtype without Python objects (an object array needs pickle,
  which mlirkit never loads: ``allow_pickle=False``) and a file long enough for ``shape``;
- **torch files** (:func:`check_torch_file`): a zip archive whose central directory can be read (a cut-short
  file has none), or a legacy pickle stream (loaded later with ``weights_only=True`` only);
- **FAISS indexes** (:func:`read_faiss_index`): read with FAISS's per-vector size limit lowered from 1 TiB to
  the file's size or :data:`FAISS_FLOOR` (4 GiB), whichever is larger, so a damaged size field is refused
  instead of allocated (a header claiming 64 GiB of codes had the process zero-fill them until the kernel
  killed it). The floor leaves room for what FAISS computes rather than reads: an IVF-PQ precomputed table
  (at most 2 GiB, FAISS's ``precomputed_table_max_bytes``) is checked against the same limit.
"""
from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError

#: safetensors dtype name -> bytes per element
SAFETENSORS_DTYPES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8,
                      "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
                      "F4": 1, "F6_E2M3": 1, "F6_E3M2": 1, "C64": 8}
#: the largest safetensors header accepted (the format's own limit)
MAX_HEADER = 100_000_000
#: the smallest per-vector byte limit :func:`read_faiss_index` sets (above FAISS's 2 GiB precomputed tables)
FAISS_FLOOR = 1 << 32


def check_safetensors(path: str | os.PathLike) -> dict[str, Any]:
    """The header (``{name: {dtype, shape, data_offsets}, "__metadata__": ...}``) of a safetensors file whose
    structure is sound, else :class:`MlirkitError` ``"<path>: truncated or corrupt safetensors file (...)"``."""
    path = Path(path)

    def bad(why: str) -> MlirkitError:
        return MlirkitError(f"{path}: truncated or corrupt safetensors file ({why})")

    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise bad(f"{size} bytes, shorter than the 8-byte header length")
            (n,) = struct.unpack("<Q", head)
            if n > min(size - 8, MAX_HEADER):
                raise bad(f"header length {n} but {size - 8} bytes follow")
            raw = f.read(n)
    except OSError as e:
        raise MlirkitError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        header = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise bad(f"header is not JSON: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if not isinstance(header, dict):
        raise bad("header is not a JSON object")
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise bad(f"tensor {name!r} has no description")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dtype not in SAFETENSORS_DTYPES:
            raise bad(f"tensor {name!r} has unknown dtype {dtype!r}")
        if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
            raise bad(f"tensor {name!r} has an invalid shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets) and 0 <= offsets[0] <= offsets[1]):
            raise bad(f"tensor {name!r} has invalid data_offsets {offsets!r}")
        nbytes = math.prod(shape) * SAFETENSORS_DTYPES[dtype]
        if dtype not in ("F4", "F6_E2M3", "F6_E3M2") and offsets[1] - offsets[0] != nbytes:
            raise bad(f"tensor {name!r} of shape {shape} {dtype} needs {nbytes} bytes, its offsets give "
                      f"{offsets[1] - offsets[0]}")
        spans.append((offsets[0], offsets[1], name))
    end = 0  # the tensors' bytes follow the header back to back and fill the file (as safetensors requires)
    for begin, stop, name in sorted(spans):
        if begin != end:
            raise bad(f"tensor {name!r} starts at byte {begin}, expected {end}")
        end = stop
    if 8 + n + end != size:
        raise bad(f"the tensors need {8 + n + end} bytes, the file has {size}")
    return header


def load_npy(path: str | os.PathLike, *, mmap: bool = False) -> np.ndarray:
    """The array of a ``.npy`` file (memory-mapped with ``mmap``), loaded with ``allow_pickle=False`` after its
    header is checked: a truncated file, an object array (pickle) or no NumPy file at all is one error."""
    path = Path(path)

    def bad(why: str) -> MlirkitError:
        return MlirkitError(f"{path}: {why}")

    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            try:
                version = np.lib.format.read_magic(f)
                read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
                if version not in read:
                    raise ValueError(f"unsupported .npy version {version}")
                shape, _, dtype = read[version](f, max_header_size=1 << 20)
            except Exception as e:  # NumPy parses the header with ast/tokenize: ValueError, SyntaxError, TokenError...
                raise bad(f"not a NumPy .npy file ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
            offset = f.tell()
    except OSError as e:
        raise MlirkitError(f"{path}: cannot read ({e.strerror or e})") from None
    if dtype.hasobject:
        raise bad(f"holds Python objects (dtype {dtype}), which need pickle; mlirkit never loads pickles "
                  "(allow_pickle=False): save a numeric array")
    need = offset + math.prod(shape) * dtype.itemsize
    if size < need:
        raise bad(f"truncated .npy file: shape {shape} {dtype} needs {need} bytes, the file has {size}")
    try:
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise bad(f"cannot load ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None


def check_torch_file(path: str | os.PathLike) -> None:
    """A torch file (``.bin``/``.pt``) whose container is sound: a zip archive with a readable central
    directory, or a pickle stream (protocol 2+); anything else is one error."""
    import zipfile

    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        if head.startswith(b"PK"):
            with zipfile.ZipFile(path) as z:
                z.namelist()
            return
    except (zipfile.BadZipFile, ValueError, EOFError, struct.error, NotImplementedError) as e:  # (ValueError:
        # e.g. a member name that is not UTF-8 although the archive says it is)
        raise MlirkitError(f"{path}: truncated or corrupt torch file ({e})") from None
    except OSError as e:
        raise MlirkitError(f"{path}: cannot read ({e.strerror or e})") from None
    if head[:1] != b"\x80":
        raise MlirkitError(f"{path}: not a torch file (neither a zip archive nor a pickle stream)")


def read_faiss_index(path: str | os.PathLike, flags: int = 0) -> Any:
    """``faiss.read_index(path, flags)`` where no vector may claim more bytes than the file holds or
    :data:`FAISS_FLOOR` (FAISS's ``deserialization_vector_byte_limit`` set so while it reads, then restored);
    FAISS's errors (``RuntimeError``, ``MemoryError``) become one line naming the file."""
    import faiss

    path = Path(path)
    get = getattr(faiss, "get_deserialization_vector_byte_limit", None)
    before = get() if get is not None else None
    try:
        if before is not None:
            faiss.set_deserialization_vector_byte_limit(min(before, max(path.stat().st_size, FAISS_FLOOR)))
        return faiss.read_index(str(path), flags)
    except (RuntimeError, MemoryError) as e:  # FAISS's C++ error, several lines: the cause is on the first
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise MlirkitError(f"{path}: not a readable FAISS index (truncated or corrupt: {first[:200]})") from None
    finally:
        if before is not None:
            faiss.set_deserialization_vector_byte_limit(before)


__all__ = ["FAISS_FLOOR", "SAFETENSORS_DTYPES", "check_safetensors", "check_torch_file", "load_npy", "read_faiss_index"]
