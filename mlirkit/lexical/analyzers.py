"""Which Lucene analyzer reads text of which language: Anserini's per-language analyzers, one registry.

Anserini (the Java side of Pyserini 1.6.0, ``anserini-1.7.1-fatjar.jar``) indexes a collection of one
language with ``-language XX`` and searches it after ``LuceneSearcher.set_language("XX")``; both read
``io.anserini.analysis.AnalyzerMap`` (:data:`ANSERINI_LANGUAGES`, a copy checked against the jar by the
tests), and English is Anserini's default analyzer (``DefaultEnglishAnalyzer``: Porter stemmer, Lucene's
English stopwords). For any other code Anserini silently falls back to the English analyzer; mlirkit
instead refuses the language (:func:`analyzer_for` raises) unless the user opts into a fallback
(:data:`FALLBACKS`, ``--fallback-analyzer``):

- ``standard``: Unicode word segmentation (UAX #29) and lower-casing, no stemming, no stopwords
  (``DefaultEnglishAnalyzer.newNonStemmingInstance(CharArraySet.EMPTY_SET)``, i.e. Pyserini's
  ``get_lucene_analyzer(stemming=False, stopwords=False)``): safe for any language that separates words;
- ``english``: what Anserini itself would use (Porter stemming and English stopwords on every language).

A language is looked up by the primary subtag of its canonical code (:func:`mlirkit.base.langs.canonical`),
lower-cased: ``pt-BR`` reads with ``pt``, ``zh-Hant`` with ``zh``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, is_unknown
from mlirkit.base.option_names import in_cli
from mlirkit.base.registry import did_you_mean

#: ``io.anserini.analysis.AnalyzerMap.analyzerMap`` of Anserini 1.7.1 (Pyserini 1.6.0's jar), language -> class
ANSERINI_LANGUAGES: dict[str, str] = {
    "ar": "org.apache.lucene.analysis.ar.ArabicAnalyzer",
    "bn": "org.apache.lucene.analysis.bn.BengaliAnalyzer",
    "da": "org.apache.lucene.analysis.da.DanishAnalyzer",
    "de": "org.apache.lucene.analysis.de.GermanAnalyzer",
    "es": "org.apache.lucene.analysis.es.SpanishAnalyzer",
    "fa": "org.apache.lucene.analysis.fa.PersianAnalyzer",
    "fi": "org.apache.lucene.analysis.fi.FinnishAnalyzer",
    "fr": "org.apache.lucene.analysis.fr.FrenchAnalyzer",
    "hi": "org.apache.lucene.analysis.hi.HindiAnalyzer",
    "hu": "org.apache.lucene.analysis.hu.HungarianAnalyzer",
    "id": "org.apache.lucene.analysis.id.IndonesianAnalyzer",
    "it": "org.apache.lucene.analysis.it.ItalianAnalyzer",
    "ja": "org.apache.lucene.analysis.ja.JapaneseAnalyzer",
    "ko": "org.apache.lucene.analysis.cjk.CJKAnalyzer",
    "nl": "org.apache.lucene.analysis.nl.DutchAnalyzer",
    "no": "org.apache.lucene.analysis.no.NorwegianAnalyzer",
    "pl": "org.apache.lucene.analysis.morfologik.MorfologikAnalyzer",
    "pt": "org.apache.lucene.analysis.pt.PortugueseAnalyzer",
    "ru": "org.apache.lucene.analysis.ru.RussianAnalyzer",
    "sv": "org.apache.lucene.analysis.sv.SwedishAnalyzer",
    "te": "org.apache.lucene.analysis.te.TeluguAnalyzer",
    "th": "org.apache.lucene.analysis.th.ThaiAnalyzer",
    "tr": "org.apache.lucene.analysis.tr.TurkishAnalyzer",
    "uk": "org.apache.lucene.analysis.uk.UkrainianMorfologikAnalyzer",
    "zh": "org.apache.lucene.analysis.cjk.CJKAnalyzer",
}
ENGLISH_CLASS = "io.anserini.analysis.DefaultEnglishAnalyzer"


@dataclass(frozen=True)
class Analyzer:
    """One analyzer: its name (a language code or a fallback's name), the Lucene class, the arguments
    that make Anserini's ``SimpleIndexer`` (``IndexCollection``) analyse documents with it, and how to
    build the same analyzer for queries (``factory``: ``"map"``, ``"english"`` or ``"standard"``)."""

    name: str
    java_class: str
    index_args: tuple[str, ...]
    factory: str

    def java(self) -> Any:
        """The ``org.apache.lucene.analysis.Analyzer`` for queries (starts the JVM)."""
        from mlirkit.base.jvm import boot_jvm

        boot_jvm()
        from jnius import autoclass

        english = autoclass(ENGLISH_CLASS)
        if self.factory == "english":
            return english.newDefaultInstance()
        if self.factory == "standard":
            return english.newNonStemmingInstance(autoclass("org.apache.lucene.analysis.CharArraySet").EMPTY_SET)
        return autoclass("io.anserini.analysis.AnalyzerMap").getLanguageSpecificAnalyzer(self.name)

    def describe(self) -> dict[str, Any]:
        """The ``meta.json`` entry: what a Pyserini user needs to search with the same analyzer."""
        return {"analyzer": self.name, "class": self.java_class, "anserini_args": list(self.index_args),
                "pyserini": _PYSERINI_HINT[self.factory].format(name=self.name)}


_PYSERINI_HINT = {
    "map": "searcher.set_language('{name}')",
    "english": "searcher.set_analyzer(get_lucene_analyzer('en'))",
    "standard": "searcher.set_analyzer(get_lucene_analyzer(stemming=False, stopwords=False))",
}

#: language -> analyzer (Anserini's map, plus English, Anserini's default)
LANGUAGE_ANALYZERS: dict[str, Analyzer] = {
    **{lang: Analyzer(lang, cls, ("-language", lang), "map") for lang, cls in ANSERINI_LANGUAGES.items()},
    "en": Analyzer("en", ENGLISH_CLASS, ("-language", "en"), "english"),
}
#: the fallbacks a user may opt into for languages without an analyzer
FALLBACKS: dict[str, Analyzer] = {
    "standard": Analyzer("standard", ENGLISH_CLASS, ("-language", "en", "-stemmer", "none", "-keepStopwords"),
                         "standard"),
    "english": Analyzer("english", ENGLISH_CLASS, ("-language", "en"), "english"),
}


def analyzer_key(lang: str) -> str:
    """The registry key of a language code: the primary subtag of its canonical code, lower-cased."""
    return (canonical(lang) or "").split("-")[0].lower()


def fallback(name: str | None) -> Analyzer | None:
    """The fallback analyzer called ``name`` (None: no fallback); an unknown name is an error with a did-you-mean."""
    if name is None:
        return None
    if name not in FALLBACKS:
        raise MlirkitError(f"unknown fallback analyzer {name!r}{did_you_mean(name, list(FALLBACKS))}; "
                           f"known: {', '.join(FALLBACKS)}")
    return FALLBACKS[name]


def analyzer_for(lang: str, fallback_analyzer: Analyzer | None = None, where: str = "") -> Analyzer:
    """The analyzer of ``lang``: Anserini's for the language, else ``fallback_analyzer``, else
    :class:`MlirkitError` (``<where>: no Anserini analyzer for language 'vi' ...``)."""
    if not is_unknown(lang):
        found = LANGUAGE_ANALYZERS.get(analyzer_key(lang))
        if found is not None:
            return found
    if fallback_analyzer is not None:
        return fallback_analyzer
    prefix = f"{where}: " if where else ""
    raise MlirkitError(f"{prefix}no Anserini analyzer for language {lang!r} (analyzers: "
                       f"{', '.join(sorted(LANGUAGE_ANALYZERS))}); "
                       + (f"--fallback-analyzer {' or '.join(FALLBACKS)}" if in_cli() else
                          " or ".join(f"fallback_analyzer=FALLBACKS[{name!r}]" for name in FALLBACKS))
                       + " reads it anyway")


__all__ = ["ANSERINI_LANGUAGES", "Analyzer", "FALLBACKS", "LANGUAGE_ANALYZERS", "analyzer_for", "analyzer_key",
           "fallback"]
