"""A ``ranx.Report`` out of :func:`mlirkit.eval.evaluate` (ranx objects go in through :mod:`mlirkit.eval.inputs`).

:func:`to_ranx_report` turns an :class:`~mlirkit.eval.result.EvaluationResult` into a ``ranx.Report``
(``print(report)``, ``report.to_latex()``, ``report.to_dataframe()``, ``report.to_dict()``,
``report.save(path)``) with mlirkit's own means and significance decisions, so code written for
``ranx.compare`` reads it: the macro mean over query languages under each metric's name with the micro
mean beside it (``"<metric> (micro)"``, untested) when queries mix languages, and the test's unit in the
LaTeX caption and in ``to_dict()["test_unit"]``.
"""
from __future__ import annotations

import math
from typing import Any, Mapping


def _win_tie_loss(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, int]:
    common = [q for q in a if q in b]
    return {"W": sum(a[q] > b[q] for q in common), "T": sum(a[q] == b[q] for q in common),
            "L": sum(a[q] < b[q] for q in common)}


def to_ranx_report(result: Any, rounding_digits: int = 3, show_percentages: bool = False):
    """A ``ranx.Report`` holding ``result``'s runs, metric means and paired tests.

    Pairs that were not tested (``baseline`` given, or ``significance=None``) carry ``p_value``
    None and are not significant. Metrics ranx has no label for (``tlr@k``, ``samelang@k``) are
    labelled by their own name in the table.
    """
    from mlirkit.base.numba_cache import import_ranx

    import_ranx()  # ranx's kernels in mlirkit's cache
    from ranx.data_structures.frozenset_dict import FrozensetDict
    from ranx.data_structures.report import Report

    from mlirkit.eval.means import MICRO_SUFFIX, micro_column
    from mlirkit.eval.report import describe_test

    test_label = describe_test(result)
    test_unit = result.info.get("test_unit")

    class _Report(Report):
        def get_metric_label(self, m):
            try:
                return super().get_metric_label(m)
            except KeyError:
                return m.upper() if "@" not in m else f"{m.split('@')[0].upper()}@{m.split('@')[1]}"

        def get_stat_test_label(self, stat_test: str) -> str:
            return test_label

        def to_dict(self):
            return {**super().to_dict(), "test_unit": test_unit}

    names = list(result.runs)
    metrics = [c for m in result.metrics for c in (m, micro_column(m)) if c in result.table.columns]
    results = {}
    for name in names:
        row = {}
        for m in metrics:
            v = float(result.table.loc[name, m])
            row[m] = 0.0 if math.isnan(v) else v
        results[name] = row
    tested = {(c.run_a, c.run_b, c.metric): c for c in result.significance}
    comparisons = FrozensetDict()
    win_tie_loss: dict = {}
    for a in names:
        for b in names:
            if a == b:
                continue
            if frozenset((a, b)) not in comparisons.keys():
                entry = {}
                for m in metrics:
                    c = tested.get((a, b, m)) or tested.get((b, a, m))
                    entry[m] = {"p_value": None if c is None else c.p_corrected,
                                "significant": bool(c is not None and c.significant)}
                comparisons[a, b] = entry
            win_tie_loss[(a, b)] = {m: _win_tie_loss(result.per_query[a][m.removesuffix(MICRO_SUFFIX)],
                                                     result.per_query[b][m.removesuffix(MICRO_SUFFIX)])
                                    for m in metrics}
    stat_test = result.settings.get("significance") or "fisher"
    return _Report(model_names=names, results=results, comparisons=comparisons, metrics=metrics,
                   max_p=result.settings.get("max_p", 0.05), win_tie_loss=win_tie_loss,
                   rounding_digits=rounding_digits, show_percentages=show_percentages, stat_test=stat_test)


__all__ = ["to_ranx_report"]
