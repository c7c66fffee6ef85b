"""The Python names follow docs/cli.md's table: every public callable of ``import mlirkit as mk`` that takes an index
directory takes it first, as ``index_dir`` (``Indexer(index_dir, encoder)`` as ``Searcher(index_dir, encoder)``), and
none takes a keyword the table refuses (``only_langs``, ``languages``, ...). :data:`DEVIATIONS` lists today's
exceptions with the keyword they become; it only shrinks."""
from __future__ import annotations

import inspect
import warnings

import pytest

import mlirkit as mk

#: keywords of one concept that the table spells otherwise -> the table's keyword
REFUSED = {"only_langs": "langs", "languages": "langs", "query_lang": "default_lang", "text_field": "text_fields",
           "depth": "k", "breakdown_k": "k", "index": "index_dir", "out": "output", "report": "output",
           "runtag": "tag"}
#: (public name, keyword) -> the keyword it becomes (outside this change's files: renamed with their owners)
DEVIATIONS = {("evaluate", "breakdown_k"): "k", ("fit_from_pairs", "text_field"): "text_fields",
              ("write_run", "depth"): "k"}


def _parameters():
    for name in sorted(mk.EXPORTS):
        obj = getattr(mk, name)
        function = obj.__init__ if inspect.isclass(obj) else obj
        if not callable(function):
            continue
        try:
            params = [p for p in inspect.signature(function).parameters if p != "self"]
        except (TypeError, ValueError):
            continue
        yield name, params


def test_index_dir_first_and_one_keyword_per_concept():
    found, used = [], set()
    for name, params in _parameters():
        if "index_dir" in params and params[0] != "index_dir":
            found.append(f"{name}: index_dir is not the first argument ({params[:3]})")
        for p in params:
            if (name, p) in DEVIATIONS:
                used.add((name, p))
            elif p in REFUSED:
                found.append(f"{name}({p}=): use {REFUSED[p]}=")
    assert not found, found
    assert used == set(DEVIATIONS), f"deviations no longer there (remove them): {set(DEVIATIONS) - used}"


def test_the_earlier_argument_order_of_the_indexers_works_warned(tmp_path, tiny_encoder):
    from mlirkit.io.records import Doc

    docs = [Doc("d1", "ein Satz", "de"), Doc("d2", "a sentence", "en")]
    with pytest.warns(DeprecationWarning, match=r"Indexer\(encoder, index_dir\) is renamed: use Indexer\(index_dir, encoder\)"):
        old = mk.Indexer(tiny_encoder, tmp_path / "old", show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = mk.Indexer(tmp_path / "new", tiny_encoder, show_progress=False)
    assert old.encoder is new.encoder is tiny_encoder and (old.index_dir, new.index_dir) == (tmp_path / "old", tmp_path / "new")
    old.index(docs)
    new.index(docs)
    for name in ("docid", "index"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "new" / name).read_bytes(), name
