"""Figures that show language bias, each written as ``<out_prefix>.png`` and ``<out_prefix>.svg``.

- :func:`plot_alpha_curves`: metrics (nDCG@20, TLR@20) against SHIFT's alpha from a sweep, with
  baselines as horizontal lines and the chosen alpha as a vertical one.
- :func:`plot_language_mix`: language distribution of each system's top k (stacked bars), the query
  language first (with several query languages: each query's own language as one segment); with
  ``qrels`` a reference bar for the relevant documents.
- :func:`plot_projection`: 2-D projection (PCA, or t-SNE) of document embeddings coloured by
  language, before and after a transform (cf. Figure 3 of the SHIFT paper); each panel's title
  gives the silhouette of the language labels (cosine, in the full space): near 0 = languages
  mixed, towards 1 = one cluster per language.

matplotlib is used through its object API with the Agg canvas (no pyplot, no global backend).
"""
from __future__ import annotations

import heapq
import os
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, is_known, meets


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=120, layout="constrained")


def _save(fig, out_prefix: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``<prefix>.png`` and ``<prefix>.svg`` atomically (deterministic SVG ids, no dates), marked as mlirkit's
    (PNG ``Software``, SVG creator); an existing one is replaced only with ``overwrite`` and when mlirkit drew it
    (:mod:`mlirkit.base.outputs`), both checked before either is written."""
    import matplotlib

    from mlirkit.base.fs import atomic_file, made_directory, refuse_existing
    from mlirkit.base.outputs import FIGURE_MARK

    prefix = Path(out_prefix)
    formats = (("png", {"Software": FIGURE_MARK}), ("svg", {"Date": None, "Creator": FIGURE_MARK}))
    targets = [prefix.with_name(prefix.name + "." + ext) for ext, _ in formats]
    for path in targets:
        refuse_existing(path, overwrite, "figure")
    paths: list[Path] = []
    with made_directory(prefix.parent), matplotlib.rc_context({"svg.hashsalt": "mlirkit", "svg.fonttype": "none"}):
        try:
            for path, (ext, meta) in zip(targets, formats):
                with atomic_file(path, overwrite=overwrite, mode="wb", kind="figure") as f:
                    fig.savefig(f, format=ext, metadata=meta)
                paths.append(path)
        except BaseException:  # both files or neither
            for path in paths:
                path.unlink(missing_ok=True)
            raise
    return paths


def _colours(langs: Sequence[str]) -> dict[str, tuple]:
    """A stable colour per language over the sorted names: tab20's ten strong colours first, then its
    ten light ones (unknown in grey)."""
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    palette = [cmap(2 * i) for i in range(10)] + [cmap(2 * i + 1) for i in range(10)]
    known = sorted(lang for lang in set(langs) if is_known(lang))
    out = {lang: palette[i % 20] for i, lang in enumerate(known)}
    out[UNKNOWN] = (0.6, 0.6, 0.6, 1.0)
    return out


def plot_alpha_curves(sweep: Mapping[float, Mapping[str, float]], out_prefix: str | os.PathLike,
                      metrics: Sequence[str] = ("ndcg@20", "tlr@20"),
                      baselines: Mapping[str, Mapping[str, float]] | None = None, *,
                      title: str | None = None, chosen: float | None = None, overwrite: bool = False) -> list[Path]:
    """:func:`alpha_curves_figure` written to ``<out_prefix>.png`` and ``.svg`` (existing ones of mlirkit's replaced
    only with ``overwrite``)."""
    return _save(alpha_curves_figure(sweep, metrics, baselines, title=title, chosen=chosen), out_prefix, overwrite)


def alpha_curves_figure(sweep: Mapping[float, Mapping[str, float]], metrics: Sequence[str] = ("ndcg@20", "tlr@20"),
                        baselines: Mapping[str, Mapping[str, float]] | None = None, *,
                        title: str | None = None, chosen: float | None = None):
    """One panel per metric: value against alpha (``sweep`` = ``{alpha: {metric: value}}``); ``chosen``:
    the alpha a run uses (chosen on dev, or label-free), marked by a vertical line on every panel."""
    if not sweep:
        raise MlirkitError("empty alpha sweep")
    alphas = sorted(float(a) for a in sweep)
    by_alpha = {float(a): v for a, v in sweep.items()}
    fig = _figure(4.2 * len(metrics), 3.4)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    styles = ["--", ":", "-.", (0, (5, 1)), (0, (1, 3))]
    for ax, metric in zip(axes, metrics):
        missing = [a for a in alphas if metric not in by_alpha[a]]
        if missing:
            raise MlirkitError(f"alpha sweep: no {metric!r} for alpha={missing[0]}")
        ys = [np.nan if by_alpha[a][metric] is None else by_alpha[a][metric] for a in alphas]
        ax.plot(alphas, ys, marker="o", color="tab:blue", label="SHIFT", zorder=3)
        if not metric.lower().startswith("samelang") and not np.isnan(ys).all():  # a share: no "best" point
            best = int(np.nanargmax(ys))
            ax.annotate(f"{ys[best]:.3f}", (alphas[best], ys[best]), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=8)
        expected = [by_alpha[a].get(f"{metric} (expected)") for a in alphas]
        if all(e is not None for e in expected):  # samelang@k: share expected from the relevant documents
            ax.plot(alphas, expected, color="grey", linestyle=":", label="expected from relevant set")
            ax.legend(fontsize=7, loc="best")
        for i, (name, values) in enumerate((baselines or {}).items()):
            if metric in values and values[metric] is not None:
                ax.axhline(values[metric], linestyle=styles[i % len(styles)], color=f"C{i + 1}", label=name)
        if chosen is not None:
            ax.axvline(float(chosen), color="tab:red", linestyle="-", linewidth=1.0, alpha=0.7,
                       label=f"chosen alpha ({float(chosen):g})", gid="chosen-alpha")
        ax.margins(y=0.15)
        ax.set_xlabel("alpha")
        ax.set_ylabel(metric)
        ax.set_title(metric)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="best")
    if title:
        fig.suptitle(_wrapped(title, 4.2 * len(metrics)), fontsize=10)
    return fig


def _top_langs(hits: Mapping[str, float], k: int, doc_langs: Mapping[str, str]) -> list[str]:
    top = heapq.nsmallest(k, hits.items(), key=lambda item: (-item[1], item[0]))
    return [doc_langs.get(d, UNKNOWN) for d, _ in top]


#: the bar of the documents in each query's own language, when several query languages are pooled
OWN_LANGUAGE = "query's own language"


def language_mix(run: Mapping[str, Mapping[str, float]], doc_langs: Mapping[str, str], k: int,
                 query_langs: Mapping[str, str] | None = None) -> dict[str, float]:
    """``{lang: mean share of the top k}`` over the run's queries with results (macro average). With
    ``query_langs`` (``{qid: lang}``), the documents in the query's own language (by
    :func:`mlirkit.base.langs.meets`) count under :data:`OWN_LANGUAGE`, the others under their language."""
    total: Counter[str] = Counter()
    n = 0
    same: dict[tuple[str, str], bool] = {}
    for qid, hits in run.items():
        langs = _top_langs(hits, k, doc_langs)
        if langs:
            n += 1
            q = None if query_langs is None else query_langs.get(qid)
            for lang, c in Counter(langs).items():
                if q is not None and (q, lang) not in same:
                    same[q, lang] = meets(q, lang)
                key = OWN_LANGUAGE if q is not None and same[q, lang] else lang
                total[key] += c / len(langs)
    return {lang: v / n for lang, v in total.items()} if n else {}


def _wrapped(title: str, width_inches: float) -> str:
    """``title`` broken into lines that fit a figure ``width_inches`` wide (about 11 characters an inch at
    matplotlib's default title size)."""
    import textwrap

    return "\n".join(textwrap.wrap(title, max(20, int(width_inches * 11))))


def plot_language_mix(runs: Mapping[str, Mapping[str, Mapping[str, float]]], doc_langs: Mapping[str, str],
                      query_langs: Mapping[str, str] | str, k: int, out_prefix: str | os.PathLike, *,
                      qrels: Mapping[str, Mapping[str, int]] | None = None, title: str | None = None,
                      overwrite: bool = False) -> list[Path]:
    """:func:`language_mix_figure` written to ``<out_prefix>.png`` and ``.svg`` (existing ones of mlirkit's replaced
    only with ``overwrite``)."""
    return _save(language_mix_figure(runs, doc_langs, query_langs, k, qrels=qrels, title=title), out_prefix, overwrite)


def language_mix_figure(runs: Mapping[str, Mapping[str, Mapping[str, float]]], doc_langs: Mapping[str, str],
                        query_langs: Mapping[str, str] | str, k: int, *,
                        qrels: Mapping[str, Mapping[str, int]] | None = None, title: str | None = None):
    """Stacked bars: share of each language in each run's top ``k``, the query language first. With
    several query languages (a ``{qid: lang}`` mapping naming more than one) each query's documents in its
    own language are one bar segment, :data:`OWN_LANGUAGE`, against the other languages (pooling the
    languages themselves would hide how much of each top k is in its query's language)."""
    if not runs:
        raise MlirkitError("no runs to plot")
    pooled = not isinstance(query_langs, str) and len(set(query_langs.values())) > 1
    per_query = query_langs if pooled else None
    shares = {name: language_mix(run, doc_langs, k, per_query) for name, run in runs.items()}  # type: ignore[arg-type]
    if qrels is not None:
        rel_runs = {q: {d: float(r) for d, r in docs.items() if r >= 1} for q, docs in qrels.items()}
        shares["relevant documents"] = language_mix(rel_runs, doc_langs, max(1, max(map(len, rel_runs.values()), default=1)),
                                                    per_query)  # type: ignore[arg-type]
    if pooled:
        q_main = [OWN_LANGUAGE]
    elif isinstance(query_langs, str):
        q_main = [query_langs]
    else:
        q_main = list(dict.fromkeys(query_langs.values()))
    langs = sorted({lang for s in shares.values() for lang in s},
                   key=lambda lang: (lang not in q_main, lang == UNKNOWN, lang))
    colours = _colours(langs)
    names = list(shares)
    fig = _figure(8.0, 0.9 + 0.55 * len(names))
    ax = fig.subplots()
    left = np.zeros(len(names))
    for lang in langs:
        widths = np.array([shares[n].get(lang, 0.0) for n in names])
        is_query = lang in q_main
        ax.barh(names, widths, left=left, color=colours[lang], edgecolor="black" if is_query else "white",
                linewidth=1.2 if is_query else 0.5, hatch="//" if is_query else None,
                label=lang if lang == OWN_LANGUAGE else f"{lang} (query)" if is_query
                else ("unknown" if lang == UNKNOWN else lang))
        for y, (w, x) in enumerate(zip(widths, left)):
            if w >= 0.06:
                ax.text(x + w / 2, y, f"{w:.0%}", ha="center", va="center", fontsize=7)
        left += widths
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share of the top {k}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False,
              ncols=1 if len(langs) <= 12 else 2)
    ax.set_title(_wrapped(title or f"Language of the top {k} retrieved documents", 6.0))
    return fig


#: the fewest points a projection panel is drawn from (t-SNE's perplexity of 2 needs more than 2)
MIN_PROJECTION_POINTS = 3


def _project(x: np.ndarray, method: str, seed: int) -> np.ndarray:
    if method == "pca":
        centred = x - x.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        return centred @ vt[:2].T
    if method == "tsne":
        from sklearn.manifold import TSNE

        return TSNE(n_components=2, init="pca", random_state=seed,
                    perplexity=float(min(30, max(2, len(x) // 4)))).fit_transform(x)
    raise MlirkitError(f"unknown projection method {method!r}; use pca or tsne")


def language_silhouette(x: np.ndarray, langs: Sequence[str], seed: int = 0, max_points: int = 2000) -> float | None:
    """Silhouette of the language labels (cosine distance); None with fewer than 2 languages."""
    from sklearn.metrics import silhouette_score

    labels = np.asarray(langs)
    if not 2 <= len(set(labels.tolist())) < len(labels):  # silhouette needs 2 <= labels < points
        return None
    return float(silhouette_score(x, labels, metric="cosine", sample_size=min(max_points, len(x)),
                                  random_state=seed))


def plot_projection(embeddings_before: np.ndarray, embeddings_after: np.ndarray | None, langs: Sequence[str],
                    out_prefix: str | os.PathLike, method: str = "pca", *, max_points: int = 3000, seed: int = 0,
                    titles: Sequence[str] = ("before", "after"), overwrite: bool = False) -> list[Path]:
    """Scatter of the 2-D projection coloured by language; two panels when ``embeddings_after`` is given."""
    before = np.asarray(embeddings_before, dtype=np.float32)
    panels = [(titles[0], before)]
    if embeddings_after is not None:
        after = np.asarray(embeddings_after, dtype=np.float32)
        if after.shape != before.shape:
            raise MlirkitError(f"embeddings before {before.shape} and after {after.shape} differ in shape")
        panels.append((titles[1], after))
    return plot_projection_panels(panels, langs, out_prefix, method, max_points=max_points, seed=seed,
                                  overwrite=overwrite)


def plot_projection_panels(panels: Sequence[tuple[str, np.ndarray]], langs: Sequence[str],
                           out_prefix: str | os.PathLike, method: str = "pca", *, max_points: int = 3000,
                           seed: int = 0, overwrite: bool = False) -> list[Path]:
    """One projection panel per ``(title, embeddings)``, the same items (rows) in each, coloured by
    language, with the language silhouette of each space (e.g. the DCL paper's Figure 3: base, semantic
    and language components). Panels may differ in dimension, not in rows."""
    langs = np.asarray(list(langs))
    if not panels:
        raise MlirkitError("no panels to plot")
    arrays = [(title, np.asarray(emb, dtype=np.float32)) for title, emb in panels]
    for title, emb in arrays:
        if emb.ndim != 2 or len(emb) != len(langs):
            raise MlirkitError(f"embeddings {emb.shape} and {len(langs)} languages do not match ({title})")
    rng = np.random.default_rng(seed)
    n = len(langs)
    if min(max_points, n) < MIN_PROJECTION_POINTS:
        raise MlirkitError(f"a 2-D projection needs at least {MIN_PROJECTION_POINTS} points, got {min(max_points, n)} "
                           f"({n} documents, max_points {max_points})")
    idx = np.sort(rng.choice(n, size=min(max_points, n), replace=False))
    sample_langs = langs[idx]
    order = sorted(set(sample_langs.tolist()), key=lambda lang: (lang == UNKNOWN, lang))
    colours = _colours(order)
    fig = _figure(5.0 * len(arrays), 4.6)
    axes = fig.subplots(1, len(arrays), squeeze=False)[0]
    for ax, (title, emb) in zip(axes, arrays):
        x = emb[idx]
        xy = _project(x, method, seed)
        sil = language_silhouette(x, sample_langs, seed)
        for lang in order:
            m = sample_langs == lang
            ax.scatter(xy[m, 0], xy[m, 1], s=6, alpha=0.7, color=colours[lang], label=lang, linewidths=0)
        sub = f"language silhouette {sil:.3f}" if sil is not None else ""
        ax.set_title(f"{title} ({method.upper() if method == 'pca' else 't-SNE'})\n{sub}", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[-1].legend(fontsize=7, markerscale=2.5, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return _save(fig, out_prefix, overwrite)


__all__ = ["OWN_LANGUAGE", "alpha_curves_figure", "language_mix", "language_mix_figure", "language_silhouette", "plot_alpha_curves", "plot_language_mix", "plot_projection",
           "plot_projection_panels"]
