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
#: (public name, keyword) -> the keyword it becomes
DEVIATIONS: dict[tuple[str, str], str] = {}


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


def test_the_keywords_of_an_earlier_release_work_warned(tmp_path):
    """``evaluate(breakdown_k=)``, ``write_run(depth=)`` and ``fit_from_pairs(text_field=)`` still do what their new
    keyword does, warned ``renamed: use ...(NEW=)``; both spellings at once are refused."""
    from mlirkit.base.errors import MlirkitError
    from mlirkit.io.trec import read_run

    run = {"q": {f"d{i}": float(i) for i in range(5)}}
    with pytest.warns(DeprecationWarning, match=r"write_run\(depth=\) is renamed: use write_run\(k=\)"):
        mk.write_run(run, tmp_path / "old.trec", "t", depth=2)
    mk.write_run(run, tmp_path / "new.trec", "t", k=2)
    assert read_run(tmp_path / "old.trec") == read_run(tmp_path / "new.trec") == {"q": {"d4": 4.0, "d3": 3.0}}
    with pytest.raises(MlirkitError, match="both depth= and k="):
        mk.write_run(run, tmp_path / "both.trec", "t", depth=2, k=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'deep'"):
        mk.write_run(run, tmp_path / "typo.trec", "t", deep=2)

    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    runs = {"r": {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"y": 2.0, "c": 1.0}}}
    langs = {"a": "en", "b": "de", "c": "de", "x": "en", "y": "en"}
    with pytest.warns(DeprecationWarning, match=r"evaluate\(breakdown_k=\) is renamed: use evaluate\(k=\)"):
        old = mk.evaluate(qrels, runs, ["recall@3"], doc_langs=langs, query_langs="en", significance=None,
                          breakdown_k=2)
    new = mk.evaluate(qrels, runs, ["recall@3"], doc_langs=langs, query_langs="en", significance=None, k=2)
    assert sorted(old.per_language) == sorted(new.per_language) and any("@2" in key for key in new.per_language)
    for key in new.per_language:
        assert old.per_language[key].equals(new.per_language[key])

    import json

    from mlirkit.testing.fake_encoder import FakeEncoder

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"id": i, "lang": l, "body": f"{l} body {i}", "text": "the same"}) + "\n"
                             for i in ("a", "b") for l in ("en", "de")), "utf-8")
    with pytest.warns(DeprecationWarning, match=r"fit_from_pairs\(text_field=\) is renamed: use fit_from_pairs\(text_fields=\)"):
        old = mk.fit_from_pairs(FakeEncoder(dim=8), pairs, source_lang="en", text_field="body")
    new = mk.fit_from_pairs(FakeEncoder(dim=8), pairs, source_lang="en", text_fields="body")
    text = mk.fit_from_pairs(FakeEncoder(dim=8), pairs, source_lang="en")  # the default field, "text"
    assert (old.params_["de"] == new.params_["de"]).all() and not (text.params_["de"] == new.params_["de"]).all()
