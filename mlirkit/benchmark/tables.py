"""Markdown tables of the benchmark report: cells, the metric table of a part, the paired-test table."""
from __future__ import annotations

import math
from typing import Any, Sequence

from mlirkit.eval.report import markdown_table as table

METRIC_LABELS = {"ndcg@20": "nDCG@20", "recall@20": "R@20", "mrr@10": "MRR@10", "tlr@20": "TLR@20",
                 "samelang@20": "same-lang@20", "map": "mAP", "peer@20": "PEER@20", "mrc@10": "MRC@10"}
DAGGER = "†"


def label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def metric_digits(metric: str, digits: int = 3) -> int:
    """Digits of a metric's cells: MRC@k is on a -100 ... 100 scale, so two fewer (at least one)."""
    from mlirkit.eval.metrics import parse_metric

    return max(1, digits - 2) if parse_metric(metric).kind == "mrc" else digits


def fairness_note(config: Any) -> str:
    """The report's line on the language-fairness metrics of ``config.metrics`` ("" without them)."""
    from mlirkit.eval.metrics import parse_metric

    parts = []
    for m in config.metrics:
        spec = parse_metric(m)
        if spec.kind == "peer":
            parts.append(f"{label(m)}: the probability of equal expected rank (Yang et al., SIGIR 2024): per query the "
                         f"Kruskal-Wallis p that the relevant documents of each language rank alike (below the top "
                         f"{spec.k}: tied at {spec.k + 1}), higher = fairer; with one relevant document per language it "
                         f"is chi2_(L-1).sf(L-1) (0.429 for 8 languages) once one of them is in the top {spec.k} and 1 "
                         "when none is (docs/evaluation.md)")
        elif spec.kind == "mrc":
            parts.append(f"{label(m)}: mean rank correlation x100 (Yang et al., EMNLP MRL 2024): the Spearman correlation "
                         f"of a question's scores in two languages over the union of their top {spec.k}, from every "
                         "score (the embeddings, not the runs), averaged over the other languages, then over questions")
    return "; ".join(parts) + "." if parts else ""


def fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"


def system_alpha(run: str) -> tuple[str, str]:
    """``("shift-ood", "0.7")`` of ``shift-ood@0.7``; alpha 1 for the other transforms, none for base."""
    system, _, alpha = run.partition("@")
    return system, alpha or ("1" if system != "base" else "")


def metric_rows(entries: Sequence[tuple[str, Any, list[str]]], metrics: Sequence[str],
                digits: int = 3) -> tuple[list[str], list[list[str]]]:
    """Header and rows, one row per (encoder, system): ``entries`` are ``(encoder, EvaluationResult, runs)``;
    ``†`` marks a significant difference from base; with several query languages the macro mean over them,
    the micro mean (over queries) beside it."""
    from mlirkit.eval.means import micro_column
    from mlirkit.eval.report import significance_marks

    metrics = list(metrics)
    micro = bool(entries) and micro_column(metrics[0]) in entries[0][1].table.columns
    header = ["encoder", "system", "alpha"]
    for m in metrics:
        header += [label(m)] + ([f"{label(m)} (micro)"] if micro else [])
    same = [m for m in metrics if m.startswith("samelang@")]
    if same:
        header.append(f"{label(same[0])} expected")
    rows = []
    for name, result, runs in entries:
        marks = significance_marks(result)
        for run in runs:
            system, alpha = system_alpha(run)
            cells = [name, system, alpha]
            for m in metrics:  # a metric the part could not compute (MRC without translations) is n/a
                there = m in result.table.columns
                cells.append(fmt(result.value(run, m) if there else None, metric_digits(m, digits)) +
                             (DAGGER if (run, m) in marks else ""))
                if micro:
                    cells.append(fmt(result.value(run, m, micro=True) if there else None, metric_digits(m, digits)))
            if same:
                cells.append(fmt(result.value(run, f"{same[0]} (expected)"), digits))
            rows.append(cells)
    return header, rows


def comparisons_table(comparisons: Sequence[Any], order: Sequence[str], digits: int = 4) -> str:
    """One row per paired test (system against base): means, difference, p and Holm p, decision;
    rows in the order of ``order`` (the systems)."""
    from mlirkit.eval.significance import format_p

    header = ["system", "metric", "base", "system value", "delta", "p", "p (Holm)", "p < 0.05"]
    rows = []
    position = {r: i for i, r in enumerate(order)}
    metrics = list(dict.fromkeys(c.metric for c in comparisons))
    for c in sorted(comparisons, key=lambda c: (position.get(c.run_b, 99), metrics.index(c.metric))):
        delta = None if c.mean_a is None or c.mean_b is None else c.mean_b - c.mean_a
        rows.append([c.run_b, label(c.metric), fmt(c.mean_a, digits), fmt(c.mean_b, digits),
                     ("+" if delta is not None and delta > 0 else "") + fmt(delta, digits),
                     format_p(c.p_value, c.p_resolution), format_p(c.p_corrected, c.p_resolution),
                     "yes" if c.significant else "no"])
    return table(header, rows)


def precisions(encoders: Sequence[Any]) -> str:
    """One line: how each encoder (results with ``name`` and ``fingerprint``) computed its vectors."""
    parts = []
    for enc in encoders:
        fp = enc.fingerprint
        how = ", ".join(f"{k} {fp[k]}" for k in ("backend", "precision", "quantize") if fp.get(k))
        parts.append(f"`{enc.name}`: {how or 'its own computation'}")
    return "Precision: " + "; ".join(parts) + "."


__all__ = ["DAGGER", "METRIC_LABELS", "comparisons_table", "fairness_note", "fmt", "label", "metric_digits",
           "metric_rows", "precisions", "system_alpha", "table"]
