"""One service index for every test here (40 documents: 8 words in en, de, fr, ja and und; SHIFT fitted on
5 en-de-fr triples of the tiny model), built once per session, with a corpus file of the documents' texts."""
from __future__ import annotations

import json

import pytest

WORDS = ["ferry", "package", "file", "river", "window", "garden", "engine", "letter"]
FORMS = (("en", "the", "is here"), ("de", "der", "ist hier"), ("fr", "le", "est ici"), ("und", "??", "??"),
         ("ja", "これは", "です"))


@pytest.fixture(scope="session")
def serve_index(tiny_encoder, tmp_path_factory):
    """(index dir, shift file, corpus file)."""
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc
    from tests.helpers import fit_triples_shift

    d = tmp_path_factory.mktemp("serve")
    fit_triples_shift(tiny_encoder, WORDS[:5], d / "shift.safetensors")
    docs = [Doc(f"{w}-{la}", f"{pre} {w} {post}", la) for w in WORDS for la, pre, post in FORMS]
    Indexer(d / "pivot", tiny_encoder, transform=d / "shift.safetensors", alpha=0.7, save_embeddings=True,
            show_progress=False).index(docs)
    corpus = d / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": doc.doc_id, "contents": doc.text, "lang": doc.lang}) + "\n"
                              for doc in docs), encoding="utf-8")
    return d / "pivot", d / "shift.safetensors", corpus


@pytest.fixture(scope="session")
def served(serve_index, tiny_encoder):
    """(service, index dir, shift file, corpus file)."""
    from mlirkit.serve import SearchService

    index, shift, corpus = serve_index
    service = SearchService(index, transform=shift, corpus=str(corpus), encoder=tiny_encoder)
    yield service, index, shift, corpus
    service.close()
