"""mlirkit: multilingual dense retrieval without language bias (SHIFT, DCL, TLR@k).

The names a session chains, from one import (docs/python.md)::

    import mlirkit as mk
    encoder = mk.load_encoder("multilingual-e5-small-q4")
    mk.Indexer("indexes/e5", encoder, save_embeddings=True).index(mk.read_corpus("mlirkit/ddtp/en"))
    shift = mk.fit_from_pairs(encoder, "mlirkit/parallel/gettext", source_lang="en", max_pairs=200)
    mk.save_transform(shift, "vectors/e5.shift")
    shift = mk.fill_missing_from_index("indexes/e5", shift)   # the fit step: languages the pairs lack
    mk.apply_to_index("indexes/e5", shift, "indexes/e5-shift", alpha=0.6)
    results = mk.Searcher("indexes/e5-shift", encoder).search(mk.read_topics("mlirkit/ddtp/en"))
    mk.evaluate("mlirkit/ddtp/en", results, ["ndcg@20", "tlr@20"], doc_langs="indexes/e5", query_langs="en")

Each name is defined in one module (:data:`EXPORTS`) and imported from it on first use, so
``import mlirkit`` is cheap (no torch, faiss, pyserini, ranx or ir_datasets) and changes nothing in the
process. mlirkit's readers take its ``mlirkit/...`` ids as they are (``mk.read_topics("mlirkit/ddtp/en")``:
the ids are registered before the first id is looked up, :func:`mlirkit.io.sources.on_first_lookup`); for
``ir_datasets.load("mlirkit/...")`` itself, call :func:`register_datasets` first (docs/datasets.md).
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> the module that defines it
EXPORTS = {
    # encoders
    "load_encoder": "mlirkit.encoders",
    # inputs and run files
    "read_corpus": "mlirkit.io.corpus",
    "read_topics": "mlirkit.io.topics",
    "read_qrels": "mlirkit.io.qrels",
    "read_doc_langs": "mlirkit.io.doc_langs",
    "read_run": "mlirkit.io.trec",
    "write_run": "mlirkit.io.trec",
    # encode a corpus into an index, open an index
    "Indexer": "mlirkit.encode.indexer",
    "DenseIndex": "mlirkit.index.reader",
    # search
    "Searcher": "mlirkit.search.searcher",
    "SearchResults": "mlirkit.search.results",
    "Hit": "mlirkit.search.results",
    "TextResult": "mlirkit.search.results",
    "QueryLanguage": "mlirkit.search.langid",
    # transforms: fit, load, save, apply
    "Alpha": "mlirkit.transforms.alpha",
    "fit_from_pairs": "mlirkit.transforms.fit",
    "fit_from_index": "mlirkit.shift.from_index",
    "load_transform": "mlirkit.transforms.io",
    "save_transform": "mlirkit.transforms.io",
    "fill_missing_from_index": "mlirkit.shift.posthoc",
    "apply_to_index": "mlirkit.shift.posthoc",
    # evaluate
    "evaluate": "mlirkit.eval.api",
    "EvaluationResult": "mlirkit.eval.result",
    # the error every refusal raises
    "MlirkitError": "mlirkit.base.errors",
    # make the mlirkit/... ids visible to ir_datasets.load
    "register_datasets": "mlirkit.datasets",
}

__all__ = ["__version__", *sorted(EXPORTS)]


def __getattr__(name: str) -> Any:
    """Import ``name`` from its module on first use (then it is an ordinary attribute)."""
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mlirkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _register_datasets() -> None:
    from mlirkit.datasets import register_datasets

    register_datasets()


# the package root connects the readers (mlirkit.io, below) to mlirkit's own ids (mlirkit.datasets, above them):
# registered when the first id is looked up, not now
from mlirkit.io.sources import on_first_lookup  # noqa: E402

on_first_lookup(_register_datasets)
