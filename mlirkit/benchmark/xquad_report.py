"""The XQuAD-R part of the benchmark report (:mod:`.xquad`), and the MLQA-R part run by the same code: each
part's section of ``report.md``, its object in ``report.json``, and the tables the CLI prints (the main
table, LAReQA's mAP)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlirkit.benchmark.tables import (DAGGER, comparisons_table, fairness_note, fmt, label, metric_digits, metric_rows,
                                     precisions, system_alpha, table)

if TYPE_CHECKING:  # pragma: no cover
    from mlirkit.benchmark.result import BenchmarkResult
    from mlirkit.benchmark.xquad import LareqaResult, XquadEncoderResult

RECALL_TABLE = "recall@{k} by document language"


@dataclass(frozen=True)
class Part:
    """A pooled-collection part of the report: where its results are in the :class:`BenchmarkResult`, its title."""

    key: str  # "xquad-r" or "mlqa-r" (the ``--parts`` name, the folder of its runs)
    label: str
    title: str
    relevant: str  # what is relevant, for the section's first line

    def entries(self, result: "BenchmarkResult") -> list:
        return result.xquad if self.key == "xquad-r" else result.mlqa

    def data(self, result: "BenchmarkResult") -> dict[str, Any]:
        return result.xquad_data if self.key == "xquad-r" else result.mlqa_data


PARTS = {p.key: p for p in (
    Part("xquad-r", "XQuAD-R", "XQuAD-R: the SHIFT paper's benchmark", "the question's paragraph in every language"),
    Part("mlqa-r", "MLQA-R", "MLQA-R: partly parallel (MLQA dev, LAReQA's files)",
         "the question's paragraph in every language that has the question (2-4)"),
)}
XQUAD_PART = PARTS["xquad-r"]


def main_rows(result: "BenchmarkResult", digits: int = 3, part: Part = XQUAD_PART) -> tuple[list[str], list[list[str]]]:
    """A part's main table: every encoder and system, macro mean over query languages, micro beside it."""
    return metric_rows([(x.name, x.result, x.main_runs) for x in part.entries(result)], result.config.metrics, digits)


def main_table(result: "BenchmarkResult", digits: int = 3, part: Part = XQUAD_PART) -> str:
    return table(*main_rows(result, digits, part))


def lareqa_rows(result: "BenchmarkResult", digits: int = 3) -> tuple[list[str], list[list[str]]]:
    """LAReQA's table: mAP (macro over query languages, micro beside it, then per query language) and
    the grouped test against base."""
    from mlirkit.eval.significance import format_p

    entries = [x for x in result.xquad if x.lareqa is not None]
    if not entries:
        return [], []
    from mlirkit.eval.report import significance_marks

    langs = entries[0].lareqa.languages
    fair = [] if entries[0].lareqa.fairness is None else entries[0].lareqa.fairness.metrics
    header = ["encoder", "system", "alpha", "mAP", "mAP (micro)", *langs, "p (Holm)", *(label(m) for m in fair)]
    rows = []
    for x in entries:
        lq = x.lareqa
        tests = {c.run_b: c for c in lq.tests}
        marks = {} if lq.fairness is None else significance_marks(lq.fairness)
        for system in lq.systems:
            c = tests.get(system)
            mark = DAGGER if c is not None and c.significant else ""
            rows.append([x.name, *system_alpha(system), fmt(lq.value(system), digits) + mark,
                         fmt(lq.value(system, micro=True), digits),
                         *(fmt(lq.value(system, lang=la), digits) for la in langs),
                         "" if c is None else format_p(c.p_corrected, c.p_resolution),
                         *(fmt(lq.fairness.value(system, m), metric_digits(m, digits)) +
                           (DAGGER if (system, m) in marks else "") for m in fair)])
    return header, rows


def lareqa_table(result: "BenchmarkResult", digits: int = 3) -> str:
    header, rows = lareqa_rows(result, digits)
    return table(header, rows) if rows else ""


def by_query_language(x: "XquadEncoderResult", metric: str) -> str:
    """``metric`` per query language (``†``: that language's test against base, Holm over the systems), the
    macro mean, and the largest drop below base over the languages."""
    langs = sorted(x.lang_tests)
    value = {lang: x.result.per_language[f"query language {lang}"] for lang in langs}
    significant = {(lang, c.run_b) for lang, tests in x.lang_tests.items() for c in tests if c.significant}
    header = ["system", *langs, "mean", "largest drop below base"]
    rows = []
    for run in x.main_runs:
        cells = [run]
        for lang in langs:
            cells.append(fmt(value[lang].loc[run, metric]) + (DAGGER if (lang, run) in significant else ""))
        drops = [value[la].loc[run, metric] - value[la].loc["base", metric] for la in langs]
        cells += [fmt(x.result.value(run, metric)), "" if run == "base" else _drop(drops, langs)]
        rows.append(cells)
    return table(header, rows)


def _drop(deltas: list[float], langs: list[str]) -> str:
    worst = min(range(len(deltas)), key=lambda i: deltas[i])
    return "none" if deltas[worst] >= 0 else f"{deltas[worst]:+.3f} ({langs[worst]})"


def by_document_language(x: "XquadEncoderResult", k: int) -> str:
    df = x.result.per_language[RECALL_TABLE.format(k=k)]
    langs = [str(c) for c in df.columns]
    header = ["system", *langs, "largest drop below base"]
    rows = []
    for run in x.main_runs:
        deltas = [float(df.loc[run, la] - df.loc["base", la]) for la in langs]
        rows.append([run, *(fmt(df.loc[run, la]) for la in langs), "" if run == "base" else _drop(deltas, langs)])
    return table(header, rows)


def _alpha_table(x: "XquadEncoderResult", metric: str) -> str:
    sources = list(x.sweep)
    alphas = sorted({a for curve in x.sweep.values() for a in curve})
    header = ["alpha", *(f"{label(metric)}, {s}" for s in sources)]
    rows = [[f"{a:g}", *(fmt(x.sweep[s].get(a)) + (" (chosen)" if a == x.chosen_alpha[s] else "") for s in sources)]
            for a in alphas]
    best = {s: max(c, key=lambda a: (c[a] if c[a] is not None else -1, -a)) for s, c in x.sweep.items()}
    rows.append(["label-free choice", *(f"{x.chosen_alpha[s]:g}" for s in sources)])
    rows.append(["sweep's best (not used)", *(f"{best[s]:g} ({fmt(x.sweep[s][best[s]])})" for s in sources)])
    return table(header, rows)


def _vectors(result: "BenchmarkResult", x: "XquadEncoderResult") -> list[str]:
    lines = []
    for source, info in x.vectors.items():
        pairs = info.get("pairs")
        what = (f"{', '.join(info['sources'])}; {sum(pairs.values())} pairs ({', '.join(f'{k} {v}' for k, v in pairs.items())})"
                if pairs else f"the language means of `{info['sources'][0]}`'s documents (`--vectors corpus`)")
        missing = info.get("missing_languages")
        if missing:
            parts = []
            if missing.get("filled"):
                parts.append(f"{', '.join(missing['filled'])} filled from the corpus ({missing.get('formula', '')})")
            if missing.get("kept"):
                parts.append(f"{', '.join(missing['kept'])} left unshifted")
            what += f"; no pairs for {'; '.join(parts)}"
        elif info.get("never_shifted_documents"):
            what += f"; {info['never_shifted_documents']} documents of languages without a vector left unshifted"
        lines.append(f"  - `{source}`: {what}.")
    return lines


def _lareqa_section(x: "XquadEncoderResult", lq: "LareqaResult") -> list[str]:
    return [f"#### LAReQA sentence pool, {x.name}", "",
            f"Label-free alpha: {', '.join(f'{s} {a:g}' for s, a in lq.chosen_alpha.items())}.", "",
            comparisons_table(lq.tests, lq.systems), "",
            *([comparisons_table(lq.fairness.significance, lq.systems), ""] if lq.fairness is not None else [])]


def markdown(result: "BenchmarkResult", part: Part = XQUAD_PART) -> list[str]:
    """A part's section of ``report.md``."""
    from mlirkit.eval.report import describe_test

    cfg = result.config
    entries = part.entries(result)
    d = part.data(result)["paragraphs"]
    x0 = entries[0]
    per_lang = d["documents_per_language"]
    selection = next(iter(x0.vectors.values()))["label_free_alpha"]
    lines = [f"## {part.title}", "",
             f"- Collection `{d['id']}`: {d['documents']:,} paragraphs pooled over {len(per_lang)} languages "
             f"({', '.join(f'{k} {v}' for k, v in per_lang.items())}); {d['queries']:,} queries ({d['questions']:,} "
             f"questions in {len(d['queries_per_language'])} languages), each searched against the whole pool; "
             f"relevant = {part.relevant} (binary).",
             "- One index per encoder (untransformed vectors). SHIFT at query time: each query scored with its own "
             "language's re-based vectors (`python -m mlirkit.search --query-shift cosine`); centering and LIR on "
             "documents and queries at alpha 1; `lsar-corpus` and `leace-corpus` fitted on the pooled paragraphs and "
             "their languages (no parallel text; LSAR at rank = the number of languages, the authors' setting; LEACE "
             "with concept-erasure's defaults), on documents and queries at alpha 1.",
             f"- **Alpha without {part.label}'s labels**: each SHIFT's alpha is the label-free choice on the pooled "
             f"documents (`python -m mlirkit.shift select-alpha`: criterion `{selection.get('criterion')}`, grid "
             f"{min(selection['grid']):g}-{max(selection['grid']):g}); the sweep below is measured for the reader, "
             "never used to choose.",
             "- Language vectors (source language en):", *_vectors(result, x0),
             f"- Metrics as in the DDTP part; every value is the macro mean over query languages (micro = mean over "
             f"queries). Significance: {describe_test(x0.result)} of each system against `base`, Holm-corrected over "
             f"the systems of each encoder and metric; {DAGGER} = significantly different from `base` (p < 0.05). "
             "Per query language, the same test over that language's queries (one per question).",
             *([f"- {fairness_note(cfg)}"] if fairness_note(cfg) else []), "",
             "### Main table", "", main_table(result, part=part), "", precisions(entries), ""]
    if any(x.lareqa is not None for x in entries):
        s = result.xquad_data.get("sentences", {})
        lines += ["### LAReQA: the sentence pool, mean average precision", "",
                  f"`{s.get('id')}`: {s.get('documents', 0):,} candidate sentences of "
                  f"{len(s.get('documents_per_language', {}))} languages, {s.get('queries', 0):,} queries; relevant = "
                  "the sentence holding the answer, in every language. AP over the whole ranking; mAP = macro mean "
                  f"over query languages (micro beside it); p: the grouped test against base (unit: question), Holm. "
                  f"Encoders: {', '.join(x.name for x in entries if x.lareqa is not None)}.", "",
                  lareqa_table(result), ""]
    metric = cfg.select_metric
    for x in entries:
        lines += [f"### {x.name}" if part is XQUAD_PART else f"### {part.label}, {x.name}", "",
                  f"Label-free alpha: {', '.join(f'{s} {a:g}' for s, a in x.chosen_alpha.items())}.", "",
                  f"#### {label(metric)} by query language", "", by_query_language(x, metric), "",
                  f"#### Recall@{cfg.k} by document language", "", by_document_language(x, cfg.k), "",
                  "#### Paired tests against base (unit: question)", "", comparisons_table(x.result.significance,
                                                                                            x.main_runs), "",
                  *[line for source, versus in x.versus_shift.items() for line in (
                      f"#### LSAR and LEACE against SHIFT (`{source}` vectors; unit: question)", "",
                      comparisons_table(versus.significance, list(versus.runs)), "")],
                  "#### Alpha: the label-free choice and the sweep", "", _alpha_table(x, metric), ""]
        if x.lareqa is not None:
            lines += _lareqa_section(x, x.lareqa)
        plots = [p for p in x.files.get("plots", []) if p.endswith(".png")]
        if plots:
            lines += ["#### Plots", ""] + [f"![{Path(p).stem}]({p})" for p in plots] + [""]
        runs = x.files.get("runs", [])
        lines += ["#### Files", "", f"- TREC runs (depth {cfg.k}, gzip, main systems): "
                  f"`{Path(runs[0]).parent if runs else ''}/`",
                  f"- SHIFT vectors as used (missing languages filled as the search fills them): "
                  f"{', '.join(f'`{f}`' for f in x.files.get('transforms', []))}", ""]
    return lines


def to_json(result: "BenchmarkResult", part: Part = XQUAD_PART) -> dict[str, Any]:
    header, rows = main_rows(result, part=part)
    l_header, l_rows = lareqa_rows(result) if part is XQUAD_PART else ([], [])
    encoders = {}
    for x in part.entries(result):
        lq = x.lareqa
        encoders[x.name] = {
            "vectors": x.vectors, "chosen_alpha": x.chosen_alpha, "main_runs": x.main_runs,
            "result": x.result.to_dict(),
            "versus_shift": {source: v.to_dict() for source, v in x.versus_shift.items()},
            "by_query_language_tests": {lang: [c.to_dict() for c in tests] for lang, tests in x.lang_tests.items()},
            "sweep": {s: {f"{a:g}": v for a, v in c.items()} for s, c in x.sweep.items()},
            "lareqa": None if lq is None else {
                "collection": lq.collection, "chosen_alpha": lq.chosen_alpha, "label_free_alpha": lq.selection,
                "map": {s: {"macro": lq.value(s), "micro": lq.value(s, micro=True),
                            **{la: lq.value(s, lang=la) for la in lq.languages}} for s in lq.systems},
                "tests": [c.to_dict() for c in lq.tests],
                "fairness": None if lq.fairness is None else lq.fairness.to_dict()},
            "files": x.files, "timings": x.timings,
        }
    return {"data": part.data(result), "main_table": {"columns": header, "rows": rows},
            "lareqa_table": {"columns": l_header, "rows": l_rows}, "encoders": encoders}


__all__ = ["PARTS", "by_document_language", "by_query_language", "lareqa_rows", "lareqa_table", "main_table",
           "markdown", "to_json"]
