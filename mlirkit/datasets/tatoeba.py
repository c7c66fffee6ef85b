"""The Tatoeba test pairs of LASER (112 languages with English) as a parallel set for fitting transforms.

Source: ``github.com/facebookresearch/LASER`` ``data/tatoeba/v1/tatoeba.{xxx}-eng.{xxx,eng}`` (Artetxe
and Schwenk 2019; sentences from the Tatoeba corpus, CC BY 2.0 FR): for each language up to 1,000
English sentences and their translations, line-aligned (line ``i`` of ``tatoeba.deu-eng.deu``
translates line ``i`` of ``tatoeba.deu-eng.eng``). The English side differs from language to language,
so the set is made of *pairs*, not N-way groups. mlirkit bundles the 224 files byte for byte
(``resources/tatoeba.tar.xz``); :mod:`mlirkit.datasets.sources` says when the bundled copy is read.

``mlirkit/parallel/tatoeba``: one group per pair, ``group_id = f"{lang}/{i}"`` (``i`` the 0-based line),
holding two rows, English (``{group}/en``) then the language (``{group}/{lang}``). Languages are named
by their ISO 639-1 code where one exists (:func:`mlirkit.base.iso639.to_iso639_1`: ``deu`` -> ``de``,
``cmn`` -> ``zh``), else by the file's ISO 639-3 code (``yue``, ``gsw``). A fit with source language
``en`` therefore estimates each language's vector from that language's own pairs only (a group holds
English and exactly one other language).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.base.iso639 import to_iso639_1

from mlirkit.datasets.sources import BundledFile, SourceFile, all_local, bundled_available, bundled_source, fetch_all

NAME = "tatoeba"
ARCHIVE = "tatoeba.tar.xz"
LICENCE = "CC BY 2.0 FR (Tatoeba sentences; test set of LASER, Artetxe and Schwenk 2019)"
URL = "https://raw.githubusercontent.com/facebookresearch/LASER/main/data/tatoeba/v1/{name}"
SOURCE_LANG = "en"
#: the ISO 639-3 codes of the 112 languages, as in the file names
CODES = (
    "afr", "amh", "ang", "ara", "arq", "arz", "ast", "awa", "aze", "bel", "ben", "ber", "bos", "bre", "bul", "cat",
    "cbk", "ceb", "ces", "cha", "cmn", "cor", "csb", "cym", "dan", "deu", "dsb", "dtp", "ell", "epo", "est", "eus",
    "fao", "fin", "fra", "fry", "gla", "gle", "glg", "gsw", "heb", "hin", "hrv", "hsb", "hun", "hye", "ido", "ile",
    "ina", "ind", "isl", "ita", "jav", "jpn", "kab", "kat", "kaz", "khm", "kor", "kur", "kzj", "lat", "lfn", "lit",
    "lvs", "mal", "mar", "max", "mhr", "mkd", "mon", "nds", "nld", "nno", "nob", "nov", "oci", "orv", "pam", "pes",
    "pms", "pol", "por", "ron", "rus", "slk", "slv", "spa", "sqi", "srp", "swe", "swg", "swh", "tam", "tat", "tel",
    "tgl", "tha", "tuk", "tur", "tzl", "uig", "ukr", "urd", "uzb", "vie", "war", "wuu", "xho", "yid", "yue", "zsm",
)


def lang_of(code: str) -> str:
    """mlirkit's language code of a Tatoeba file code (``deu`` -> ``de``, ``yue`` -> ``yue``)."""
    return to_iso639_1(code)


def langs() -> tuple[str, ...]:
    """The 112 language codes of the set (ISO 639-1 where one exists), sorted."""
    return tuple(sorted(lang_of(c) for c in CODES))


def _relpaths(code: str) -> tuple[str, str]:
    """(the language's file, the English file) of ``code``."""
    return f"tatoeba/tatoeba.{code}-eng.{code}", f"tatoeba/tatoeba.{code}-eng.eng"


def files(codes: tuple[str, ...] = CODES) -> list[SourceFile]:
    return [bundled_source(rel, URL.format(name=rel.split("/")[1]),
                           f"https://github.com/facebookresearch/LASER (data/tatoeba/v1, {LICENCE})", ARCHIVE)
            for code in codes for rel in _relpaths(code)]


def _lines(source: Path | BundledFile) -> list[str]:
    if isinstance(source, BundledFile):
        data = source.data
    else:
        from mlirkit.io.files import open_binary

        with open_binary(source) as f:
            data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise format_error(source, data[:e.start].count(b"\n") + 1, "not valid UTF-8") from None
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def rows(codes: tuple[str, ...] = CODES) -> Iterator[tuple[str, str, str]]:
    """Rows ``(group_id, lang, text)``: per pair English then the language, languages in the order of
    their mlirkit codes, pairs in file order; pairs whose two sides are not both non-empty are skipped."""
    paths = fetch_all(files(codes))
    for code in sorted(codes, key=lang_of):
        lang = lang_of(code)
        rel, rel_en = _relpaths(code)
        text, english = _lines(paths[rel]), _lines(paths[rel_en])
        if len(text) != len(english):
            raise MlirkitError(f"{paths[rel]}: {len(text)} lines, but {paths[rel_en]} has {len(english)}: "
                               "the two sides of a Tatoeba pair file must be line-aligned")
        for i, (t, e) in enumerate(zip(text, english)):
            if t.strip() and e.strip():
                group = f"{lang}/{i}"
                yield group, SOURCE_LANG, e
                yield group, lang, t


def available() -> bool:
    return all_local(files()) or bundled_available(files())


__all__ = ["ARCHIVE", "CODES", "LICENCE", "NAME", "SOURCE_LANG", "available", "files", "lang_of", "langs", "rows"]
