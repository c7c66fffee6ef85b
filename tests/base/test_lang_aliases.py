"""One alias table (mlirkit.base.langs.ALIASES: dt -> nl) used by transforms and evaluation."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.tlr import tlr_at_k
from mlirkit.base.langs import ALIASES, canonical
from mlirkit.transforms.shift_transform import ShiftTransform, derive_source


def test_canonical():
    assert ALIASES == {"dt": "nl"}
    assert canonical("dt") == "nl" and canonical("nl") == "nl" and canonical("de") == "de"
    assert canonical(None) is None and canonical("") == ""


def test_transform_keys_and_lookups_are_canonical():
    t = ShiftTransform.from_tensors({"dt": np.ones(3), "de": np.full(3, 2.0)}, encoder={}, source_lang="en")
    assert t.languages == ["de", "nl"]
    counts = Counter()
    out = t.transform(np.zeros((3, 3), np.float32), ["dt", "nl", "xx"], "doc", counts=counts)
    np.testing.assert_array_equal(out[:2], -np.ones((2, 3)))
    assert counts["missing:xx"] == 1 and "missing:dt" not in counts
    s = derive_source(t, "dt")
    assert s.source_lang == "nl" and sorted(s.params_) == ["de", "en"]
    with pytest.raises(MlirkitError, match="given twice"):
        ShiftTransform.from_tensors({"dt": np.ones(3), "nl": np.ones(3)}, encoder={}, source_lang="en")
    # a Dutch source drops the Dutch vector whatever its code
    assert ShiftTransform.from_tensors({"dt": np.ones(3), "de": np.ones(3)}, encoder={}, source_lang="nl").languages == ["de"]


def test_tlr_treats_aliases_as_one_language():
    qrels = {"q1": {"d_nl": 1, "d_de": 1}}
    run = {"q1": {"d_nl": 2.0, "d_de": 1.0}}
    r = tlr_at_k(qrels, run, 1, {"d_nl": "nl", "d_de": "de"}, {"q1": "dt"})
    assert r.counted == 1 and r.mean == 0.0  # d_nl is in the query's own language, so only d_de is a target
