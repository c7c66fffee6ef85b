"""experiments/serve_xquad.py: request bodies, runs, the language report and the macro from fake answers."""
from __future__ import annotations

import pytest

from experiments.serve_xquad import XQUAD_LANGS, batch_bodies, language_report, macro_ndcg, runs_per_lang
from mlirkit.serve.schemas import BatchRequest


def _answer(lang: str, how: str, hits: list[tuple[str, float]]) -> dict:
    return {"query": "q", "language": {"lang": lang, "how": how}, "shift": True,
            "hits": [{"doc_id": d, "score": s, "lang": "en"} for d, s in hits]}


def test_batch_bodies_split_at_the_limit_and_validate():
    texts = [f"question {i}" for i in range(5)]
    langs = ["de", "en", "zh", "ar", "hi"]
    plain = list(batch_bodies(texts, None, batch=2))
    given = list(batch_bodies(texts, langs, batch=2))
    assert [len(b["queries"]) for b in plain] == [2, 2, 1]
    assert all(q["lang"] is None for b in plain for q in b["queries"])
    assert [q["lang"] for b in given for q in b["queries"]] == langs
    assert [q["query"] for b in given for q in b["queries"]] == texts
    for body in plain + given:
        assert body["k"] == 20 and body["shift"] is True
        BatchRequest.model_validate(body)  # the service's own schema accepts each body


def test_one_run_per_language_keeps_translations_with_one_id_apart():
    answers = [_answer("de", "detected", [("d1", 0.9), ("d2", 0.5)]), _answer("en", "pivot", [("d3", 0.7)]),
               _answer("zh", "detected", [("d4", 0.8)])]
    runs = runs_per_lang(["q1", "q2", "q1"], ["de", "de", "zh"], answers)
    assert runs == {"de": {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d3": 0.7}}, "zh": {"q1": {"d4": 0.8}}}
    with pytest.raises(ValueError):
        runs_per_lang(["q1"], ["de"], answers)


def test_language_report_counts_right_languages_and_how():
    answers = [_answer("de", "detected", []), _answer("en", "pivot", []), _answer("ar", "given", []),
               _answer("zh-Hans", "detected", [])]
    report = language_report(answers, ["de", "de", "ar", "zh"])
    assert report["accuracy"] == 0.75  # the pivot's en is wrong for a German question; zh-Hans counts as zh
    assert report["per_lang"] == {"ar": 1.0, "de": 0.5, "zh": 1.0}
    assert report["how"] == {"detected": 2, "pivot": 1, "given": 1}


def test_macro_is_the_mean_over_the_eight_languages():
    per_lang = {la: 0.1 * (i + 1) for i, la in enumerate(XQUAD_LANGS)}
    assert macro_ndcg(per_lang) == pytest.approx(0.45)
    with pytest.raises(KeyError):
        macro_ndcg({"de": 0.5})
