"""Paired significance tests between runs on per-query scores, with multiple-comparison correction.

- ``fisher``: Fisher's randomization test as ranx implements it (Smucker, Allan & Carterette,
  CIKM 2007): under H0 the two systems' scores of each query are exchangeable, so each
  permutation swaps the pair of every query with probability 1/2, i.e. flips the sign of the
  difference ``d_q = a_q - b_q``::

      p = (1/P) * #{ permutations s : |mean_q(s_q * d_q)| >= |mean_q(d_q)| }

  with ``P`` permutations (ranx's default 1000) drawn from a seeded NumPy generator. ranx draws
  them inside a numba parallel loop whose random state is per thread, so its p-values vary from
  call to call; this implementation is the same estimator, reproducible.
- ``student``: two-sided paired t-test (``scipy.stats.ttest_rel``), exactly ranx's.

Scores are compared on the queries present in both runs' per-query scores (for TLR@k: the queries
counted for both). Within one metric, the p-values of all comparisons are corrected together:
Holm (1979) step-down or Bonferroni.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry

_TIE_EPS = 1e-12


def fisher_randomization_test(a: np.ndarray, b: np.ndarray, n_permutations: int = 1000, seed: int = 42) -> float:
    """Two-sided p-value of Fisher's randomization test on paired scores ``a`` and ``b``."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(d)
    if n == 0:
        return float("nan")
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, min(n_permutations, 4_000_000 // max(n, 1)))
    done = 0
    while done < n_permutations:
        m = min(chunk, n_permutations - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        stats = np.abs(signs @ d) / n
        hits += int(np.count_nonzero(stats >= observed - _TIE_EPS))
        done += m
    return hits / n_permutations


def exact_randomization_test(a: np.ndarray, b: np.ndarray) -> float:
    """Exact p-value of the randomization test (all ``2^n`` sign flips; n <= 20)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(d)
    if n > 20:
        raise ValueError("exact test limited to 20 queries")
    signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
    return float(np.mean(np.abs(signs @ d) / n >= abs(d.mean()) - _TIE_EPS))


def paired_t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired Student t-test p-value (NaN when undefined, e.g. identical scores)."""
    from scipy.stats import ttest_rel

    if len(a) < 2:
        return float("nan")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy warns on (nearly) identical scores
        return float(ttest_rel(a, b, alternative="two-sided").pvalue)


TESTS: Registry[str] = Registry("significance test")
TESTS.register("fisher", "Fisher's randomization test (ranx stat_test='fisher')")
TESTS.register("student", "two-sided paired t-test (ranx stat_test='student')")

CORRECTIONS: Registry[str] = Registry("correction")
CORRECTIONS.register("holm", "Holm-Bonferroni step-down")
CORRECTIONS.register("bonferroni", "Bonferroni")
CORRECTIONS.register("none", "no correction")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values: ``p_(i)' = max_{j<=i} min(1, (m - j + 1) p_(j))`` (NaN kept)."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    running = 0.0
    for rank, i in enumerate(ok[np.argsort(p[ok], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out.tolist()


def bonferroni(p_values: Sequence[float]) -> list[float]:
    p = np.asarray(p_values, dtype=np.float64)
    m = int((~np.isnan(p)).sum())
    return np.minimum(1.0, p * m).tolist()


def correct(p_values: Sequence[float], method: str) -> list[float]:
    CORRECTIONS.get(method)
    if method == "holm":
        return holm(p_values)
    if method == "bonferroni":
        return bonferroni(p_values)
    return [float(p) for p in p_values]


@dataclass
class Comparison:
    metric: str
    run_a: str
    run_b: str
    test: str
    n_queries: int
    mean_a: float
    mean_b: float
    p_value: float
    p_corrected: float
    significant: bool

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("mean_a", "mean_b", "p_value", "p_corrected"):
            if d[key] is not None and np.isnan(d[key]):
                d[key] = None
        return d


def compare_runs(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], metrics: Sequence[str], *,
                 test: str = "fisher", baseline: str | None = None, correction: str = "holm",
                 max_p: float = 0.05, n_permutations: int = 1000, seed: int = 42) -> list[Comparison]:
    """Paired tests for every metric: every pair of runs, or each run against ``baseline``.

    ``per_query`` is ``{run: {metric: {qid: score}}}``; a query missing from one run's scores (a
    TLR@k query not counted) is left out of that comparison.
    """
    TESTS.get(test)
    CORRECTIONS.get(correction)
    names = list(per_query)
    if baseline is not None and baseline not in per_query:
        from mlirkit.base.registry import did_you_mean

        raise MlirkitError(f"baseline {baseline!r} is not one of the runs{did_you_mean(baseline, names)}")
    if baseline is not None:
        pairs = [(baseline, n) for n in names if n != baseline]
    else:
        pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    out: list[Comparison] = []
    for metric in metrics:
        group: list[Comparison] = []
        for a_name, b_name in pairs:
            a_scores, b_scores = per_query[a_name][metric], per_query[b_name][metric]
            qids = sorted(set(a_scores) & set(b_scores))
            a = np.array([a_scores[q] for q in qids], dtype=np.float64)
            b = np.array([b_scores[q] for q in qids], dtype=np.float64)
            if not qids:
                p = float("nan")
            elif test == "fisher":
                p = fisher_randomization_test(a, b, n_permutations, seed)
            else:
                p = paired_t_test(a, b)
            group.append(Comparison(metric, a_name, b_name, test, len(qids),
                                    float(a.mean()) if qids else float("nan"),
                                    float(b.mean()) if qids else float("nan"), p, p, False))
        for c, p_adj in zip(group, correct([c.p_value for c in group], correction)):
            c.p_corrected = p_adj
            c.significant = bool(not np.isnan(p_adj) and p_adj <= max_p)
        out.extend(group)
    return out


__all__ = ["CORRECTIONS", "Comparison", "TESTS", "bonferroni", "compare_runs", "correct",
           "exact_randomization_test", "fisher_randomization_test", "holm", "paired_t_test"]
