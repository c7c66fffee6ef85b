"""mlirkit.base.language_metadata: the resource classes against the Joshi et al. (2020) list.

``SOURCE_ROWS`` are ``(lang2tax name, class)`` rows read from the copy of ``lang2tax.txt`` in
MaLA-LM/LangResourceAtlas ``Joshi-et-al/Joshi-et-al-6-classes.json`` (commit 36f973d6): every language
of the table, plus the rows that make a name choice matter (a wrong mapping would pick them up).
"""
from __future__ import annotations

from mlirkit.base.language_metadata import JOSHI_NAMES, LANGUAGES, language_group

SOURCE_ROWS = {
    # class 5
    "english": 5, "spanish": 5, "german": 5, "japanese": 5, "french": 5, "arabic": 5, "mandarin": 5,
    # class 4
    "swedish": 4, "turkish": 4, "korean": 4, "hindi": 4, "persian": 4, "portuguese": 4, "czech": 4,
    "russian": 4, "dutch": 4, "polish": 4, "croatian": 4, "italian": 4, "vietnamese": 4, "basque": 4,
    "hungarian": 4, "finnish": 4, "serbian": 4, "catalan": 4,
    # class 3
    "ukrainian": 3, "latvian": 3, "indonesian": 3, "afrikaans": 3, "greek": 3, "hebrew": 3, "malay": 3,
    "thai": 3, "danish": 3, "tagalog": 3, "slovenian": 3, "tamil": 3, "romanian": 3, "bulgarian": 3,
    "lithuanian": 3, "estonian": 3, "slovak": 3, "bengali": 3, "urdu": 3,
    # class 2
    "marathi": 2, "swahili": 2, "maltese": 2, "amharic": 2, "yoruba": 2, "irish": 2,
    # class 1
    "telugu": 1,
}
#: rows of the same list under other names of (or near) our languages: the name choice decides the class
OTHER_NAMES = {"slovene": 0, "cantonese": 1, "wu": 1, "serbo-croatian": 1, "gaelic": 0}


def test_every_resource_class_matches_the_published_list():
    assert set(JOSHI_NAMES) == set(LANGUAGES)
    for code, info in LANGUAGES.items():
        name = JOSHI_NAMES[code]
        assert name in SOURCE_ROWS and name not in OTHER_NAMES, code
        assert info.resource == SOURCE_ROWS[name], (code, name, info.resource, SOURCE_ROWS[name])


def test_a_few_verified_entries_through_the_group_lookup():
    assert language_group("te", "resource") == "class 1"  # telugu, 1: a "scraping-by" despite its size
    assert language_group("sl", "resource") == "class 3"  # "slovenian", not the class-0 duplicate "slovene"
    assert language_group("zh-Hans", "resource") == "class 5"  # "mandarin"
    assert language_group("ja", "resource_level") == "high" and language_group("eu", "resource_level") == "mid"
    assert language_group("uk", "resource_level") == "low" and language_group("ga", "resource") == "class 2"
