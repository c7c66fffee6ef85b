"""Language codes. A document or query of unknown language carries :data:`UNKNOWN` ("und", ISO 639-2)."""
from __future__ import annotations

UNKNOWN = "und"


def is_known(lang: str | None) -> bool:
    return bool(lang) and lang != UNKNOWN
