"""The two means of a per-query metric over a multilingual query set.

- micro, over queries: ``mean_q m(q)``: every query counts once;
- macro, over query languages: ``mean_l mean_{q : lang(q) = l} m(q)``: every query language counts
  once, so a language with many queries does not dominate (they differ as soon as languages have
  different numbers of queries, and for a language-dependent metric such as TLR@k, whose counted
  queries differ per language).

Undefined values (NaN: a TLR@k query not counted) are left out of both; a language with none defined
is left out of the macro mean; no defined value at all gives NaN. In tables the macro mean is the
metric's own column and the micro mean sits beside it as ``"<metric> (micro)"`` (:func:`micro_column`).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

MICRO_SUFFIX = " (micro)"


def micro_column(metric: str) -> str:
    """The column of a metric's micro mean, beside its macro mean."""
    return metric + MICRO_SUFFIX


def micro_mean(values: Mapping[str, float] | Sequence[float] | np.ndarray) -> float:
    """Mean over the defined values (a mapping's values)."""
    arr = np.fromiter(values.values(), dtype=np.float64) if isinstance(values, Mapping) \
        else np.asarray(values, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if len(arr) else float("nan")


def macro_mean(values: Sequence[float] | np.ndarray, strata: Sequence[str]) -> float:
    """Mean over strata (query languages) of each stratum's mean of its defined values."""
    arr = np.asarray(values, dtype=np.float64)
    if len(arr) != len(strata):
        raise ValueError(f"{len(strata)} strata for {len(arr)} values")
    ok = ~np.isnan(arr)
    if not ok.any():
        return float("nan")
    _, codes = np.unique(np.asarray(strata, dtype=object)[ok].astype(str), return_inverse=True)
    return float((np.bincount(codes, weights=arr[ok]) / np.bincount(codes)).mean())


__all__ = ["MICRO_SUFFIX", "macro_mean", "micro_column", "micro_mean"]
