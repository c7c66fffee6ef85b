"""A service over the query-shift test index (40 documents: 8 words in en, de, fr, ja and und), texts from a corpus file."""
from __future__ import annotations

import json

import pytest

from tests.search.test_query_shift import shift_index  # noqa: F401  (module fixture)

WORDS = ["ferry", "package", "file", "river", "window", "garden", "engine", "letter"]
FORMS = (("en", "the", "is here"), ("de", "der", "ist hier"), ("fr", "le", "est ici"), ("und", "??", "??"),
         ("ja", "これは", "です"))


@pytest.fixture(scope="module")
def served(shift_index, tiny_encoder, tmp_path_factory):
    """(service, index dir, shift file, corpus file) over shift_index's pivot index."""
    from mlirkit.serve import SearchService

    d, _ = shift_index
    corpus = tmp_path_factory.mktemp("corpus") / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"{w}-{la}", "contents": f"{pre} {w} {post}", "lang": la}) + "\n"
                              for w in WORDS for la, pre, post in FORMS), encoding="utf-8")
    service = SearchService(d / "pivot", transform=d / "shift.safetensors", corpus=str(corpus), encoder=tiny_encoder)
    yield service, d / "pivot", d / "shift.safetensors", corpus
    service.close()
