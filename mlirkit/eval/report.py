"""Reports of an :class:`~mlirkit.eval.result.EvaluationResult`: terminal/Markdown, LaTeX, JSON, CSV.

Significance marks: with a baseline, ``†`` marks a run whose score differs significantly from the
baseline's; without one, each run gets a letter (a, b, c, ...) and a score carries the letters of
the runs it is significantly *higher* than (as ranx's reports do). Significant = corrected p-value
<= ``max_p``.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.result import EvaluationResult
from mlirkit.base.registry import Registry

_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))
DAGGER = "†"


def run_letters(runs: list[str]) -> dict[str, str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return {run: (letters[i] if i < len(letters) else f"r{i + 1}") for i, run in enumerate(runs)}


def significance_marks(result: EvaluationResult) -> dict[tuple[str, str], str]:
    """``{(run, metric): marks}`` as plain letters (or ``†``); see the module docstring."""
    marks: dict[tuple[str, str], str] = {}
    baseline = result.settings.get("baseline")
    letters = run_letters(result.runs)
    for c in result.significance:
        if not c.significant:
            continue
        if baseline is not None:
            other = c.run_b if c.run_a == baseline else c.run_a
            marks[(other, c.metric)] = DAGGER
        else:
            if c.mean_a > c.mean_b:
                winner, loser = c.run_a, c.run_b
            elif c.mean_b > c.mean_a:
                winner, loser = c.run_b, c.run_a
            else:
                continue
            marks[(winner, c.metric)] = marks.get((winner, c.metric), "") + letters[loser]
    return {key: (m if m == DAGGER else "".join(sorted(m))) for key, m in marks.items()}


def _fmt(value, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"


def _fmt_cell(row: str, value, digits: int) -> str:
    if row.startswith("(queries)"):
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(int(value))
    return _fmt(value, digits)


def _legend(result: EvaluationResult) -> list[str]:
    s = result.settings
    lines = []
    if result.significance:
        test = {"fisher": f"Fisher's randomization test ({s.get('n_permutations')} permutations, seed {s.get('seed')})",
                "student": "paired t-test"}.get(s.get("significance"), s.get("significance"))
        corr = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected", "none": "uncorrected"}[s["correction"]]
        if s.get("baseline") is not None:
            lines.append(f"{DAGGER}: significantly different from `{s['baseline']}` ({test}, {corr} p <= {s['max_p']} "
                         "over the comparisons of each metric).")
        else:
            lines.append(f"Superscript letters: significantly higher than the run with that letter ({test}, {corr} "
                         f"p <= {s['max_p']} over the comparisons of each metric).")
    for metric, n in result.counted.items():
        total = result.info.get("queries_evaluated")
        lines.append(f"{metric}: {n} of {total} queries counted (queries with a relevant document in another known "
                     "language than the query's); n/a = undefined (no query counted).")
    return lines


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep] + [line(r) for r in rows])


def render_markdown(result: EvaluationResult, digits: int = 4) -> str:
    marks = significance_marks(result)
    letters = run_letters(result.runs)
    with_letters = bool(result.significance) and result.settings.get("baseline") is None
    table = result.table
    header = (["#"] if with_letters else []) + ["run"] + [str(c) for c in table.columns]
    rows = []
    for run in table.index:
        cells = [letters[run]] if with_letters else []
        cells.append(run)
        for col in table.columns:
            mark = marks.get((run, col), "")
            if mark and mark != DAGGER:
                mark = "".join(_SUPERSCRIPT.get(ch, ch) for ch in mark)
            cells.append(_fmt(table.loc[run, col], digits) + mark)
        rows.append(cells)
    parts = [_markdown_table(header, rows)]
    legend = _legend(result)
    if legend:
        parts.append("\n".join(legend))
    for name, df in result.per_language.items():
        head = ["run"] + [str(c) for c in df.columns]
        body = [[str(r)] + [_fmt_cell(str(r), df.loc[r, c], digits) for c in df.columns] for r in df.index]
        parts.append(f"**{name}**\n\n" + _markdown_table(head, body))
    if result.significance:
        head = ["metric", "run A", "run B", "queries", "mean A", "mean B", "p", "p corrected", "significant"]
        floor = 1 / result.settings["n_permutations"] if result.settings.get("significance") == "fisher" else None

        def fmt_p(p: float) -> str:  # a Fisher p of 0 means: below the resolution of the permutations
            return f"<{floor:g}" if floor and p == 0 else _fmt(p, 4)

        body = [[c.metric, c.run_a, c.run_b, str(c.n_queries), _fmt(c.mean_a, digits), _fmt(c.mean_b, digits),
                 fmt_p(c.p_value), fmt_p(c.p_corrected), "yes" if c.significant else "no"]
                for c in result.significance]
        parts.append("**paired tests**\n\n" + _markdown_table(head, body))
    if result.inputs:
        parts.append("**inputs**\n\n" + _markdown_table(["input", "file", "sha256", "where it came from"],
                                                       _input_rows(result.inputs)))
    return "\n\n".join(parts) + "\n"


def _input_rows(inputs: dict) -> list[list[str]]:
    """One row per scored file: qrels and each run, with its sha256 (first 16 digits) and, for a run,
    its provenance sidecar in one line (:func:`mlirkit.io.provenance.summary`)."""
    from mlirkit.io.provenance import summary

    def row(label: str, d: dict) -> list[str]:
        origin = (summary(d["provenance"]) if d.get("provenance") else
                  f"sidecar {d['provenance_stale']} is for other bytes (ignored)" if d.get("provenance_stale") else
                  "" if "sha256" not in d else "no provenance sidecar")
        return [label, d.get("path") or d.get("source", ""), (d.get("sha256") or "")[:16], origin]

    rows = [row("qrels", inputs["qrels"])] if inputs.get("qrels") else []
    return rows + [row(f"run {name}", d) for name, d in inputs.get("runs", {}).items()]


def _tex(text: str) -> str:
    out = str(text)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        out = out.replace(a, b) if a != "\\" else out.replace(a, "\x00")
    return out.replace("\x00", r"\textbackslash{}")


def _latex_tabular(header: list[str], rows: list[list[str]], caption: str | None = None) -> str:
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + caption + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def render_latex(result: EvaluationResult, digits: int = 4) -> str:
    """booktabs tables (``\\usepackage{booktabs}``); marks as superscripts."""
    marks = significance_marks(result)
    letters = run_letters(result.runs)
    with_letters = bool(result.significance) and result.settings.get("baseline") is None
    table = result.table
    header = ["Run"] + [_tex(c) for c in table.columns]
    rows = []
    for run in table.index:
        name = f"({letters[run]}) {_tex(run)}" if with_letters else _tex(run)
        cells = [name]
        for col in table.columns:
            mark = marks.get((run, col), "")
            sup = "" if not mark else (r"$^{\dagger}$" if mark == DAGGER else "$^{" + mark + "}$")
            cells.append(_fmt(table.loc[run, col], digits) + sup)
        rows.append(cells)
    parts = [_latex_tabular(header, rows, _tex(" ".join(_legend(result))) or None)]
    for name, df in result.per_language.items():
        head = ["Run"] + [_tex(c) for c in df.columns]
        body = [[_tex(r)] + [_fmt_cell(str(r), df.loc[r, c], digits) for c in df.columns] for r in df.index]
        parts.append(_latex_tabular(head, body, _tex(name)))
    return "\n\n".join(parts) + "\n"


REPORT_FORMATS: Registry[Callable[[EvaluationResult, int, bool], str]] = Registry("report format")
REPORT_FORMATS.register(".md", lambda r, digits, pq: r.to_markdown(digits))
REPORT_FORMATS.register(".markdown", lambda r, digits, pq: r.to_markdown(digits))
REPORT_FORMATS.register(".tex", lambda r, digits, pq: r.to_latex(digits))
REPORT_FORMATS.register(".json", lambda r, digits, pq: r.to_json(per_query=pq))
REPORT_FORMATS.register(".csv", lambda r, digits, pq: r.to_csv())


def report_format(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise MlirkitError(f"{path}: unknown report type {suffix or '(no extension)'!r}; "
                           f"use one of {', '.join(REPORT_FORMATS.names())}")
    return suffix


def write_report(result: EvaluationResult, path: str | os.PathLike, *, overwrite: bool = True, digits: int = 4,
                 per_query: bool = False) -> Path:
    """Write ``result`` in the format given by the extension of ``path`` (.md, .tex, .json, .csv),
    atomically. A report is a derived view, so an existing file is replaced unless ``overwrite=False``."""
    from mlirkit.base.fs import atomic_file

    path = Path(path)
    render = REPORT_FORMATS.get(report_format(path))
    text = render(result, digits, per_query)
    with atomic_file(path, overwrite=overwrite, kind="report") as f:
        f.write(text)
    return path


__all__ = ["DAGGER", "REPORT_FORMATS", "render_latex", "render_markdown", "report_format", "run_letters",
           "significance_marks", "write_report"]
