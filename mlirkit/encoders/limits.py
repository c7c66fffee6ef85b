"""Bounded memory per document: every encoder cuts its input before tokenising.

- Token encoders (``hf``, ``e5-q4``, ``dcl``) truncate at ``max_length`` tokens; the tokenizer itself
  is fed at most ``max_length * CHARS_PER_TOKEN`` characters of ``prefix + text``, so a 50 MB document
  costs no more than a 16 K-character one. No subword piece of the supported vocabularies spans 32
  characters, so the cut never changes the tokens kept, except for a text whose first ``max_length``
  tokens are spread over more than 32 characters each (long runs of whitespace or of characters the
  tokenizer drops).
- ``usem`` (no token limit of its own; its memory grows with the text) encodes the first
  ``USEM_MAX_CHARS`` characters of a text and records that limit in its fingerprint.

``docs/encoders.md`` ("Maximum input length") documents both limits.
"""
from __future__ import annotations

from typing import Iterable

#: characters of input per token of ``max_length`` handed to a tokenizer
CHARS_PER_TOKEN = 32
#: characters of a text the ``usem`` encoder reads
USEM_MAX_CHARS = 16384


def clip_chars(texts: Iterable[str], max_chars: int) -> list[str]:
    """Each text cut to its first ``max_chars`` characters (shorter texts unchanged, not copied)."""
    return [t if len(t) <= max_chars else t[:max_chars] for t in texts]


def clip_for_tokenizer(texts: Iterable[str], max_length: int, prefix: str = "") -> list[str]:
    """``prefix + text`` for each text, cut to the characters a tokenizer truncating at ``max_length``
    tokens can use (the text is cut before the prefix is joined: a huge text is never copied whole)."""
    limit = max(max(int(max_length), 1) * CHARS_PER_TOKEN - len(prefix), 0)
    return [prefix + (t if len(t) <= limit else t[:limit]) for t in texts]


__all__ = ["CHARS_PER_TOKEN", "USEM_MAX_CHARS", "clip_chars", "clip_for_tokenizer"]
