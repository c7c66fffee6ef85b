"""Reports of an evaluation (:class:`~mlirkit.eval.result.EvaluationResult`): terminal/Markdown, LaTeX,
JSON, CSV.

A report is a sequence of sections (:data:`SECTIONS`), each a function of the result that returns
:class:`Block` tables: the main table (the macro mean over query languages, the micro mean beside it)
with its legend, the per-language tables, the tables per group of query languages (``group_by``), the
paired tests with their unit. Markdown and LaTeX render the same blocks; a new section (e.g. where the
runs and qrels came from) is one more function in :data:`SECTIONS`. This module reads a result's
attributes and never imports :mod:`mlirkit.eval.result` (the result calls it, one way).

Significance marks: with a baseline, ``†`` marks a run whose score differs significantly from the
baseline's; without one, each run gets a letter (a, b, c, ...) and a score carries the letters of
the runs it is significantly *higher* than (as ranx's reports do). Significant = corrected p-value
<= ``max_p``. p values are printed with the resolution they have (:func:`~mlirkit.eval.significance.format_p`).

What a report prints can come from files (a run's name, a provenance sidecar's command): every cell, title
and note is escaped for its format (:func:`one_line`: control characters such as a newline are printed as
their escapes; in Markdown ``|`` as ``\\|``), so a cell never becomes a row or a table of its own.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Union

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry
from mlirkit.eval.means import MICRO_SUFFIX
from mlirkit.eval.metrics import parse_metric
from mlirkit.eval.query_groups import unit_phrase
from mlirkit.eval.significance import format_p

_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))
DAGGER = "†"

Result = Any  # an EvaluationResult: table, per_language, language_groups, significance, counted, settings, info
Cell = Union[str, tuple[str, str]]  # text, or (text, significance mark)


@dataclass
class Block:
    """One table of a report: ``title`` (None for the main table), ``header``, ``rows`` of cells,
    ``notes`` printed under it (Markdown) or in its caption (LaTeX)."""

    title: str | None
    header: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: object) -> str:
    """``text`` on one line: each control character (newline, carriage return, tab, escape, U+2028, ...)
    written as its Python escape (``\\n``), so printed text cannot start a new row or line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def _md(text: object) -> str:
    """A Markdown table cell: :func:`one_line`, and ``|`` escaped (GitHub Markdown shows ``\\|`` as ``|``)."""
    return one_line(text).replace("|", "\\|")


def run_letters(runs: list[str]) -> dict[str, str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return {run: (letters[i] if i < len(letters) else f"r{i + 1}") for i, run in enumerate(runs)}


def significance_marks(result: Result) -> dict[tuple[str, str], str]:
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


def format_cell(row: str, value, digits: int) -> str:
    if row.startswith("(queries)"):
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(int(value))
    return _fmt(value, digits)


def describe_test(result: Result) -> str:
    """The test, its unit and its p: ``Fisher's randomization test over 240 query groups (...; ...)``."""
    s = result.settings
    unit = result.info.get("test_unit")
    over = f" over {unit_phrase(unit)}" if unit else ""
    if s.get("significance") == "fisher":
        return (f"Fisher's randomization test{over}, one sign per unit ({s.get('n_permutations')} permutations, "
                f"seed {s.get('seed')}, p = (b+1)/(R+1); exact over all 2^U sign vectors when U <= 16)")
    if s.get("significance") == "student":
        return f"paired t-test{over}"
    return str(s.get("significance"))


def _legend(result: Result) -> list[str]:
    s = result.settings
    lines = []
    if result.significance:
        corr = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected", "none": "uncorrected"}[s["correction"]]
        test = describe_test(result)
        if s.get("baseline") is not None:
            lines.append(f"{DAGGER}: significantly different from `{s['baseline']}` ({test}; {corr} p <= {s['max_p']} "
                         "over the comparisons of each metric).")
        else:
            lines.append(f"Superscript letters: significantly higher than the run with that letter ({test}; {corr} "
                         f"p <= {s['max_p']} over the comparisons of each metric).")
    if any(str(c).endswith(MICRO_SUFFIX) for c in result.table.columns):
        langs = result.info.get("query_languages", {})
        lines.append(f"Values: mean over the {len(langs)} query languages of each language's mean (macro); "
                     f"(micro): mean over the {sum(langs.values()):,} queries.")
    for metric, n in result.counted.items():
        total = result.info.get("queries_evaluated")
        lines.append(f"{metric}: {n} of {total} queries counted ({parse_metric(metric).family.counts}); n/a = "
                     "undefined (no query counted).")
    return lines


def main_section(result: Result, digits: int) -> list[Block]:
    marks = significance_marks(result)
    letters = run_letters(result.runs)
    with_letters = bool(result.significance) and result.settings.get("baseline") is None
    table = result.table
    header = (["#"] if with_letters else []) + ["run"] + [str(c) for c in table.columns]
    rows: list[list[Cell]] = []
    for run in table.index:
        cells: list[Cell] = [letters[run]] if with_letters else []
        cells.append(run)
        cells += [(_fmt(table.loc[run, col], digits), marks.get((run, col), "")) for col in table.columns]
        rows.append(cells)
    return [Block(None, header, rows, _legend(result))]


def per_language_section(result: Result, digits: int) -> list[Block]:
    return [Block(name, ["run"] + [str(c) for c in df.columns],
                  [[str(r)] + [format_cell(str(r), df.loc[r, c], digits) for c in df.columns] for r in df.index])
            for name, df in result.per_language.items()]


def language_group_title(key: str, micro: bool) -> str:
    return f"by {key} ({'mean over queries' if micro else 'mean over languages'})"


def language_group_section(result: Result, digits: int) -> list[Block]:
    """The ``group_by`` tables: a row per group of query languages, a column per run x metric."""
    blocks = []
    micro = bool(result.settings.get("group_micro"))
    for key, df in result.language_groups.items():
        cols = list(df.columns)
        header = [df.index.name or "group"] + [f"{run} {metric}" if run else metric for run, metric in cols]
        rows = [[str(g)] + [str(v) if not run else _fmt(v, digits) for (run, _), v in zip(cols, row)]
                for g, row in df.iterrows()]
        blocks.append(Block(language_group_title(key, micro), header, rows))
    return blocks


def language_group_dict(df: Any) -> dict[str, dict[str, Any]]:
    """A ``group_by`` table as JSON: ``{group: {"languages": [...], "queries": n, "scores": {run: {metric: v}}}}``."""
    out: dict[str, dict[str, Any]] = {}
    for g, row in df.iterrows():
        scores: dict[str, dict[str, Any]] = {}
        for (run, metric), v in row.items():
            if run:
                scores.setdefault(run, {})[metric] = v
        out[str(g)] = {"languages": str(row[("", "languages")]).split(", "), "queries": int(row[("", "queries")]),
                       "scores": scores}
    return out


def tests_section(result: Result, digits: int) -> list[Block]:
    if not result.significance:
        return []
    unit = result.info.get("test_unit", {}).get("unit", "query")
    header = ["metric", "run A", "run B", "units", "queries", "mean A", "mean B", "p", "p corrected", "significant"]
    rows = [[c.metric, c.run_a, c.run_b, str(c.n_units), str(c.n_queries), _fmt(c.mean_a, digits),
             _fmt(c.mean_b, digits), format_p(c.p_value, c.p_resolution), format_p(c.p_corrected, c.p_resolution),
             "yes" if c.significant else "no"] for c in result.significance]
    units = {"query": "queries", "query group": "query groups"}.get(unit, unit)
    notes = [f"{describe_test(result)[0].upper()}{describe_test(result)[1:]}; units: {units} in both runs' scores; "
             "mean A/B: the means the test compares (over units, each unit the mean of its queries)."]
    return [Block("paired tests", header, rows, notes)]


def _input_rows(inputs: dict) -> list[list[Cell]]:
    from mlirkit.io.provenance import summary

    def row(label: str, d: dict) -> list[str]:
        origin = (summary(d["provenance"]) if d.get("provenance") else
                  f"sidecar {d['provenance_stale']} is for other bytes (ignored)" if d.get("provenance_stale") else
                  "" if "sha256" not in d else "no provenance sidecar")
        return [label, d.get("path") or d.get("source", ""), (d.get("sha256") or "")[:16], origin]

    rows = [row("qrels", inputs["qrels"])] if inputs.get("qrels") else []
    return rows + [row(f"run {name}", d) for name, d in inputs.get("runs", {}).items()]


def inputs_section(result: Result, digits: int) -> list[Block]:
    """The files scored (set by ``mlirkit.eval``'s CLI): qrels and each run with its sha256 (first 16 digits)
    and, for a run, where it came from (its provenance sidecar in one line, :func:`mlirkit.io.provenance.summary`)."""
    inputs = getattr(result, "inputs", None)
    if not inputs:
        return []
    return [Block("inputs", ["input", "file", "sha256", "where it came from"], _input_rows(inputs))]


#: the sections of a report, in order
SECTIONS: list[Callable[[Result, int], list[Block]]] = [main_section, per_language_section, language_group_section,
                                                        tests_section, inputs_section]


def blocks(result: Result, digits: int = 4) -> list[Block]:
    return [b for section in SECTIONS for b in section(result, digits)]


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table whose columns are padded to their widest cell; cells escaped (:func:`_md`)."""
    header, rows = [_md(h) for h in header], [[_md(c) for c in row] for row in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep] + [line(r) for r in rows])


def _markdown_cell(cell: Cell) -> str:
    if isinstance(cell, str):
        return cell
    text, mark = cell
    return text + (mark if mark == DAGGER else "".join(_SUPERSCRIPT.get(ch, ch) for ch in mark))


def render_markdown(result: Result, digits: int = 4) -> str:
    parts = []
    for b in blocks(result, digits):
        table = markdown_table(b.header, [[_markdown_cell(c) for c in row] for row in b.rows])
        parts.append(table if b.title is None else f"**{_md(b.title)}**\n\n{table}")
        if b.notes:
            parts.append("\n".join(one_line(n) for n in b.notes))
    return "\n\n".join(parts) + "\n"


def _tex(text: str) -> str:
    out = one_line(text)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}"),
                 ("<", r"\textless{}")):
        out = out.replace(a, b) if a != "\\" else out.replace(a, "\x00")
    return out.replace("\x00", r"\textbackslash{}")


def _latex_cell(cell: Cell) -> str:
    if isinstance(cell, str):
        return _tex(cell)
    text, mark = cell
    return _tex(text) + ("" if not mark else (r"$^{\dagger}$" if mark == DAGGER else "$^{" + mark + "}$"))


def _latex_tabular(header: list[str], rows: list[list[str]], caption: str | None = None) -> str:
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + caption + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def render_latex(result: Result, digits: int = 4) -> str:
    """booktabs tables (``\\usepackage{booktabs}``), one per block; marks as superscripts."""
    parts = []
    for b in blocks(result, digits):
        header = ["Run" if h == "run" else h for h in b.header]
        caption = " ".join(([b.title] if b.title else []) + b.notes)
        parts.append(_latex_tabular([_tex(h) for h in header], [[_latex_cell(c) for c in row] for row in b.rows],
                                    _tex(caption) or None))
    return "\n\n".join(parts) + "\n"


REPORT_FORMATS: Registry[Callable[[Result, int, bool], str]] = Registry("report format")
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


def write_report(result: Result, path: str | os.PathLike, *, overwrite: bool = True, digits: int = 4,
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


__all__ = ["Block", "DAGGER", "REPORT_FORMATS", "SECTIONS", "blocks", "describe_test", "format_cell",
           "language_group_dict", "markdown_table", "one_line", "render_latex", "render_markdown", "report_format",
           "run_letters", "significance_marks", "write_report"]
