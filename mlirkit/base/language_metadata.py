"""Language metadata for grouped analyses: ISO 639-1 code -> family, genus, script, resource class.

Sources (as the DCL paper's Tables 5-6 group languages by family and by resource level):

- ``family``: the top-level family of Glottolog 5.0 (Hammarström, Forkel, Haspelmath, Bank; 2024,
  https://glottolog.org), e.g. Indo-European, Sino-Tibetan, Afro-Asiatic.
- ``genus``: the WALS genus (Dryer & Haspelmath, eds., 2013, *The World Atlas of Language Structures
  Online*, https://wals.info), e.g. Germanic, Romance, Slavic: the useful split inside Indo-European.
- ``script``: the ISO 15924 code of the script the language is usually written in (Unicode CLDR
  likely-subtags), e.g. Latn, Cyrl, Hans, Jpan.
- ``resource``: the class 0-5 of Joshi, Santy, Budhiraja, Bali, Choudhury (2020), "The State and Fate
  of Linguistic Diversity and Inclusion in the NLP World", ACL 2020, table ``lang2tax.txt`` of
  https://microsoft.github.io/linguisticdiversity/assets/lang2tax.txt (5 "the winners" .. 0 "the
  left-behinds"). ``resource_level`` coarsens it to high (5), mid (4), low (0-3), the split of the
  paper's resource tables.

The table covers the languages of the bundled and upstream benchmarks (DDTP, LibreOffice help,
gettext, Belebele, XQuAD-R, MLQA, MultiEuP, mMARCO, MIRACL); an unknown code maps to ``"unknown"`` in
every field.

Verification of the resource classes: ``lang2tax.txt`` lists language *names* (lower case) with their
class, no codes. All 51 classes were checked against the copy of that list in
MaLA-LM/LangResourceAtlas, ``Joshi-et-al/Joshi-et-al-6-classes.json`` (commit 36f973d6, 2025-07-19;
its ``lang_name`` fields are the names of ``lang2tax.txt``, its ISO codes were added by language
models), looking each language up by the name :data:`JOSHI_NAMES` gives; every class agreed, and an
independent transcription by ISO 639-3 code in a public FLORES evaluation script agreed too. The
microsoft.github.io original itself could not be fetched (offline machine). Name choices: Chinese is
``mandarin`` (class 5; ``cantonese`` and ``wu`` are class 1), Slovenian is ``slovenian`` (class 3; the
list also has a duplicate ``slovene`` in class 0), Malay is ``malay`` and Tagalog ``tagalog``.
"""
from __future__ import annotations

from typing import NamedTuple

UNKNOWN = "unknown"


class LanguageInfo(NamedTuple):
    name: str
    family: str
    genus: str
    script: str
    resource: int  # Joshi et al. (2020) class, 0..5


_IE = "Indo-European"
#: ISO 639-1 -> metadata (see the module docstring for the sources)
LANGUAGES: dict[str, LanguageInfo] = {
    "en": LanguageInfo("English", _IE, "Germanic", "Latn", 5),
    "de": LanguageInfo("German", _IE, "Germanic", "Latn", 5),
    "nl": LanguageInfo("Dutch", _IE, "Germanic", "Latn", 4),
    "sv": LanguageInfo("Swedish", _IE, "Germanic", "Latn", 4),
    "da": LanguageInfo("Danish", _IE, "Germanic", "Latn", 3),
    "af": LanguageInfo("Afrikaans", _IE, "Germanic", "Latn", 3),
    "fr": LanguageInfo("French", _IE, "Romance", "Latn", 5),
    "es": LanguageInfo("Spanish", _IE, "Romance", "Latn", 5),
    "it": LanguageInfo("Italian", _IE, "Romance", "Latn", 4),
    "pt": LanguageInfo("Portuguese", _IE, "Romance", "Latn", 4),
    "ca": LanguageInfo("Catalan", _IE, "Romance", "Latn", 4),
    "ro": LanguageInfo("Romanian", _IE, "Romance", "Latn", 3),
    "ru": LanguageInfo("Russian", _IE, "Slavic", "Cyrl", 4),
    "pl": LanguageInfo("Polish", _IE, "Slavic", "Latn", 4),
    "cs": LanguageInfo("Czech", _IE, "Slavic", "Latn", 4),
    "uk": LanguageInfo("Ukrainian", _IE, "Slavic", "Cyrl", 3),
    "sk": LanguageInfo("Slovak", _IE, "Slavic", "Latn", 3),
    "bg": LanguageInfo("Bulgarian", _IE, "Slavic", "Cyrl", 3),
    "sl": LanguageInfo("Slovenian", _IE, "Slavic", "Latn", 3),
    "hr": LanguageInfo("Croatian", _IE, "Slavic", "Latn", 4),
    "sr": LanguageInfo("Serbian", _IE, "Slavic", "Cyrl", 4),
    "lt": LanguageInfo("Lithuanian", _IE, "Baltic", "Latn", 3),
    "lv": LanguageInfo("Latvian", _IE, "Baltic", "Latn", 3),
    "el": LanguageInfo("Greek", _IE, "Greek", "Grek", 3),
    "hi": LanguageInfo("Hindi", _IE, "Indic", "Deva", 4),
    "bn": LanguageInfo("Bengali", _IE, "Indic", "Beng", 3),
    "ur": LanguageInfo("Urdu", _IE, "Indic", "Arab", 3),
    "mr": LanguageInfo("Marathi", _IE, "Indic", "Deva", 2),
    "fa": LanguageInfo("Persian", _IE, "Iranian", "Arab", 4),
    "ga": LanguageInfo("Irish", _IE, "Celtic", "Latn", 2),
    "fi": LanguageInfo("Finnish", "Uralic", "Finnic", "Latn", 4),
    "et": LanguageInfo("Estonian", "Uralic", "Finnic", "Latn", 3),
    "hu": LanguageInfo("Hungarian", "Uralic", "Ugric", "Latn", 4),
    "ar": LanguageInfo("Arabic", "Afro-Asiatic", "Semitic", "Arab", 5),
    "he": LanguageInfo("Hebrew", "Afro-Asiatic", "Semitic", "Hebr", 3),
    "mt": LanguageInfo("Maltese", "Afro-Asiatic", "Semitic", "Latn", 2),
    "am": LanguageInfo("Amharic", "Afro-Asiatic", "Semitic", "Ethi", 2),
    "zh": LanguageInfo("Chinese", "Sino-Tibetan", "Chinese", "Hans", 5),
    "ja": LanguageInfo("Japanese", "Japonic", "Japanese", "Jpan", 5),
    "ko": LanguageInfo("Korean", "Koreanic", "Korean", "Kore", 4),
    "tr": LanguageInfo("Turkish", "Turkic", "Turkic", "Latn", 4),
    "vi": LanguageInfo("Vietnamese", "Austroasiatic", "Viet-Muong", "Latn", 4),
    "th": LanguageInfo("Thai", "Tai-Kadai", "Kam-Tai", "Thai", 3),
    "id": LanguageInfo("Indonesian", "Austronesian", "Malayo-Sumbawan", "Latn", 3),
    "ms": LanguageInfo("Malay", "Austronesian", "Malayo-Sumbawan", "Latn", 3),
    "tl": LanguageInfo("Tagalog", "Austronesian", "Greater Central Philippine", "Latn", 3),
    "te": LanguageInfo("Telugu", "Dravidian", "South-Central Dravidian", "Telu", 1),
    "ta": LanguageInfo("Tamil", "Dravidian", "Southern Dravidian", "Taml", 3),
    "sw": LanguageInfo("Swahili", "Atlantic-Congo", "Bantoid", "Latn", 2),
    "yo": LanguageInfo("Yoruba", "Atlantic-Congo", "Defoid", "Latn", 2),
    "eu": LanguageInfo("Basque", "Basque (isolate)", "Basque", "Latn", 4),
}

#: ISO 639-1 -> the name under which ``lang2tax.txt`` lists the language (its resource class is looked up by it)
JOSHI_NAMES: dict[str, str] = {
    "en": "english", "de": "german", "nl": "dutch", "sv": "swedish", "da": "danish", "af": "afrikaans",
    "fr": "french", "es": "spanish", "it": "italian", "pt": "portuguese", "ca": "catalan", "ro": "romanian",
    "ru": "russian", "pl": "polish", "cs": "czech", "uk": "ukrainian", "sk": "slovak", "bg": "bulgarian",
    "sl": "slovenian", "hr": "croatian", "sr": "serbian", "lt": "lithuanian", "lv": "latvian", "el": "greek",
    "hi": "hindi", "bn": "bengali", "ur": "urdu", "mr": "marathi", "fa": "persian", "ga": "irish",
    "fi": "finnish", "et": "estonian", "hu": "hungarian", "ar": "arabic", "he": "hebrew", "mt": "maltese",
    "am": "amharic", "zh": "mandarin", "ja": "japanese", "ko": "korean", "tr": "turkish", "vi": "vietnamese",
    "th": "thai", "id": "indonesian", "ms": "malay", "tl": "tagalog", "te": "telugu", "ta": "tamil",
    "sw": "swahili", "yo": "yoruba", "eu": "basque",
}

#: the fields a grouped table can use
GROUP_KEYS = ("language", "family", "genus", "script", "resource", "resource_level")


def base_code(lang: str) -> str:
    """``"zh-Hans"`` / ``"pt_BR"`` / ``"acm_Arab"`` -> ``"zh"`` / ``"pt"`` / ``"acm"`` (lower case)."""
    return lang.replace("_", "-").split("-")[0].lower()


def resource_level(cls: int) -> str:
    """Joshi class -> ``high`` (5), ``mid`` (4), ``low`` (0-3)."""
    return "high" if cls >= 5 else "mid" if cls == 4 else "low"


def language_group(lang: str, key: str) -> str:
    """The group of ``lang`` under ``key`` (one of :data:`GROUP_KEYS`); ``"unknown"`` when not in the table."""
    if key not in GROUP_KEYS:
        from mlirkit.base.errors import MlirkitError

        raise MlirkitError(f"unknown group key {key!r} (choose from {', '.join(GROUP_KEYS)})")
    if key == "language":
        return lang
    info = LANGUAGES.get(base_code(lang))
    if info is None:
        return UNKNOWN
    if key == "resource":
        return f"class {info.resource}"
    if key == "resource_level":
        return resource_level(info.resource)
    return getattr(info, key)


__all__ = ["GROUP_KEYS", "JOSHI_NAMES", "LANGUAGES", "UNKNOWN", "base_code", "language_group", "resource_level"]
