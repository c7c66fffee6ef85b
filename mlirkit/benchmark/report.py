"""The benchmark report: ``report.md`` (read by people), ``report.json`` (read by programs), the main tables.

The XQuAD-R part comes first (:mod:`.xquad_report`), then the MLQA-R part (the same code), then the DDTP part, whose main table has one row
per (encoder, system) on the **test** split: base, SHIFT at the alpha chosen on dev, centering and LIR
for every fitting condition, with the metrics of the run and ``†`` where a system differs significantly
from the base (Fisher randomization, Holm-corrected over the systems).
"""
from __future__ import annotations

import json
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlirkit.benchmark import xquad_report
from mlirkit.benchmark.tables import (DAGGER, METRIC_LABELS, comparisons_table, fairness_note, fmt, metric_rows,
                                     precisions, table)

if TYPE_CHECKING:  # pragma: no cover
    from mlirkit.benchmark.result import BenchmarkResult, EncoderResult

def main_rows(result: "BenchmarkResult", digits: int = 3) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the DDTP main table (every encoder, test split)."""
    return metric_rows([(enc.name, enc.test, enc.main_runs) for enc in result.encoders], result.config.metrics,
                       digits)


def main_table(result: "BenchmarkResult", digits: int = 3) -> str:
    header, rows = main_rows(result, digits)
    return table(header, rows)


def _sweep_table(enc: "EncoderResult", source: str, metrics: list[str]) -> str:
    header = ["alpha"] + [f"dev {METRIC_LABELS.get(m, m)}" for m in metrics] + \
             [f"test {METRIC_LABELS.get(m, m)}" for m in metrics]
    dev = {m: enc.sweep("dev", source, m) for m in metrics}
    test = {m: enc.sweep("test", source, m) for m in metrics}
    rows = []
    for alpha in sorted(dev[metrics[0]]):
        mark = " (chosen)" if alpha == enc.chosen_alpha[source] else ""
        rows.append([f"{alpha:g}{mark}"] + [fmt(dev[m][alpha]) for m in metrics] + [fmt(test[m][alpha]) for m in metrics])
    for run in ("base", f"centering-{source}", f"lir-{source}"):
        rows.append([run] + [fmt(enc.dev.value(run, m)) for m in metrics] +
                    [fmt(enc.test_sweep.value(run, m)) for m in metrics])
    return table(header, rows)


def _per_language(enc: "EncoderResult") -> str:
    from mlirkit.eval.report import format_cell

    parts = []
    for name, df in enc.test.per_language.items():
        head = ["run"] + [str(c) for c in df.columns]
        body = [[str(r)] + [format_cell(str(r), df.loc[r, c], 3) for c in df.columns] for r in df.index]
        parts.append(f"**{name}** (test split)\n\n" + table(head, body))
    return "\n\n".join(parts)


def render_markdown(result: "BenchmarkResult") -> str:
    cfg = result.config
    lines = ["# mlirkit benchmark: language bias and SHIFT", ""]
    lines += [f"Command: `{result.command}`", "",
              f"Written {datetime.now(timezone.utc).isoformat(timespec='seconds')} by mlirkit "
              f"{_version()} on {platform.machine()} with {_cpus()} CPU cores; total time "
              f"{result.timings.get('total', float('nan')):.0f} s.", ""]
    if cfg.quick:
        lines += ["**Quick run** (`--quick`): a small slice of the benchmark and few translation pairs; the figures "
                  "are a smoke test, not results.", ""]
    if result.xquad:
        lines += xquad_report.markdown(result)
    if result.mlqa:
        lines += xquad_report.markdown(result, xquad_report.PARTS["mlqa-r"])
    if result.encoders:
        lines += _ddtp_markdown(result)
    lines += ["## Time and cache", "",
              *([f"Where the time went: wall seconds (CPU seconds of the process, every thread) per part and stage; "
                 "the table the command prints at the end.", "",
                 result.stages.table(result.timings.get("total")), ""] if result.stages is not None else []),
              table(["step", "seconds"], [[k, f"{v:.1f}"] for k, v in result.timings.items()]), "",
              table(["encoder", "part", "step", "seconds"],
                     [[e.name, part, k, f"{v:.1f}"] for part, entries in (("DDTP", result.encoders),
                                                                           ("XQuAD-R", result.xquad),
                                                                           ("MLQA-R", result.mlqa))
                      for e in entries for k, v in e.timings.items()]), "",
              f"Embedding cache `{result.cache['root']}`: {result.cache['hits']} entries reused, "
              f"{result.cache['misses']} computed ({result.cache['texts_encoded']} texts encoded, "
              f"{result.cache.get('texts_reused', 0)} taken from entries computed earlier in the run).", ""]
    return "\n".join(lines)


def _ddtp_markdown(result: "BenchmarkResult") -> list[str]:
    cfg = result.config
    d = result.data
    langs = d["documents_per_language"]
    lines = [f"## DDTP: `{d['benchmark']}`", "", "### Setting", "",
              f"- Corpus: {d['documents']} documents pooled over {len(langs)} languages "
              f"({', '.join(f'{k} {v}' for k, v in langs.items())}).",
              f"- Queries: {', '.join(f'{n} {s}' for s, n in d['queries'].items())} "
              f"(query languages: {', '.join(sorted({la for v in d['query_languages'].values() for la in v}))}); "
              "relevant = every language version of the query's description (binary).",
              f"- Split: {result.split_statement}",
              f"- Metrics: {', '.join(METRIC_LABELS.get(m, m) for m in cfg.metrics)}. same-lang@20 = share of the "
              "top 20 written in the query's language (\"expected\" = the share among the query's relevant "
              "documents); TLR@20 = recall of relevant documents in other languages than the query's, over queries "
              "that have such documents." + (f" {fairness_note(cfg)}" if fairness_note(cfg) else "") +
              (" MRC@k of a test query: against its translations (the same description's short description in the "
               "other languages, `{b}/multi/test`, encoded for this measure only), each system scoring them as it "
               "scores the query.".format(b=d["benchmark"]) if any(m.startswith("mrc@") for m in cfg.metrics) else ""),
              f"- Significance: {_test_description(result)} "
              f"of each system against `base`, Holm-corrected over the systems of each "
              f"encoder and metric; {DAGGER} = significantly different from `base` (p < 0.05 after correction; the "
              "values show the direction; lower same-lang@20 is less bias).",
              "- Systems: `base` (no transform); `shift-S` (SHIFT, documents only, alpha chosen on dev); "
              "`centering-S` and `lir-S` (rank "
              f"{cfg.lir_rank}) on documents and queries at their published strength (alpha 1); `lsar-corpus` and "
              "`leace-corpus` (LSAR at rank = the number of languages, LEACE: concept-erasure's defaults) fitted on the "
              "pooled corpus's documents and their languages, no parallel text, on documents and queries at alpha 1. "
              "S = the parallel text the transforms were fitted on:"]
    for enc in result.encoders[:1]:
        for source, info in enc.parallel.items():
            pairs = info["pairs"]
            lines.append(f"  - `{source}`: {', '.join(info['sources'])}; {sum(pairs.values())} pairs "
                         f"({', '.join(f'{k} {v}' for k, v in pairs.items())}), source language {cfg.source_lang}.")
    lines += ["", "### Main table (test split)", "", main_table(result), "", precisions(result.encoders), ""]
    for enc in result.encoders:
        lines += [f"### {enc.name}", "",
                  f"Fingerprint digest `{enc.digest}`, dimension {enc.dim}. "
                  f"Alpha chosen on dev: {', '.join(f'{s} {a:g}' for s, a in enc.chosen_alpha.items())}.", "",
                  "#### Paired tests against base (test split)", "", comparisons_table(enc.test.significance, enc.main_runs),
                  ""]
        for source, versus in enc.versus_shift.items():
            lines += [f"#### LSAR and LEACE against SHIFT (`{source}`, test split)", "",
                      comparisons_table(versus.significance, list(versus.runs)), ""]
        metrics = [m for m in (cfg.select_metric, "tlr@20", "samelang@20") if m in cfg.metrics]
        for source in enc.chosen_alpha:
            lines += [f"#### Alpha sweep, SHIFT fitted on `{source}` (dev chooses, test reports)", "",
                      _sweep_table(enc, source, metrics), ""]
        lines += ["#### Per language", "", _per_language(enc), ""]
        plots = [p for p in enc.files.get("plots", []) if p.endswith(".png")]
        if plots:
            lines += ["#### Plots", ""] + [f"![{Path(p).stem}]({p})" for p in plots] + [""]
        lines += ["#### Files", "", f"- TREC runs (depth {cfg.depth}, main systems, dev and test): "
                  f"`{Path(enc.files['runs'][0]).parent.parent}/`",
                  f"- transform files: {', '.join(f'`{f}`' for f in enc.files.get('transforms', []))}", ""]
    return lines


def to_json(result: "BenchmarkResult") -> dict[str, Any]:
    from mlirkit.eval.result import json_safe

    header, rows = main_rows(result)
    encoders = {}
    for enc in result.encoders:
        encoders[enc.name] = {
            "fingerprint": enc.fingerprint, "digest": enc.digest, "dim": enc.dim,
            "parallel": enc.parallel, "chosen_alpha": enc.chosen_alpha, "main_runs": enc.main_runs,
            "test": enc.test.to_dict(),
            "versus_shift": {source: v.to_dict() for source, v in enc.versus_shift.items()},
            "dev": enc.dev.to_dict(),
            "test_sweep": {run: {m: enc.test_sweep.value(run, m) for m in enc.test_sweep.table.columns}
                           for run in enc.test_sweep.runs},
            "files": enc.files, "timings": enc.timings,
        }
    return json_safe({
        "command": result.command, "mlirkit_version": _version(), "cpus": _cpus(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": result.config.to_dict(), "data": result.data, "split": result.split_statement,
        "main_table": {"columns": header, "rows": rows}, "encoders": encoders,
        "xquad": xquad_report.to_json(result) if result.xquad else None,
        "mlqa": xquad_report.to_json(result, xquad_report.PARTS["mlqa-r"]) if result.mlqa else None,
        "cache": {k: v for k, v in result.cache.items() if k != "entries"}, "cache_entries": result.cache["entries"],
        "timings": result.timings, "stages": None if result.stages is None else result.stages.to_dict(),
    })


def write_reports(result: "BenchmarkResult", out: Path) -> list[Path]:
    """``report.md`` and ``report.json`` in ``out``."""
    md = out / "report.md"
    js = out / "report.json"
    md.write_text(render_markdown(result), encoding="utf-8")
    js.write_text(json.dumps(to_json(result), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return [md, js]


def _test_description(result: "BenchmarkResult") -> str:
    """The paired test and its unit (queries, or groups of translated queries) as the eval reports say it."""
    from mlirkit.eval.report import describe_test

    return describe_test(result.encoders[0].test) if result.encoders else "Fisher's randomization test"


def _version() -> str:
    from mlirkit import __version__

    return __version__


def _cpus() -> int:
    from mlirkit.benchmark.result import cpu_count

    return cpu_count()


__all__ = ["main_table", "write_reports"]
