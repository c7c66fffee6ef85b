"""The Python names follow docs/cli.md's table: every public callable of ``import mlirkit as mk`` that takes an index
directory takes it first, as ``index_dir`` (``Indexer(index_dir, encoder)`` as ``Searcher(index_dir, encoder)``), and
none takes a keyword the table refuses (``only_langs``, ``languages``, ...). :data:`DEVIATIONS` lists today's
exceptions with the keyword they become; it only shrinks."""
from __future__ import annotations

import inspect

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


def test_the_keywords_of_today_only(tmp_path):
    """``write_run(k=)``, ``evaluate(k=)`` and ``fit_from_pairs(text_fields=)`` do what they say; the keywords that
    spelt them before (``depth=``, ``breakdown_k=``, ``text_field=``) are refused like any unknown keyword."""
    from mlirkit.io.trec import read_run

    run = {"q": {f"d{i}": float(i) for i in range(5)}}
    mk.write_run(run, tmp_path / "new.trec", "t", k=2)
    assert read_run(tmp_path / "new.trec") == {"q": {"d4": 4.0, "d3": 3.0}}
    for keyword in ("depth", "deep"):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{keyword}'"):
            mk.write_run(run, tmp_path / "typo.trec", "t", **{keyword: 2})

    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    runs = {"r": {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"y": 2.0, "c": 1.0}}}
    langs = {"a": "en", "b": "de", "c": "de", "x": "en", "y": "en"}
    new = mk.evaluate(qrels, runs, ["recall@3"], doc_langs=langs, query_langs="en", significance=None, k=2)
    assert any("@2" in key for key in new.per_language) and not any("@3" in key for key in new.per_language)
    with pytest.raises(TypeError, match="unexpected keyword argument 'breakdown_k'"):
        mk.evaluate(qrels, runs, ["recall@3"], doc_langs=langs, query_langs="en", significance=None, breakdown_k=2)

    import json

    from mlirkit.testing.fake_encoder import FakeEncoder

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"id": i, "lang": l, "body": f"{l} body {i}", "text": "the same"}) + "\n"
                             for i in ("a", "b") for l in ("en", "de")), "utf-8")
    new = mk.fit_from_pairs(FakeEncoder(dim=8), pairs, source_lang="en", text_fields="body")
    text = mk.fit_from_pairs(FakeEncoder(dim=8), pairs, source_lang="en")  # the default field, "text"
    assert not (text.params_["de"] == new.params_["de"]).all()
    with pytest.raises((TypeError, mk.MlirkitError), match="text_field"):
        mk.fit_from_pairs(FakeEncoder(dim=8), pairs, source_lang="en", text_field="body")
