"""mlirkit.base.langs: the one unknown-language rule, used by transforms and eval."""
from __future__ import annotations

import numpy as np

from mlirkit.base.langs import UNKNOWN, is_known, is_unknown, normalize_unknown


def test_unknown_names():
    for lang in (None, "", "und", "unknown"):
        assert is_unknown(lang) and not is_known(lang) and normalize_unknown(lang) == UNKNOWN
    for lang in ("en", "de", "zh", "dt"):
        assert is_known(lang) and not is_unknown(lang) and normalize_unknown(lang) == lang


def test_eval_languages_follow_the_rule():
    from mlirkit.eval.ranking import Languages

    langs = Languages()
    assert [langs.code(x) for x in ("unknown", "und", "", None, "en")] == [0, 0, 0, 0, 1]
    assert np.array_equal(langs.codes(["en", "unknown"]), [1, 0])
