"""Words of progress bars: units and their plurals, spelt right ("queries", not "querys")."""
from __future__ import annotations

_PLURALS = {"query": "queries", "doc": "docs", "document": "documents", "text": "texts", "batch": "batches"}


def plural(word: str) -> str:
    """The plural of a progress-bar noun (``query`` -> ``queries``, ``doc`` -> ``docs``)."""
    if word in _PLURALS:
        return _PLURALS[word]
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


__all__ = ["plural"]
