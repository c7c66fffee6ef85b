"""Token alignments for the token-level DCL losses.

Two sources, both giving pairs of subword positions ``(i, j)`` into the model inputs of a parallel pair:

- Pharaoh ``i-j`` files (fast_align / awesome-align output): word indices over whitespace-split text,
  mapped onto the *first* subword of each word (:func:`word_first_subwords`, :func:`map_word_alignment`).
- Mutual argmax of the encoder's own contextual similarities (as in SimAlign's "ArgMax", Jalili Sabet
  et al. 2020): ``(i, j)`` is kept when ``j = argmax_j' sim(i, j')`` and ``i = argmax_i' sim(i', j)``,
  special tokens and prompt-prefix tokens excluded (:func:`mutual_argmax_alignment`).

:class:`AlignmentCache` memoises alignments by text pair (and model key), optionally on disk as JSON.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from mlirkit.base.errors import format_error

Alignment = list[tuple[int, int]]


def parse_pharaoh(line: str, *, path: object = "<alignment>", lineno: int | None = None) -> Alignment:
    """``"0-0 1-2 2-1"`` -> ``[(0, 0), (1, 2), (2, 1)]``; a malformed item raises naming file and line."""
    pairs: Alignment = []
    for item in line.split():
        left, sep, right = item.partition("-")
        # awesome-align can append a probability as a third field ("0-1-0.93"): ignore it
        right = right.split("-")[0]
        if not sep or not left.isdigit() or not right.isdigit():
            raise format_error(path, lineno, f"bad alignment item {item!r} (expected i-j)")
        pairs.append((int(left), int(right)))
    return pairs


def read_pharaoh(path: str | os.PathLike[str]) -> Iterator[Alignment]:
    """One alignment per line of a Pharaoh file (an empty line = no aligned words)."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            yield parse_pharaoh(line, path=path, lineno=n)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text``."""
    spans, start = [], None
    for i, ch in enumerate(text):
        if ch.isspace():
            if start is not None:
                spans.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        spans.append((start, len(text)))
    return spans


def word_first_subwords(text: str, offsets: Sequence[tuple[int, int]], prefix_len: int = 0,
                        special: Sequence[int] | None = None) -> list[int | None]:
    """For each whitespace word of ``text``, the position of its first subword in the model input.

    ``offsets`` are the tokenizer's character offsets of ``prefix + text`` (``prefix_len`` characters of
    prompt before the text); ``special`` the special-tokens mask. A word cut off by truncation maps to None.
    """
    spans = word_spans(text)
    first: list[int | None] = [None] * len(spans)
    w = 0
    for pos, (a, b) in enumerate(offsets):
        if (special is not None and special[pos]) or b <= a:
            continue
        a, b = a - prefix_len, b - prefix_len
        if b <= 0:
            continue  # a prompt token
        while w < len(spans) and spans[w][1] <= a:
            w += 1
        if w == len(spans):
            break
        if first[w] is None and a < spans[w][1] and b > spans[w][0]:
            first[w] = pos
    return first


def map_word_alignment(pairs: Iterable[tuple[int, int]], src_first: Sequence[int | None],
                       tgt_first: Sequence[int | None]) -> Alignment:
    """Word pairs -> first-subword position pairs; pairs with a word out of range or truncated are dropped."""
    out: Alignment = []
    for i, j in pairs:
        if i < len(src_first) and j < len(tgt_first):
            a, b = src_first[i], tgt_first[j]
            if a is not None and b is not None:
                out.append((a, b))
    return out


def valid_token_mask(offsets: Sequence[tuple[int, int]], special: Sequence[int], prefix_len: int = 0) -> list[bool]:
    """True for real text tokens: not special, not padding, not part of the prompt prefix."""
    return [not s and b > a and b > prefix_len for (a, b), s in zip(offsets, special)]


def mutual_argmax_alignment(sim, src_valid: Sequence[bool], tgt_valid: Sequence[bool]) -> Alignment:
    """Mutual-argmax alignment from a similarity matrix sim (Ls, Lt) restricted to valid positions.

    Returns ``(i, j)`` in increasing ``i`` with ``j`` the best valid target of ``i`` and ``i`` the best
    valid source of ``j``.
    """
    import numpy as np

    s = np.asarray(sim, dtype=np.float64)  # (Ls, Lt)
    rows = np.flatnonzero(np.asarray(src_valid, dtype=bool)[: s.shape[0]])
    cols = np.flatnonzero(np.asarray(tgt_valid, dtype=bool)[: s.shape[1]])
    if rows.size == 0 or cols.size == 0:
        return []
    sub = s[np.ix_(rows, cols)]  # (r, c)
    best_col = sub.argmax(1)  # (r,)
    best_row = sub.argmax(0)  # (c,)
    return [(int(rows[i]), int(cols[best_col[i]])) for i in range(rows.size) if best_row[best_col[i]] == i]


class AlignmentCache:
    """Alignments keyed by (model key, source input, target input); JSON-persistable."""

    def __init__(self, model_key: str = "") -> None:
        self.model_key = model_key
        self._data: dict[str, Alignment] = {}

    def key(self, src: str, tgt: str) -> str:
        return hashlib.sha1(f"{self.model_key}\0{src}\0{tgt}".encode()).hexdigest()

    def get(self, src: str, tgt: str) -> Alignment | None:
        return self._data.get(self.key(src, tgt))

    def put(self, src: str, tgt: str, alignment: Alignment) -> None:
        self._data[self.key(src, tgt)] = [(int(i), int(j)) for i, j in alignment]

    def __len__(self) -> int:
        return len(self._data)

    def merge(self, other: "AlignmentCache") -> int:
        """Add ``other``'s alignments not present here (same model key); returns how many were added."""
        new = {k: v for k, v in other._data.items() if k not in self._data}
        self._data.update(new)
        return len(new)

    def save(self, path: str | os.PathLike[str]) -> None:
        from mlirkit.base.fs import atomic_file

        with atomic_file(path, overwrite=True) as f:
            json.dump({"model_key": self.model_key, "alignments": self._data}, f)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "AlignmentCache":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise format_error(path, None, f"cannot read alignment cache ({e})") from e
        cache = cls(data.get("model_key", ""))
        cache._data = {k: [tuple(p) for p in v] for k, v in data.get("alignments", {}).items()}
        return cache


__all__ = ["Alignment", "AlignmentCache", "map_word_alignment", "mutual_argmax_alignment", "parse_pharaoh",
           "read_pharaoh", "valid_token_mask", "word_first_subwords", "word_spans"]
