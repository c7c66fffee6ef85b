"""The label-free alpha: every language's documents as probes scored as the query-time shift scores queries of
their language, the plateau rule, and what is (not) offered."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.alpha_select import plateau_start, select_alpha
from mlirkit.transforms.shift_transform import ShiftTransform

LANGS = ["en"] * 60 + ["de"] * 50 + ["fr"] * 40 + ["ja"] * 30  # ja: no vector


def corpus(seed: int = 0):
    rng = np.random.default_rng(seed)
    d = 16
    offsets = {la: rng.normal(scale=0.6, size=d) for la in ("en", "de", "fr", "ja")}
    embs = np.stack([rng.normal(size=d) + offsets[la] for la in LANGS]).astype(np.float32)
    t = ShiftTransform.from_tensors({la: offsets[la] - offsets["en"] + rng.normal(scale=0.1, size=d) for la in ("de", "fr")},
                       encoder={"model": "toy"}, source_lang="en")
    return embs, t


def test_knn_curve_equals_the_query_time_shift_neighbourhoods():
    """The excess own-language share among each probe's k nearest, with the scores that
    ``mlirkit.search --query-shift cosine`` gives a query of the probe's language, averaged over languages."""
    from mlirkit.search.query_shift import QueryTimeShift

    embs, t = corpus()
    grid, k = [0.0, 0.5, 1.0, 1.5], 7
    sel = select_alpha(embs, LANGS, t, grid=grid, k=k, max_probes=10_000)
    qs = QueryTimeShift(embs, LANGS, t, missing="keep")
    la = np.array(LANGS)
    unit = embs / np.linalg.norm(embs, axis=1, keepdims=True)
    for alpha in grid:
        gaps = []
        for lang in sorted(set(LANGS)):
            rows = np.flatnonzero(la == lang)
            scores = qs.scores(unit[rows], [lang] * len(rows), alpha)
            scores[np.arange(len(rows)), rows] = -np.inf  # a probe never finds itself
            top = np.argsort(-scores, axis=1)[:, :k]
            gaps.append((la[top] == lang).mean() - ((la == lang).sum() - 1) / (len(la) - 1))
        assert sel.curve[alpha] == pytest.approx(np.mean(gaps), abs=1e-9)
    assert sel.info["probes"] == {"de": 50, "en": 60, "fr": 40, "ja": 30}


def test_plateau_start():
    curve = {0.0: 0.5, 0.5: 0.2, 0.8: 0.12, 1.0: 0.105, 1.2: 0.1, 1.5: 0.3}
    assert plateau_start(curve, 0.0) == 1.2  # the minimum
    assert plateau_start(curve, 0.05) == 0.8  # 0.12 <= 0.1 + 0.05 * 0.4
    assert plateau_start(curve, 0.02) == 1.0  # 0.105 <= 0.1 + 0.02 * 0.4
    assert plateau_start({0.2: 0.3, 0.4: 0.31}, 0.05) == 0.2  # rising from the start: the first alpha


def test_default_rule_and_what_is_offered():
    embs, t = corpus(1)
    grid = [round(0.1 * i, 1) for i in range(21)]
    sel = select_alpha(embs, LANGS, t, grid=grid)
    assert sel.criterion == "knn" and sel.info["tolerance"] == 0.1 and sel.per_language == {}
    assert sel.alpha == plateau_start(sel.curve, 0.1)
    assert select_alpha(embs, LANGS, t, grid=grid, tolerance=0.0).alpha == min(sel.curve, key=sel.curve.get)
    assert "per_language" not in sel.as_dict() and sel.as_dict()["alpha_arg"] == f"{sel.alpha:g}"
    with pytest.raises(MlirkitError, match="per-language alphas come from the criteria knn-source and centroid"):
        select_alpha(embs, LANGS, t, per_language=True)
    with pytest.raises(MlirkitError, match="tolerance"):
        select_alpha(embs, LANGS, t, tolerance=1.0)
    old = select_alpha(embs, LANGS, t, grid=grid, criterion="knn-source", per_language=True)
    assert set(old.per_language) == {"de", "fr"} and old.info["probes"] == {"en": 60}
