"""experiments/query_langid.py: the accuracy and coverage figures it reports."""
from __future__ import annotations

import pytest

from experiments.query_langid import THRESHOLDS, _accuracy


def test_accuracy_per_language_and_the_coverage_curve():
    found = [("de", 0.9), ("en", 0.4), ("AR", 0.99), ("de", 0.6)]
    truth = ["de", "de", "ar", "de"]
    report = _accuracy(found, truth)
    assert report["accuracy"] == 0.75  # "AR" is canonicalised to ar
    assert report["per_lang"] == {"ar": 1.0, "de": pytest.approx(2 / 3, abs=1e-4)}
    curve = {row["threshold"]: row for row in report["threshold_curve"]}
    assert [row["threshold"] for row in report["threshold_curve"]] == list(THRESHOLDS)
    assert curve[0.0] == {"threshold": 0.0, "coverage": 1.0, "accuracy_covered": 0.75, "wrong_used": 0.25}
    assert curve[0.5] == {"threshold": 0.5, "coverage": 0.75, "accuracy_covered": 1.0, "wrong_used": 0.0}
    assert curve[0.95] == {"threshold": 0.95, "coverage": 0.25, "accuracy_covered": 1.0, "wrong_used": 0.0}
