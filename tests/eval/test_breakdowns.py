from __future__ import annotations

import pytest

from mlirkit.eval import evaluate
from mlirkit.eval.plots import language_mix

DOC_LANGS = {"en1": "en", "en2": "en", "de1": "de", "de2": "de", "fr1": "fr", "ja1": "ja"}
QRELS = {
    "q1": {"en1": 1, "de1": 1, "fr1": 1, "ja1": 1},  # 1/4 relevant in English
    "q2": {"en2": 1, "de2": 1},  # 1/2
}
RUN = {
    "q1": {"en1": 0.9, "en2": 0.8, "de1": 0.7, "fr1": 0.1},  # top-2: en1 en2 ; top-4 adds de1 fr1
    "q2": {"de2": 0.9, "x": 0.8, "en2": 0.1},  # top-2: de2 x(unknown)
}


def _result(**kw):
    return evaluate(QRELS, {"r": RUN}, ["samelang@2", "tlr@2", "recall@2"], doc_langs=DOC_LANGS, query_langs="en",
                    significance=None, **kw)


def test_samelang_and_expected_share():
    r = _result()
    assert r.per_query["r"]["samelang@2"] == {"q1": 1.0, "q2": 0.0}
    assert r.value("r", "samelang@2") == 0.5
    assert r.value("r", "samelang@2 (expected)") == pytest.approx((1 / 4 + 1 / 2) / 2)


def test_recall_by_document_language():
    df = _result().per_language["recall@2 by document language"]
    # en: q1 1/1 (en1), q2 0/1 (en2 at rank 3) -> 0.5 over 2 queries
    # de: q1 0/1, q2 1/1 -> 0.5; fr: q1 0/1 -> 0; ja: q1 0/1 -> 0
    assert df.loc["r"].to_dict() == {"de": 0.5, "en": 0.5, "fr": 0.0, "ja": 0.0}
    assert df.loc["(queries)"].to_dict() == {"de": 2, "en": 2, "fr": 1, "ja": 1}
    df4 = _result(k=4).per_language["recall@4 by document language"]
    assert df4.loc["r"].to_dict() == {"de": 1.0, "en": 1.0, "fr": 1.0, "ja": 0.0}


def test_top_k_language_share_and_relevant_reference():
    df = _result().per_language["top-2 language share"]
    # q1: en en -> en 1.0 ; q2: de und -> de .5, und .5 ; macro average
    assert df.loc["r"].to_dict() == {"de": 0.25, "en": 0.5, "und": 0.25}
    assert list(df.columns)[-1] == "und"
    assert df.loc["(relevant)"].to_dict() == pytest.approx(
        {"de": (1 / 4 + 1 / 2) / 2, "en": (1 / 4 + 1 / 2) / 2, "und": 0.0})
    assert sum(v for k, v in df.loc["r"].items()) == pytest.approx(1.0)
    # the plot helper computes the same mix from the run alone
    assert language_mix(RUN, DOC_LANGS, 2) == pytest.approx({"en": 0.5, "de": 0.25, "und": 0.25})


def test_per_query_language_tables_when_topics_mix_languages():
    r = evaluate(QRELS, {"r": RUN}, ["recall@2", "tlr@2"], doc_langs=DOC_LANGS, query_langs={"q1": "en", "q2": "de"},
                 significance=None)
    en = r.per_language["query language en"]
    de = r.per_language["query language de"]
    assert en.loc["r", "recall@2"] == 0.25 and de.loc["r", "recall@2"] == 0.5  # q1: 1/4, q2: 1/2
    # q1 (en): targets de1 fr1 ja1, none in top 2 -> 0; q2 (de): target en2 not in top 2 -> 0
    assert en.loc["r", "tlr@2"] == 0.0 and de.loc["r", "tlr@2"] == 0.0
    assert en.loc["(queries)", "recall@2"] == 1
    single = _result()
    assert not any(k.startswith("query language") for k in single.per_language)


def test_unknown_languages_are_counted_in_info():
    r = evaluate({"q": {"en1": 1, "nolang": 1}}, {"r": {"q": {"en1": 1.0}}}, ["tlr@2"], doc_langs=DOC_LANGS,
                 query_langs="en", significance=None)
    assert r.info["relevant_docs_unknown_language"] == 1
    assert r.counted == {"tlr@2": 0} and r.value("r", "tlr@2") is None
