"""Attacks on the Python API: ``Searcher`` and ``search_text`` with hostile texts, languages, k and alpha;
the readers and ``evaluate`` with inputs of the wrong shape. Expected: one ``MlirkitError`` (or ``TypeError`` for a
wrong type) whose one-line message names the argument; odd but valid text is answered."""
from __future__ import annotations

from experiments.hostile.harness import Case, Outcome, api

__all__ = ["CASES"]

_SEARCHERS: dict = {}


def _searcher(ws, shifted=True):
    key = "shift" if shifted else "plain"
    if key not in _SEARCHERS:
        from mlirkit.encoders import load_encoder
        from mlirkit.search import Searcher

        encoder = load_encoder(str(ws["model"]), "hf", max_length=64)
        options = {"query_shift": "cosine", "transform": ws["root"] / "t.safetensors"} if shifted else {}
        _SEARCHERS[key] = Searcher(ws["root"] / "index", encoder, **options)
    return _SEARCHERS[key]


def _errors():
    from mlirkit.base.errors import MlirkitError

    return (MlirkitError, TypeError)


def text_case(name, call, *needles, note=""):
    def attack(ws):
        return api(lambda: call(_searcher(ws)), _errors(), *needles)
    return Case("Python API", name, attack, f"one-line MlirkitError/TypeError naming {', '.join(needles)}", note)


def answered_case(name, call, check, note=""):
    def attack(ws):
        try:
            result = call(_searcher(ws))
        except Exception as e:  # noqa: BLE001
            return Outcome(False, f"{type(e).__name__}: {str(e)[:140]}")
        return Outcome(bool(check(result)), f"answered: {str(result)[:140]}")
    return Case("Python API", name, attack, "answered", note)


def _search_missing_index(ws):
    from mlirkit.search import Searcher

    return api(lambda: Searcher(ws["tmp"] / "nope", None), _errors(), "nope")


def _load_transform_dir(ws):
    from mlirkit.transforms import load_transform

    (ws["tmp"] / "d.safetensors").mkdir()
    return api(lambda: load_transform(ws["tmp"] / "d.safetensors"), _errors(), "d.safetensors")


def _evaluate_empty(ws):
    from mlirkit.eval import evaluate

    return api(lambda: evaluate({}, {"r": {"q1": {"d1": 1.0}}}, ["ndcg@10"]), _errors(), "qrels")


def _evaluate_nan_score(ws):
    from mlirkit.eval import evaluate

    return api(lambda: evaluate({"q1": {"d1": 1}}, {"r": {"q1": {"d1": float("nan")}}}, ["ndcg@10"]), _errors(),
               "non-finite")


def _index_none_text(ws):
    from mlirkit.encode import Indexer
    from mlirkit.encoders import load_encoder
    from mlirkit.io.records import Doc

    encoder = load_encoder(str(ws["model"]), "hf", max_length=64)
    out = ws["tmp"] / "ix"
    outcome = api(lambda: Indexer(out, encoder, show_progress=False).index([Doc("d1", None, "en")]), _errors(), "d1")
    if out.exists():
        return Outcome(False, outcome.observed + "; an index was written")
    return outcome


def _leace(change):
    """A LEACE file (fitted on random vectors) with one tensor changed, read with ``load_transform``."""
    def attack(ws):
        import numpy as np
        from safetensors import safe_open
        from safetensors.numpy import save_file

        from mlirkit.transforms import LEACETransform, load_transform, save_transform

        rng = np.random.default_rng(0)
        path = ws["tmp"] / "leace.safetensors"
        save_transform(LEACETransform().fit(rng.normal(size=(30, 8)).astype(np.float32), ["en", "de", "fr"] * 10), path)
        with safe_open(str(path), "np") as f:
            meta, arrays = f.metadata(), {k: f.get_tensor(k) for k in f.keys()}
        change(np, arrays)
        save_file(arrays, str(path), metadata=meta)
        return api(lambda: load_transform(path), _errors(), "leace.safetensors")
    return attack


CASES = [
    Case("transform files", "LEACE file whose erasure is scaled by 2 (not a projection)",
         _leace(lambda np, a: a.update({"leace.left": a["leace.left"] * 2})), "one-line MlirkitError naming the file"),
    Case("transform files", "LEACE file with a NaN in its bias",
         _leace(lambda np, a: a.update({"leace.bias": np.full_like(a["leace.bias"], np.nan)})),
         "one-line MlirkitError naming the file"),
    Case("transform files", "LEACE file whose right factor has another width",
         _leace(lambda np, a: a.update({"leace.right": a["leace.right"][:, :7]})), "one-line MlirkitError naming the file"),
    text_case("search_text(None)", lambda s: s.search_text(None), "texts"),
    text_case("search_text of zero-width spaces", lambda s: s.search_text("\u200b\u200b"), "empty"),
    text_case("search_text with a lone surrogate", lambda s: s.search_text("ferry \ud800"), "surrogate"),
    text_case("search_text(langs='xx-')", lambda s: s.search_text("ferry", langs="xx-"), "xx-"),
    text_case("search_text(langs=['de'] for two texts)", lambda s: s.search_text(["a", "b"], langs=["de"]), "langs"),
    text_case("search_text(alpha=nan)", lambda s: s.search_text("ferry", alpha=float("nan")), "alpha"),
    text_case("search_text(alpha=-1)", lambda s: s.search_text("ferry", alpha=-1.0), "alpha"),
    text_case("search_text(alpha={'xx': 0.5})", lambda s: s.search_text("ferry", alpha={"xx": 0.5}), "xx"),
    text_case("search_text(k=True)", lambda s: s.search_text("ferry", k=True), "k"),
    text_case("search_text(k=2.0)", lambda s: s.search_text("ferry", k=2.0), "k"),
    text_case("search([None])", lambda s: s.search([None]), "queries[0]"),
    answered_case("search_text of 1,000,000 characters", lambda s: s.search_text("ferry " * 166_667, k=3),
                  lambda r: len(r.hits) == 3, "the encoder reads its max_length tokens"),
    answered_case("search_text(k=10**12)", lambda s: s.search_text("ferry", k=10**12), lambda r: len(r.hits) == 6,
                  "k beyond the index: every document, never an allocation of k"),
    answered_case("search_text(langs='DE')", lambda s: s.search_text("Fähre", langs="DE", k=2),
                  lambda r: r.language.lang == "de"),
    Case("Python API", "Searcher on a missing index", _search_missing_index, "one-line MlirkitError naming it"),
    Case("Python API", "load_transform of a directory", _load_transform_dir, "one-line MlirkitError naming it"),
    Case("Python API", "evaluate with empty qrels", _evaluate_empty, "one-line MlirkitError naming qrels"),
    Case("Python API", "evaluate with a NaN score in a run", _evaluate_nan_score, "one-line MlirkitError naming the run"),
    Case("Python API", "Indexer on a Doc whose text is None", _index_none_text, "one-line error naming d1; no index"),
]
