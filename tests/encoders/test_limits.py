"""Bounded memory per document: a 5 MB document costs what its truncated text costs, and embeds the same."""
from __future__ import annotations

import tracemalloc

import numpy as np

from mlirkit.encoders.limits import CHARS_PER_TOKEN, USEM_MAX_CHARS, clip_chars, clip_for_tokenizer

BIG = ("Multilingual retrieval needs bounded memory per document. " * 90_000)[:5_000_000]


def _peak(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_clip_helpers():
    assert clip_chars(["abc", "abcdef"], 4) == ["abc", "abcd"]
    assert clip_for_tokenizer(["x" * 1000], 8, prefix="query: ") == ["query: " + "x" * (8 * CHARS_PER_TOKEN - 7)]
    short = "short text"
    assert clip_for_tokenizer([short], 512)[0] is short


_HF_SCRIPT = """
import resource, sys
import numpy as np
from mlirkit.encoders import load_encoder
from mlirkit.encoders import limits
if len(sys.argv) > 2:
    limits.CHARS_PER_TOKEN = 10**9  # the unbounded behaviour, to show the test would catch it
enc = load_encoder(sys.argv[1], "hf", max_length=64)
big = ("Multilingual retrieval needs bounded memory per document. " * 90_000)[:5_000_000]
cut = big[:64 * 32]
small = enc.encode_docs([cut])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
vec = enc.encode_docs([big])
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
assert np.array_equal(vec, small)
print(grown // 1024)
"""


def test_hf_encoder_five_megabyte_document(tiny_model_dir):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _HF_SCRIPT, str(tiny_model_dir)], capture_output=True, text=True,
                         check=True)
    grown_mib = int(out.stdout.split()[-1])
    assert grown_mib < 32, f"encoding a 5 MB document grew the peak RSS by {grown_mib} MiB"


def test_usem_five_megabyte_document():
    from mlirkit.encoders import load_encoder

    usem = load_encoder("usem")
    assert usem.fingerprint["max_chars"] == USEM_MAX_CHARS
    cut = BIG[:USEM_MAX_CHARS]
    small, small_peak = _peak(lambda: usem.encode_docs([cut]))
    big, big_peak = _peak(lambda: usem.encode_docs([BIG]))
    np.testing.assert_array_equal(big, small)
    assert big_peak < small_peak + 1_000_000, (big_peak, small_peak)
    assert big_peak < 256 * 2**20
    # a text under the limit is encoded whole (the cut changes only what lies past it)
    assert not np.array_equal(usem.encode_docs([cut[:USEM_MAX_CHARS // 2]]), small)


def test_dcl_model_tokenize_is_bounded(tiny_model_dir):
    from mlirkit.encoders.dcl_model import DisentangledEncoder

    model = DisentangledEncoder.from_backbone(str(tiny_model_dir), max_length=32, seed=0)
    a = model.tokenize([BIG], "passage: ")
    b = model.tokenize([BIG[:32 * CHARS_PER_TOKEN]], "passage: ")
    assert a["input_ids"].shape[1] == 32 and (a["input_ids"] == b["input_ids"]).all()
