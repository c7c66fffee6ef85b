"""The plots show what they claim, read from the figure's artists (bars, lines, texts), not from pixels."""
from __future__ import annotations

import pytest

from mlirkit.eval.plots import OWN_LANGUAGE, alpha_curves_figure, language_mix_figure


def _bars(fig) -> dict[str, list[float]]:
    """``{legend label: [bar width per run, top to bottom]}`` of a language-mix figure."""
    ax = fig.axes[0]
    return {c.get_label(): [p.get_width() for p in c.patches] for c in ax.containers}


def _fits(fig, text) -> bool:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    box = text.get_window_extent(fig.canvas.get_renderer())
    return box.x0 >= 0 and box.x1 <= fig.bbox.width + 0.5


# two query languages; each query's top 2 all in its own language for "base", all English for "shift"
DOC_LANGS = {"en1": "en", "en2": "en", "de1": "de", "de2": "de-DE", "zh1": "zh-CN", "zh2": "zh-CN"}
QUERY_LANGS = {"qde": "de", "qzh": "zh"}
RUNS = {"base": {"qde": {"de1": 2.0, "de2": 1.0}, "qzh": {"zh1": 2.0, "zh2": 1.0}},
        "shift": {"qde": {"en1": 2.0, "de1": 1.0}, "qzh": {"en1": 2.0, "en2": 1.0}}}


def test_pooled_query_languages_show_each_querys_own_language():
    fig = language_mix_figure(RUNS, DOC_LANGS, QUERY_LANGS, 2)
    bars = _bars(fig)
    # base: every top-2 document is in its query's language (de-DE and zh-CN meet de and zh): one full bar
    assert bars[OWN_LANGUAGE] == pytest.approx([1.0, 0.25])
    assert bars["en"] == pytest.approx([0.0, 0.75])
    assert list(bars)[0] == OWN_LANGUAGE and "de" not in bars and "zh-CN" not in bars
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["base", "shift"]


def test_one_query_language_keeps_the_languages_and_marks_the_query_one():
    fig = language_mix_figure({"r": {"q": {"en1": 2.0, "de1": 1.0}}}, DOC_LANGS, "de", 2,
                              qrels={"q": {"de1": 1, "zh1": 1}})
    bars = _bars(fig)
    assert list(bars)[0] == "de (query)" and bars["de (query)"] == pytest.approx([0.5, 0.5])
    assert bars["en"] == pytest.approx([0.5, 0.0]) and bars["zh-CN"] == pytest.approx([0.0, 0.5])


def test_the_chosen_alpha_is_marked_on_every_panel_and_long_titles_fit():
    sweep = {a / 10: {"ndcg@20": 0.5 + a / 100, "tlr@20": 0.2} for a in range(0, 11, 2)}
    title = ("XQuAD-R, multilingual-e5-small, SHIFT fitted on the Tatoeba pairs, test split: "
             "nDCG@20 against alpha (label-free alpha 0.6)")
    fig = alpha_curves_figure(sweep, ["ndcg@20"], title=title, chosen=0.6)
    lines = [line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == "chosen-alpha"]
    assert len(lines) == len(fig.axes) == 1
    assert list(lines[0].get_xdata()) == [0.6, 0.6] and lines[0].get_label() == "chosen alpha (0.6)"
    assert _fits(fig, fig._suptitle) and "\n" in fig._suptitle.get_text()
    assert not any(line.get_gid() == "chosen-alpha" for ax in alpha_curves_figure(sweep, ["ndcg@20"]).axes
                   for line in ax.get_lines())


def test_language_mix_title_fits():
    fig = language_mix_figure(RUNS, DOC_LANGS, QUERY_LANGS, 2,
                              title="XQuAD-R, multilingual-e5-small: languages of the top 20 of every system, "
                                    "8 query languages pooled per query")
    assert _fits(fig, fig.axes[0].title)
