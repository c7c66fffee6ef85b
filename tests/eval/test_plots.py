from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.plots import language_silhouette, plot_alpha_curves, plot_language_mix, plot_projection


def _is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_alpha_curves(tmp_path):
    sweep = {a / 10: {"ndcg@20": 0.5 + a / 100, "tlr@20": 0.1 + a / 50} for a in range(0, 11, 2)}
    paths = plot_alpha_curves(sweep, tmp_path / "sub" / "alpha", baselines={"base": {"ndcg@20": 0.5, "tlr@20": 0.1}})
    assert [p.name for p in paths] == ["alpha.png", "alpha.svg"]
    assert _is_png(paths[0]) and paths[1].read_text().lstrip().startswith("<?xml")
    svg = paths[1].read_text()
    plot_alpha_curves(sweep, tmp_path / "again", baselines={"base": {"ndcg@20": 0.5, "tlr@20": 0.1}})
    assert (tmp_path / "again.svg").read_text() == svg  # deterministic SVG
    with pytest.raises(MlirkitError, match="no 'mrr@10' for alpha=0.0"):
        plot_alpha_curves(sweep, tmp_path / "x", metrics=["mrr@10"])
    with pytest.raises(MlirkitError, match="empty"):
        plot_alpha_curves({}, tmp_path / "x")


def test_language_mix(tmp_path):
    runs = {"a": {"q": {"d1": 1.0, "d2": 0.5}}, "b": {"q": {"d3": 1.0}}}
    paths = plot_language_mix(runs, {"d1": "en", "d2": "de", "d3": "fr"}, "en", 10, tmp_path / "mix",
                              qrels={"q": {"d1": 1, "d3": 1}})
    assert _is_png(paths[0])
    with pytest.raises(MlirkitError, match="no runs"):
        plot_language_mix({}, {}, "en", 10, tmp_path / "x")


def test_projection_and_silhouette(tmp_path):
    rng = np.random.default_rng(0)
    langs = ["en"] * 50 + ["de"] * 50
    offset = np.zeros(16)
    offset[0] = 5.0
    base = rng.normal(size=(100, 16))
    before = base + np.where(np.array(langs)[:, None] == "de", offset, 0)
    after = base.copy()
    assert language_silhouette(before, langs) > 0.3 > language_silhouette(after, langs)
    assert language_silhouette(before, ["en"] * 100) is None
    from threadpoolctl import threadpool_limits

    for method in ("pca", "tsne"):
        with threadpool_limits(1):  # OpenMP threads spin on a busy 2-core machine
            paths = plot_projection(before, after, langs, tmp_path / method, method=method, max_points=80)
        assert _is_png(paths[0])
    assert _is_png(plot_projection(before, None, langs, tmp_path / "one")[0])
    with pytest.raises(MlirkitError, match="differ in shape"):
        plot_projection(before, after[:5], langs, tmp_path / "x")
    with pytest.raises(MlirkitError, match="do not match"):
        plot_projection(before, None, langs[:3], tmp_path / "x")
    with pytest.raises(MlirkitError, match="unknown projection"):
        plot_projection(before, None, langs, tmp_path / "x", method="umap")
