"""ISO 639 three-letter codes -> ISO 639-1 (two-letter) codes, where a two-letter code exists.

Sources that name languages with three letters (Tatoeba/LASER file names ``deu``, ``cmn``; FLORES-200's
``deu_Latn``; MARC records' ``ger``) meet two-letter codes elsewhere (XQuAD-R ``de``, Belebele in the
SHIFT release). :func:`to_iso639_1` maps

- the ISO 639-3 code of each of the 184 ISO 639-1 languages (``deu`` -> ``de``, ``ara`` -> ``ar``,
  macrolanguages included: ``zho`` -> ``zh``), from the ISO 639-3 code tables (SIL, as packaged by
  ``pycountry`` 26.2.16);
- the 20 ISO 639-2/B bibliographic codes that differ from 639-3 (``ger`` -> ``de``, ``chi`` -> ``zh``);
- the individual languages that CLDR's language aliases replace by their macrolanguage's two-letter
  code (``cmn`` Mandarin -> ``zh``, ``arb`` Standard Arabic -> ``ar``, ``zsm`` Standard Malay -> ``ms``,
  ``pes`` Iranian Persian -> ``fa``, ...: the "macrolanguage" aliases of CLDR's supplemental metadata);

and leaves every other code as it is (``yue`` Cantonese, ``gsw`` Swiss German and ``ber`` Berber have
no two-letter code). Two-letter codes pass through unchanged.
"""
from __future__ import annotations

#: ISO 639-3 (= 639-2/T) code -> ISO 639-1 code
ISO639_3: dict[str, str] = {
    "aar": "aa", "abk": "ab", "afr": "af", "aka": "ak", "amh": "am", "ara": "ar", "arg": "an", "asm": "as",
    "ava": "av", "ave": "ae", "aym": "ay", "aze": "az", "bak": "ba", "bam": "bm", "bel": "be", "ben": "bn",
    "bis": "bi", "bod": "bo", "bos": "bs", "bre": "br", "bul": "bg", "cat": "ca", "ces": "cs", "cha": "ch",
    "che": "ce", "chu": "cu", "chv": "cv", "cor": "kw", "cos": "co", "cre": "cr", "cym": "cy", "dan": "da",
    "deu": "de", "div": "dv", "dzo": "dz", "ell": "el", "eng": "en", "epo": "eo", "est": "et", "eus": "eu",
    "ewe": "ee", "fao": "fo", "fas": "fa", "fij": "fj", "fin": "fi", "fra": "fr", "fry": "fy", "ful": "ff",
    "gla": "gd", "gle": "ga", "glg": "gl", "glv": "gv", "grn": "gn", "guj": "gu", "hat": "ht", "hau": "ha",
    "hbs": "sh", "heb": "he", "her": "hz", "hin": "hi", "hmo": "ho", "hrv": "hr", "hun": "hu", "hye": "hy",
    "ibo": "ig", "ido": "io", "iii": "ii", "iku": "iu", "ile": "ie", "ina": "ia", "ind": "id", "ipk": "ik",
    "isl": "is", "ita": "it", "jav": "jv", "jpn": "ja", "kal": "kl", "kan": "kn", "kas": "ks", "kat": "ka",
    "kau": "kr", "kaz": "kk", "khm": "km", "kik": "ki", "kin": "rw", "kir": "ky", "kom": "kv", "kon": "kg",
    "kor": "ko", "kua": "kj", "kur": "ku", "lao": "lo", "lat": "la", "lav": "lv", "lim": "li", "lin": "ln",
    "lit": "lt", "ltz": "lb", "lub": "lu", "lug": "lg", "mah": "mh", "mal": "ml", "mar": "mr", "mkd": "mk",
    "mlg": "mg", "mlt": "mt", "mon": "mn", "mri": "mi", "msa": "ms", "mya": "my", "nau": "na", "nav": "nv",
    "nbl": "nr", "nde": "nd", "ndo": "ng", "nep": "ne", "nld": "nl", "nno": "nn", "nob": "nb", "nor": "no",
    "nya": "ny", "oci": "oc", "oji": "oj", "ori": "or", "orm": "om", "oss": "os", "pan": "pa", "pli": "pi",
    "pol": "pl", "por": "pt", "pus": "ps", "que": "qu", "roh": "rm", "ron": "ro", "run": "rn", "rus": "ru",
    "sag": "sg", "san": "sa", "sin": "si", "slk": "sk", "slv": "sl", "sme": "se", "smo": "sm", "sna": "sn",
    "snd": "sd", "som": "so", "sot": "st", "spa": "es", "sqi": "sq", "srd": "sc", "srp": "sr", "ssw": "ss",
    "sun": "su", "swa": "sw", "swe": "sv", "tah": "ty", "tam": "ta", "tat": "tt", "tel": "te", "tgk": "tg",
    "tgl": "tl", "tha": "th", "tir": "ti", "ton": "to", "tsn": "tn", "tso": "ts", "tuk": "tk", "tur": "tr",
    "twi": "tw", "uig": "ug", "ukr": "uk", "urd": "ur", "uzb": "uz", "ven": "ve", "vie": "vi", "vol": "vo",
    "wln": "wa", "wol": "wo", "xho": "xh", "yid": "yi", "yor": "yo", "zha": "za", "zho": "zh", "zul": "zu",
}
#: ISO 639-2/B bibliographic code -> ISO 639-1 code (only those that differ from 639-2/T)
ISO639_2B: dict[str, str] = {
    "alb": "sq", "arm": "hy", "baq": "eu", "bur": "my", "chi": "zh", "cze": "cs", "dut": "nl", "fre": "fr",
    "geo": "ka", "ger": "de", "gre": "el", "ice": "is", "mac": "mk", "mao": "mi", "may": "ms", "per": "fa",
    "rum": "ro", "slo": "sk", "tib": "bo", "wel": "cy",
}
#: individual language -> its macrolanguage's ISO 639-1 code (CLDR's macrolanguage aliases)
MACROLANGUAGE_MEMBERS: dict[str, str] = {
    "arb": "ar", "ayr": "ay", "azj": "az", "cmn": "zh", "ekk": "et", "gaz": "om", "gug": "gn", "ike": "iu",
    "khk": "mn", "kmr": "ku", "knc": "kr", "kng": "kg", "kpv": "kv", "lvs": "lv", "npi": "ne", "ojg": "oj",
    "ory": "or", "pbu": "ps", "pes": "fa", "plt": "mg", "quz": "qu", "swh": "sw", "uzn": "uz", "ydd": "yi",
    "zsm": "ms",
}
#: every three-letter code this module maps (one table, read by :func:`to_iso639_1`)
TO_ISO639_1: dict[str, str] = {**ISO639_3, **ISO639_2B, **MACROLANGUAGE_MEMBERS}


def to_iso639_1(code: str) -> str:
    """The ISO 639-1 code of a three-letter language code (``deu`` -> ``de``, ``cmn`` -> ``zh``); the
    primary subtag only is mapped (``deu-CH`` -> ``de-CH``); codes without a two-letter code, and
    two-letter codes, unchanged. Case is kept for the subtags; the primary subtag is lower-cased when mapped."""
    primary, sep, rest = code.partition("-")
    mapped = TO_ISO639_1.get(primary.lower())
    return mapped + sep + rest if mapped else code


__all__ = ["to_iso639_1"]
