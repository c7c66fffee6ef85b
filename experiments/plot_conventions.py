"""The two plot conventions of mlirkit.eval.plots, drawn from a small worked example (not a measurement).

Run from the repository root: ``PYTHONPATH=. python experiments/plot_conventions.py docs/figures/evaluation``
It writes ``mix-pooled.png``/``.svg`` (several query languages: each query's own language is one segment,
so a system that keeps every query in its own language shows one full bar, not a balanced-looking mix of
the pooled languages) and ``alpha-chosen.png``/``.svg`` (the alpha chosen on dev marked on the sweep), replacing
the figures it drew before (figures drawn before mlirkit marked its figures as its own are refused: remove them).
"""
from __future__ import annotations

import sys
from pathlib import Path

from mlirkit.eval.plots import plot_alpha_curves, plot_language_mix

__all__ = ["main"]

LANGS = ["en", "de", "es", "zh-CN"]


def main(out: Path) -> None:
    # 4 query languages, 5 queries each, 10 documents per language; "base" returns 8 of its top 10 in the
    # query's own language, "shift" 3 (the rest spread over the other languages)
    doc_langs = {f"{la}{i}": la for la in LANGS for i in range(10)}
    query_langs = {f"q{la}{j}": ("zh" if la == "zh-CN" else la) for la in LANGS for j in range(5)}

    def run(own: int) -> dict:
        out_run = {}
        for la in LANGS:
            others = [o for o in LANGS if o != la]
            for j in range(5):
                docs = [f"{la}{i}" for i in range(own)] + [f"{others[i % 3]}{i}" for i in range(10 - own)]
                out_run[f"q{la}{j}"] = {d: float(10 - r) for r, d in enumerate(docs)}
        return out_run

    plot_language_mix({"base": run(8), "shift": run(3)}, doc_langs, query_langs, 10, out / "mix-pooled",
                      title="Worked example: 4 query languages pooled, languages of the top 10", overwrite=True)
    sweep = {a / 10: {"ndcg@20": 0.50 + 0.03 * a / 10 - 0.02 * (a / 10) ** 2, "tlr@20": 0.40 + 0.05 * a / 10}
             for a in range(0, 11, 2)}
    plot_alpha_curves(sweep, out / "alpha-chosen", ["ndcg@20", "tlr@20"], {"base": {"ndcg@20": 0.5, "tlr@20": 0.4}},
                      title="Worked example: SHIFT's alpha on the test split, alpha chosen on the dev split marked",
                      chosen=0.6, overwrite=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
