"""Token alignment: mutual argmax, Pharaoh parsing, word -> subword mapping, the cache."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.train.alignment import (
    AlignmentCache, map_word_alignment, mutual_argmax_alignment, parse_pharaoh, read_pharaoh,
    valid_token_mask, word_first_subwords, word_spans,
)


def test_mutual_argmax_on_constructed_matrix():
    sim = np.array([
        [9.0, 9.0, 9.0, 9.0],  # 0: a special token, highest everywhere; must be ignored
        [0.0, 0.9, 0.1, 0.0],  # 1 -> 1, and 1 is column 1's best -> kept
        [0.0, 0.8, 0.2, 0.1],  # 2 -> 1, but column 1 prefers row 1 -> dropped
        [0.0, 0.1, 0.3, 0.7],  # 3 -> 3, column 3's best is 3 -> kept
    ])
    src_valid = [False, True, True, True]
    tgt_valid = [False, True, True, True]
    assert mutual_argmax_alignment(sim, src_valid, tgt_valid) == [(1, 1), (3, 3)]
    # with the special token allowed, it would win everything
    assert mutual_argmax_alignment(sim, [True] * 4, [True] * 4) == [(0, 0)]
    assert mutual_argmax_alignment(sim, [False] * 4, tgt_valid) == []


def test_parse_pharaoh():
    assert parse_pharaoh("0-0 1-2  2-1\n") == [(0, 0), (1, 2), (2, 1)]
    assert parse_pharaoh("") == []
    assert parse_pharaoh("0-1-0.93") == [(0, 1)]  # awesome-align with probabilities
    with pytest.raises(MlirkitError, match=r"al\.txt:3: bad alignment item 'x-1'"):
        parse_pharaoh("0-0 x-1", path="al.txt", lineno=3)
    with pytest.raises(MlirkitError, match="bad alignment item '01'"):
        parse_pharaoh("01")


def test_read_pharaoh_file(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("0-0 1-1\n\n2-0\n0:1\n")
    it = read_pharaoh(p)
    assert next(it) == [(0, 0), (1, 1)]
    assert next(it) == []
    assert next(it) == [(2, 0)]
    with pytest.raises(MlirkitError, match=r"a\.txt:4"):
        next(it)


def test_word_spans():
    assert word_spans("  ab c\tdé ") == [(2, 4), (5, 6), (7, 9)]


def test_word_to_first_subword_with_prefix_and_specials():
    text = "unbelievable cats"
    prefix = "query: "
    p = len(prefix)
    # tokens: <s>, "query", ":", "un", "believ", "able", "cats", </s>, <pad>
    offsets = [(0, 0), (0, 5), (5, 6), (p, p + 2), (p + 2, p + 8), (p + 8, p + 12), (p + 13, p + 17), (0, 0), (0, 0)]
    special = [1, 0, 0, 0, 0, 0, 0, 1, 1]
    assert word_first_subwords(text, offsets, p, special) == [3, 6]
    assert valid_token_mask(offsets, special, p) == [False, False, False, True, True, True, True, False, False]
    # a word cut off by truncation maps to None and its alignment pairs are dropped
    assert word_first_subwords(text, offsets[:5] + [(0, 0)], p, special[:5] + [1]) == [3, None]
    assert map_word_alignment([(0, 1), (1, 0), (5, 0)], [3, None], [4, 7]) == [(3, 7)]


def test_word_to_subword_with_real_tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    prefix, text = "passage: ", "Die Katze schläft"
    enc = tok(prefix + text, return_offsets_mapping=True, return_special_tokens_mask=True)
    first = word_first_subwords(text, enc["offset_mapping"], len(prefix), enc["special_tokens_mask"])
    assert len(first) == 3 and all(f is not None for f in first) and first == sorted(first)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    for word, pos in zip(text.split(), first):
        assert word.lower().startswith(pieces[pos].lstrip("▁").lower()[:1])


def test_alignment_cache_round_trip(tmp_path):
    c = AlignmentCache("m")
    c.put("a b", "x y", [(1, 1), (2, 2)])
    assert c.get("a b", "x y") == [(1, 1), (2, 2)]
    assert c.get("a b", "x z") is None
    c.save(tmp_path / "c.json")
    d = AlignmentCache.load(tmp_path / "c.json")
    assert d.get("a b", "x y") == [(1, 1), (2, 2)] and len(d) == 1
    assert AlignmentCache("other").get("a b", "x y") is None
