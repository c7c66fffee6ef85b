"""The plots: files written, and what they show (the SVG keeps its text, so labels and values are read back)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.plots import language_silhouette, plot_alpha_curves, plot_language_mix, plot_projection


def _is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _svg_texts(path) -> list[str]:
    """Every text drawn in an SVG figure, in drawing order (fonts are kept as text, not paths)."""
    return ["".join(e.itertext()) for e in ET.parse(path).getroot().iter() if e.tag.endswith("}text")]


def _png_size(path) -> tuple[int, int]:
    """(width, height) in pixels."""
    import matplotlib.image

    height, width = matplotlib.image.imread(path).shape[:2]
    return width, height


def test_alpha_curves(tmp_path):
    sweep = {a / 10: {"ndcg@20": 0.5 + a / 100, "tlr@20": 0.1 + a / 50} for a in range(0, 11, 2)}
    paths = plot_alpha_curves(sweep, tmp_path / "sub" / "alpha", baselines={"base": {"ndcg@20": 0.5, "tlr@20": 0.1}})
    assert [p.name for p in paths] == ["alpha.png", "alpha.svg"]
    assert _is_png(paths[0]) and paths[1].read_text().lstrip().startswith("<?xml")
    texts = _svg_texts(paths[1])
    # one panel per metric, each with its axis label, title, the best value annotated, and the legend
    assert texts.count("ndcg@20") == 2 and texts.count("tlr@20") == 2 and texts.count("alpha") == 2
    assert "0.600" in texts and "0.300" in texts  # best points: alpha 1.0 (0.5 + 0.1, 0.1 + 0.2)
    assert {"SHIFT", "base"} <= set(texts)
    assert _png_size(paths[0]) == (1008, 408)  # 2 panels x 4.2 in x 120 dpi, 3.4 in high
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
    texts = _svg_texts(paths[1])
    # bars a (en 50%, de 50%), b (fr 100%), relevant documents (en 50%, fr 50%); the query language first
    assert [t for t in texts if t in ("a", "b", "relevant documents")] == ["a", "b", "relevant documents"]
    assert [t for t in texts if t.endswith("%")] == ["50%", "50%", "50%", "100%", "50%"]
    assert texts[-3:] == ["en (query)", "de", "fr"]
    assert "Language of the top 10 retrieved documents" in texts and "share of the top 10" in texts
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
        assert _png_size(paths[0]) == (1200, 552)  # two panels, 5.0 in each x 120 dpi, 4.6 in high
    # all points plotted: each panel's title gives the silhouette of exactly those embeddings
    texts = _svg_texts(plot_projection(before, after, langs, tmp_path / "all")[1])
    titles = [t for t in texts if "(PCA)" in t or "silhouette" in t]  # two title lines per panel
    assert titles == ["before (PCA)", f"language silhouette {language_silhouette(before, langs):.3f}",
                      "after (PCA)", f"language silhouette {language_silhouette(after, langs):.3f}"]
    assert {"en", "de"} <= set(texts)  # the legend
    one = plot_projection(before, None, langs, tmp_path / "one")
    assert _is_png(one[0]) and _png_size(one[0]) == (600, 552)
    with pytest.raises(MlirkitError, match="differ in shape"):
        plot_projection(before, after[:5], langs, tmp_path / "x")
    with pytest.raises(MlirkitError, match="do not match"):
        plot_projection(before, None, langs[:3], tmp_path / "x")
    with pytest.raises(MlirkitError, match="unknown projection"):
        plot_projection(before, None, langs, tmp_path / "x", method="umap")


def test_a_figure_is_replaced_only_with_overwrite_and_only_when_mlirkit_drew_it(tmp_path):
    """plot_* wrote PREFIX.png/.svg over anything there (a user's figure included), with no --overwrite."""
    from mlirkit.base.outputs import is_ours

    sweep = {a / 10: {"ndcg@20": 0.5 + a / 100, "tlr@20": 0.1 + a / 50} for a in range(0, 11, 2)}
    png, svg = plot_alpha_curves(sweep, tmp_path / "alpha")
    assert is_ours(png, "figure") and is_ours(svg, "figure")  # marked: PNG Software, SVG creator
    with pytest.raises(MlirkitError, match="alpha.png already exists .use overwrite=True"):
        plot_alpha_curves(sweep, tmp_path / "alpha")
    assert plot_alpha_curves(sweep, tmp_path / "alpha", overwrite=True) == [png, svg]
    import matplotlib.pyplot as plt

    mine = tmp_path / "mine.png"
    plt.figure().savefig(mine)  # a user's own figure (matplotlib's, not mlirkit's)
    plt.close("all")
    before = mine.read_bytes()
    with pytest.raises(MlirkitError, match="mine.png exists but is not a figure written by mlirkit") as e:
        plot_alpha_curves(sweep, tmp_path / "mine", overwrite=True)
    assert "\n" not in str(e.value) and mine.read_bytes() == before and not (tmp_path / "mine.svg").exists()
