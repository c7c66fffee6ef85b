"""Free text: ``Searcher.search_text`` equals the record path, and the decided language is the one the shift uses."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Query
from mlirkit.search import QueryLanguage, Searcher, TextResult
from mlirkit.search.langid import EmbeddingLangId, Py3LangId, decide_languages, make_identifier
from tests.search.test_query_shift import QUERIES, shift_index  # noqa: F401  (module fixture)

GERMAN = "Die Fähre fährt jeden Morgen über den breiten Fluss zum anderen Ufer."
FRENCH = "Le bateau traverse la rivière chaque matin pour rejoindre l'autre rive."
ENGLISH = "The ferry crosses the wide river every morning to reach the other bank."


def _ids(hits):
    return [(h.doc_id, round(h.score, 5)) for h in hits]


@pytest.fixture(scope="module")
def shifted(shift_index, tiny_encoder):
    d, _ = shift_index
    return Searcher(d / "pivot", tiny_encoder, query_shift="cosine")


def test_given_languages_equal_the_record_path(shifted):
    texts = [q.text for q in QUERIES]
    got = shifted.search_text(texts, k=12, langs=[q.lang for q in QUERIES])
    want = shifted.search(QUERIES, k=12)
    assert [r.text for r in got] == texts
    for q, r in zip(QUERIES, got):
        assert isinstance(r, TextResult) and r.language == QueryLanguage(q.lang, "given")
        assert _ids(r.hits) == _ids(want[q.query_id])
    # one string gives one result, one code applies to every text
    one = shifted.search_text(QUERIES[1].text, k=12, langs="de")
    assert isinstance(one, TextResult) and _ids(one.hits) == _ids(want["q2"])


def test_the_detected_language_is_the_one_the_shift_uses(shifted):
    got = shifted.search_text([GERMAN, FRENCH, ENGLISH], k=12)
    assert [(r.language.lang, r.language.how) for r in got] == [("de", "detected"), ("fr", "detected"),
                                                                ("en", "detected")]
    assert all(r.language.detected == r.language.lang and r.language.confidence >= 0.5 for r in got)
    for r in got:
        want = shifted.search([Query("q", r.text, r.language.lang)], k=12)["q"]
        assert _ids(r.hits) == _ids(want)
    # teeth: the German text scored as English (the pivot) ranks differently
    as_en = shifted.search([Query("q", GERMAN, "en")], k=12)["q"]
    assert _ids(as_en) != _ids(got[0].hits)


def test_unsure_detection_and_languages_without_a_vector_use_the_pivot(shift_index, tiny_encoder, shifted):
    d, _ = shift_index
    sure_only = Searcher(d / "pivot", tiny_encoder, query_shift="cosine", langid_threshold=1.0)
    r = sure_only.search_text("ok", k=12)
    assert (r.language.lang, r.language.how) == ("en", "pivot") and r.language.confidence < 1.0
    assert _ids(r.hits) == _ids(shifted.search([Query("q", "ok", "en")], k=12)["q"])
    uk = shifted.search_text("the river", k=12, langs="uk")  # uk documents exist, but the shift has no uk vector
    assert (uk.language.lang, uk.language.how) == ("en", "pivot")
    assert _ids(uk.hits) == _ids(shifted.search([Query("q", "the river", "en")], k=12)["q"])


def test_pivot_decisions_are_counted_as_the_record_path_counts_them(shift_index, tiny_encoder):
    d, _ = shift_index
    free = Searcher(d / "pivot", tiny_encoder, query_shift="cosine", langid_threshold=1.0)
    records = Searcher(d / "pivot", tiny_encoder, query_shift="cosine")
    free.search_text(["ok", "the river"], k=3, langs=[None, "uk"])  # unsure detection; a language without a vector
    records.search([Query("a", "ok", None), Query("b", "the river", "uk")], k=3)
    counts = {key: n for key, n in free.shift.counts.items() if key.startswith("pivot_fallback")}
    assert counts == {"pivot_fallback:und": 1, "pivot_fallback:uk": 1}
    assert counts == {key: n for key, n in records.shift.counts.items() if key.startswith("pivot_fallback")}


def test_without_the_query_time_shift_the_language_is_reported_only(shift_index, tiny_encoder):
    d, _ = shift_index
    plain = Searcher(d / "pivot", tiny_encoder)
    r = plain.search_text(GERMAN, k=5)
    assert (r.language.lang, r.language.how) == ("de", "detected")
    assert _ids(r.hits) == _ids(plain.search([Query("q", GERMAN, "de")], k=5)["q"])
    unsure = Searcher(d / "pivot", tiny_encoder, langid_threshold=1.0).search_text("ok", k=5)
    assert (unsure.language.lang, unsure.language.how) == ("und", "undetermined")
    with pytest.raises(MlirkitError, match="alpha"):
        plain.search_text(GERMAN, k=5, alpha=0.5)


def test_alpha_per_call_equals_a_searcher_built_with_it(shift_index, tiny_encoder, shifted):
    d, _ = shift_index
    got = shifted.search_text([q.text for q in QUERIES], k=10, langs=[q.lang for q in QUERIES], alpha=0.3)
    want = Searcher(d / "pivot", tiny_encoder, alpha=0.3).search(QUERIES, k=10)
    for q, r in zip(QUERIES, got):
        assert _ids(r.hits) == _ids(want[q.query_id])
    assert _ids(got[1].hits) != _ids(shifted.search([QUERIES[1]], k=10)["q2"])  # alpha 0.7 by default
    with pytest.raises(MlirkitError, match="alpha"):
        shifted.search_text("der Fluss", langs="de", alpha={"xx": 0.5})


@pytest.mark.parametrize("texts, langs, error, match", [
    (None, None, TypeError, "texts must be a string"),
    (5, None, TypeError, "texts must be a string"),
    ("", None, MlirkitError, "empty"),
    ("   \n", None, MlirkitError, "empty"),
    ("\u200b\u200b", None, MlirkitError, "empty"),
    ("the river \ud800", None, MlirkitError, "not valid Unicode"),  # the tokenizer's TypeError before  # zero-width spaces: no visible text (searched before)
    (["a river", "\u202e\u2066"], None, MlirkitError, r"texts\[1\] is empty"),  # direction marks only
    ([], None, MlirkitError, "empty list"),
    (["a river", 3], None, TypeError, r"texts\[1\] is int"),
    (["a", "b"], ["de"], MlirkitError, "one per text"),
    ("a river", "english", MlirkitError, "invalid language"),
    ("a river", ["de", None], MlirkitError, "one per text"),
])
def test_misuse_is_one_clear_error(shifted, texts, langs, error, match):
    with pytest.raises(error, match=match):
        shifted.search_text(texts, langs=langs)


def test_bad_k_and_records_that_are_not_records(shifted):
    for k in (0, -1, 1.5, True):
        with pytest.raises(MlirkitError, match="k must be a positive integer"):
            shifted.search_text("the river", k=k)
    with pytest.raises(TypeError, match=r"queries\[0\] is NoneType"):
        shifted.search([None])
    with pytest.raises(TypeError, match="search_text"):
        shifted.search(["the river"])


def test_unknown_identifier_names_get_did_you_mean(shift_index, tiny_encoder):
    d, _ = shift_index
    with pytest.raises(MlirkitError, match="did you mean: py3langid"):
        Searcher(d / "pivot", tiny_encoder, language_identifier="py3langd")
    with pytest.raises(MlirkitError, match=r"\[0, 1\]"):
        Searcher(d / "pivot", tiny_encoder, langid_threshold=1.5)


def test_identifiers_answer_in_the_candidates_spelling():
    for name in ("py3langid", "lingua"):
        found = make_identifier(name, ["en", "pt-BR", "zh-CN"]).identify(
            ["O gato dorme em cima da mesa da cozinha todas as tardes.", "我们明天早上在火车站见面。"])
        assert [code for code, _ in found] == ["pt-BR", "zh-CN"], name
        assert all(0.0 <= conf <= 1.0 for _, conf in found)
    with pytest.raises(MlirkitError, match="at least two"):
        Py3LangId(["en", "xx"])


def test_the_embedding_identifier_reads_the_transform_classifier():
    from mlirkit.transforms.langid import LangIdClassifier

    class WithClassifier:
        langid = LangIdClassifier(["de", "en"], np.array([[1.0, 0.0], [0.0, 1.0]]) * 10, np.zeros(2))

    found = EmbeddingLangId(["de", "en"], WithClassifier()).identify(["a", "b"], np.array([[1.0, 0.1], [0.0, 2.0]]))
    assert [code for code, _ in found] == ["de", "en"] and all(conf > 0.9 for _, conf in found)
    with pytest.raises(MlirkitError, match="--fit-langid"):
        EmbeddingLangId(["de", "en"], object())


def test_the_decision_rule():
    has = {"en", "de"}.__contains__
    got = decide_languages(["fr", None, None, None], [None, ("de", 0.9), ("de", 0.2), ("fr", 0.99)], threshold=0.5,
                           pivot="en", has_vector=has)
    assert got == [QueryLanguage("en", "pivot"), QueryLanguage("de", "detected", "de", 0.9),
                   QueryLanguage("en", "pivot", "de", 0.2), QueryLanguage("en", "pivot", "fr", 0.99)]
    plain = decide_languages([None, "fr"], [("de", 0.2), None], threshold=0.5, pivot=None, has_vector=None)
    assert plain == [QueryLanguage("und", "undetermined", "de", 0.2), QueryLanguage("fr", "given")]
