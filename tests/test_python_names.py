"""The Python names follow docs/cli.md's table: every public function, class and public method of every mlirkit
module (its ``__all__``, else its names without a leading underscore; modules private by name skipped) that takes
an index directory takes it first, as ``index_dir`` (``Indexer(index_dir, encoder)`` as ``Searcher(index_dir,
encoder)``), and none takes a keyword the table refuses (``only_langs``, ``text_field``, ``index_path``, ...).
The signatures are read from the source (``ast``), so no module is imported. :data:`DEVIATIONS` lists today's
exceptions with the keyword they become; it only shrinks."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mlirkit as mk

ROOT = Path(__file__).resolve().parents[1]
#: keywords of one concept that the table spells otherwise -> the table's keyword
REFUSED = {"only_langs": "langs", "languages": "langs", "query_lang": "default_lang", "text_field": "text_fields",
           "depth": "k", "breakdown_k": "k", "index_path": "index_dir", "report": "output", "runtag": "tag"}
#: (public name, keyword) -> the keyword it becomes (today's synonyms still to rename)
DEVIATIONS: dict[tuple[str, str], str] = {
    ("mlirkit.pyserini.encoders.MlirkitQueryEncoder", "query_lang"): "default_lang",
    ("mlirkit.pyserini.query_shift.QueryShiftFaissSearcher", "query_lang"): "default_lang",
    ("mlirkit.pyserini.query_shift.searcher_class", "query_lang"): "default_lang",
    ("mlirkit.encode.ray_engine.encode_with_ray", "index_dir"): "index_dir, first",
}
_VARIANT = "the query language of a dataset variant (one benchmark id each), not the default of queries without one"
#: (public name, keyword) -> the other concept the word names there (not a synonym of the refused concept)
OTHER_CONCEPTS: dict[tuple[str, str], str] = {
    ("mlirkit.benchmark.check.figures", "report"): "the report.json read",
    ("mlirkit.benchmark.check.check", "report"): "the report.json read",
    ("mlirkit.benchmark.retrieval.transform_for_query_lang", "query_lang"): "the language of one query",
    **{(f"mlirkit.datasets.{name}", "query_lang"): _VARIANT for name in (
        "belebele.load", "belebele.available", "bundled.build_ddtp", "bundled.ddtp_queries",
        "ddtp_nonparallel.build_ddtp_nonparallel", "mlqa.load", "mlqa.available", "mlqa_r.load", "mlqa_r.available",
        "multieup.load", "multieup.available", "release.variant_dir", "release.release_files",
        "release.release_available", "release.where_release", "release.read_release", "xquad_r.load",
        "xquad_r.available", "xquad_r_zs.load_test", "xquad_r_zs.available")},
}


def declared_all(tree: ast.Module) -> set[str] | None:
    """The names of a module's literal ``__all__``, None when it declares none."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            return {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return None


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = function.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg not in ("self", "cls")]


def signatures(tree: ast.Module, module: str):
    """``(qualified name, parameter names)`` of every public function, class constructor and public method."""
    exported = declared_all(tree)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if not (node.name in exported if exported is not None else not node.name.startswith("_")):
            continue
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        item.name == "__init__" or not item.name.startswith("_")):
                    yield f"{module}.{node.name}.{item.name}".removesuffix(".__init__"), _parameters(item)
        else:
            yield f"{module}.{node.name}", _parameters(node)


def public_signatures(package: Path = ROOT / "mlirkit"):
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if any(part.startswith("_") and part != "__init__" for part in parts):
            continue
        module = ".".join(parts).removesuffix(".__init__")
        yield from signatures(ast.parse(path.read_text(encoding="utf-8")), module)


def problems(named_parameters, deviations: dict = DEVIATIONS) -> tuple[list[str], set]:
    """What breaks the table, and the deviations and other concepts it met."""
    found, used = [], set()
    for name, params in named_parameters:
        if "index_dir" in params and params[0] != "index_dir":
            if (name, "index_dir") in deviations:
                used.add((name, "index_dir"))
            else:
                found.append(f"{name}: index_dir is not the first argument ({params[:3]})")
        for p in params:
            if (name, p) in deviations or (name, p) in OTHER_CONCEPTS:
                used.add((name, p))
            elif p in REFUSED:
                found.append(f"{name}({p}=): use {REFUSED[p]}=")
    return found, used


def test_index_dir_first_and_one_keyword_per_concept():
    found, used = problems(public_signatures())
    assert not found, "\n".join(found)
    stale = (set(DEVIATIONS) | set(OTHER_CONCEPTS)) - used
    assert not stale, f"deviations no longer there (remove them): {sorted(stale)}"


def test_the_signatures_read_cover_every_module_and_the_package_exports():
    names = {name for name, _ in public_signatures()}
    assert {"mlirkit.shift.posthoc.apply_to_index", "mlirkit.index.reader.DenseIndex",
            "mlirkit.transforms.parallel.open_parallel", "mlirkit.transforms.corpus_fit.corpus_vectors",
            "mlirkit.search.searcher.Searcher.search"} <= names
    assert len(names) > 500


@pytest.mark.parametrize("source, needle", [
    ("def fit(x, only_langs=None): ...", "planted.fit(only_langs=): use langs="),
    ("class Reader:\n    def __init__(self, text_field='text'): ...", "planted.Reader(text_field=): use text_fields="),
    ("class Index:\n    def open(self, index_path): ...", "planted.Index.open(index_path=): use index_dir="),
    ("def apply(transform, index_dir): ...", "planted.apply: index_dir is not the first argument"),
    ("__all__ = ['f']\ndef f(*, query_lang=None): ...", "planted.f(query_lang=): use default_lang="),
])
def test_a_planted_synonym_fails(source, needle):
    found, _ = problems(signatures(ast.parse(source), "planted"))
    assert any(needle in line for line in found), found


def test_a_private_or_unexported_name_is_not_public_surface():
    source = "__all__ = ['g']\ndef f(only_langs=None): ...\ndef g(langs=None): ...\ndef _h(text_field=''): ..."
    assert problems(signatures(ast.parse(source), "planted")) == ([], set())


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
