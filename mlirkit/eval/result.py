"""The outcome of :func:`mlirkit.eval.evaluate`: tables, per-query scores, tests, and their renderings.

The renderings themselves live in :mod:`mlirkit.eval.report` (which reads a result's attributes and
never imports this module), so the dependency runs one way: result -> report.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from mlirkit.eval import report
from mlirkit.eval.means import micro_column

RESERVED_KEYS = ("_meta", "_per_language", "_language_groups", "_significance", "_per_query")


def json_safe(value: Any) -> Any:
    """JSON-safe: NaN -> None, numpy scalars -> Python."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@dataclass
class EvaluationResult:
    """``table``: DataFrame, rows = runs, columns = metrics as named: the macro mean over query
    languages, with ``"<metric> (micro)"`` (mean over queries) beside it when the queries have more than
    one language (plus ``samelang@k (expected)``), NaN where a metric is undefined (TLR@k with no
    counted query). ``per_query``: ``{run: {metric: {qid: score}}}`` (TLR@k/samelang@k: counted queries
    only). ``per_language``: named DataFrames (recall by document language, top-k language share, one
    table per query language when queries mix languages). ``language_groups``: ``{key: DataFrame}`` of
    ``group_by`` (:func:`mlirkit.eval.groups.group_scores`). ``significance``: list of
    :class:`~mlirkit.eval.significance.Comparison`, their unit in ``info["test_unit"]``. ``counted``:
    ``{metric: queries counted}`` of the metrics that leave queries out (TLR@k, MRC@k, PEER-MIMO@k)."""

    table: Any
    per_query: dict[str, dict[str, dict[str, float]]]
    per_language: dict[str, Any]
    significance: list
    counted: dict[str, int]
    settings: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    language_groups: dict[str, Any] = field(default_factory=dict)
    #: the files scored (``{"qrels": {...}, "runs": {name: {path, sha256, provenance}}}``, set by the CLI;
    #: :func:`mlirkit.io.provenance.describe_file`)
    inputs: dict[str, Any] = field(default_factory=dict)

    @property
    def runs(self) -> list[str]:
        return list(self.table.index)

    @property
    def metrics(self) -> list[str]:
        return list(self.settings.get("metrics", self.table.columns))

    def value(self, run: str, metric: str, *, micro: bool = False) -> float | None:
        """The table's value: the macro mean over query languages (``micro=True``: the mean over
        queries; the same value when the queries have one language)."""
        column = micro_column(metric) if micro and micro_column(metric) in self.table else metric
        v = float(self.table.loc[run, column])
        return None if math.isnan(v) else v

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """``{run: {metric: value}}`` plus ``_meta``, ``_per_language``, ``_language_groups``,
        ``_significance`` (and ``_per_query`` when asked); undefined values are ``None``."""
        out: dict[str, Any] = {run: {col: self.table.loc[run, col] for col in self.table.columns}
                               for run in self.table.index}
        out["_meta"] = {"settings": self.settings, "counted": self.counted, "info": self.info,
                        **({"inputs": self.inputs} if self.inputs else {})}
        out["_per_language"] = {name: {str(row): {str(c): df.loc[row, c] for c in df.columns} for row in df.index}
                                for name, df in self.per_language.items()}
        out["_language_groups"] = {key: report.language_group_dict(df) for key, df in self.language_groups.items()}
        out["_significance"] = [c.to_dict() for c in self.significance]
        if per_query:
            out["_per_query"] = self.per_query
        return json_safe(out)

    def to_json(self, per_query: bool = False, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(per_query), indent=indent, ensure_ascii=False) + "\n"

    def to_markdown(self, digits: int = 4) -> str:
        return report.render_markdown(self, digits)

    def to_ranx_report(self, rounding_digits: int = 3, show_percentages: bool = False):
        """This result as a ``ranx.Report`` (:func:`mlirkit.eval.ranx_interop.to_ranx_report`)."""
        from mlirkit.eval.ranx_interop import to_ranx_report

        return to_ranx_report(self, rounding_digits, show_percentages)

    def to_latex(self, digits: int = 4) -> str:
        return report.render_latex(self, digits)

    def to_csv(self) -> str:
        return self.table.to_csv(float_format="%.6g", na_rep="")

    def __str__(self) -> str:
        return self.to_markdown()


__all__ = ["EvaluationResult", "RESERVED_KEYS", "json_safe"]
