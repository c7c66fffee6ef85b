"""Paired significance tests between runs on per-query scores, with multiple-comparison correction.

The **unit** of a test is a query, or a group of queries that must move together because they are not
independent, e.g. the translations of one question (:mod:`mlirkit.eval.query_groups`). A unit's
statistic is the mean of its queries' differences, ``d_u = mean_{q in u} (a_q - b_q)``; with one query
per unit this is the ordinary per-query test.

- ``fisher``: Fisher's randomization test (Fisher 1935; for IR: Smucker, Allan & Carterette, CIKM
  2007). Under H0 the two systems' scores are exchangeable within every unit, so a permutation flips
  the sign of each unit's difference with probability 1/2, all of a unit's queries together (a
  clustered permutation, the randomization of a cluster-randomized design: Good, *Permutation,
  Parametric and Bootstrap Tests of Hypotheses*, 2005)::

      T(s) = | mean_u s_u d_u |,   s in {-1, +1}^U

  With few units (``U <= 16``, or ``2^U`` no more than the permutations asked for) every sign vector
  is enumerated and ``p = #{s : T(s) >= T(1)} / 2^U`` is exact (its resolution ``2 / 2^U``: ``s`` and
  ``-s`` give the same T). Otherwise ``R`` sign vectors are drawn from a seeded NumPy generator and
  ``p = (b + 1) / (R + 1)`` with ``b = #{sampled s : T(s) >= T(1)}``: the observed assignment counts
  as one of the permutations, so p is never 0 and the test is valid at every level (Phipson & Smyth,
  "Permutation p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9(1), 2010). ranx's
  ``b / R`` is the same estimator without that correction (and, drawn per numba thread, not
  reproducible); the draws here are ranx's scheme with a reproducible generator.
- ``student``: two-sided paired t-test on the unit differences (``scipy.stats.ttest_rel``; per
  query, exactly ranx's).

Scores are compared on the queries present in both runs' per-query scores (for TLR@k: the queries
counted for both); a unit is the set of its queries among those. Within one metric, the p-values of all
comparisons are corrected together: Holm (1979) step-down or Bonferroni. :func:`format_p` prints a p
value with the resolution it has (``< 0.001`` for the smallest p of 1,000 permutations).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry

_TIE_EPS = 1e-12
EXACT_MAX_UNITS = 16  # 2^16 sign vectors: enumerated in well under a second
_CHUNK = 4_000_000  # sign-matrix entries per block


@dataclass(frozen=True)
class PermutationP:
    """A randomization test's p value with how it was obtained: ``permutations`` sign vectors, all
    ``2^U`` of them (``exact``) or ``R`` drawn at random."""

    p: float
    permutations: int
    exact: bool

    @property
    def resolution(self) -> float:
        """The step between attainable p values: ``2 / 2^U`` (exact) or ``1 / (R + 1)`` (sampled)."""
        return 2.0 / self.permutations if self.exact else 1.0 / (self.permutations + 1)


def unit_means(values: np.ndarray, units: Sequence[str] | None = None) -> np.ndarray:
    """Per unit the mean of its values, units in the order of their first value (``units=None``: the
    values themselves, one unit each)."""
    values = np.asarray(values, dtype=np.float64)
    if units is None:
        return values
    if len(units) != len(values):
        raise ValueError(f"{len(units)} unit labels for {len(values)} values")
    codes: dict[str, int] = {}
    idx = np.fromiter((codes.setdefault(u, len(codes)) for u in units), dtype=np.int64, count=len(units))
    return np.bincount(idx, weights=values, minlength=len(codes)) / np.bincount(idx, minlength=len(codes))


def use_exact(n_units: int, n_permutations: int) -> bool:
    """Enumerate every sign vector when there are few units: ``U <= 16`` or ``2^U <= R``."""
    return n_units <= EXACT_MAX_UNITS or (n_units < 63 and 2 ** n_units <= n_permutations)


def randomization_test(d: np.ndarray, n_permutations: int = 1000, seed: int = 42) -> PermutationP:
    """Two-sided randomization test on the unit differences ``d`` (module docstring): exact when
    :func:`use_exact`, else ``(b + 1) / (R + 1)`` over ``R = n_permutations`` seeded draws."""
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n == 0:
        return PermutationP(float("nan"), 0, True)
    if n_permutations < 1:
        raise MlirkitError(f"n_permutations must be a positive integer, got {n_permutations}")
    observed = abs(d.mean()) - _TIE_EPS
    if use_exact(n, n_permutations):
        total = 2 ** n
        hits = 0
        bits = np.arange(n, dtype=np.int64)
        step = max(1, _CHUNK // n)
        for start in range(0, total, step):
            rows = np.arange(start, min(total, start + step), dtype=np.int64)
            signs = ((rows[:, None] >> bits) & 1).astype(np.float64) * 2.0 - 1.0
            hits += int(np.count_nonzero(np.abs(signs @ d) / n >= observed))
        return PermutationP(hits / total, total, True)
    rng = np.random.default_rng(seed)
    hits = done = 0
    step = max(1, min(n_permutations, _CHUNK // n))
    while done < n_permutations:
        m = min(step, n_permutations - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        hits += int(np.count_nonzero(np.abs(signs @ d) / n >= observed))
        done += m
    return PermutationP((hits + 1) / (n_permutations + 1), n_permutations, False)


def fisher_randomization_test(a: np.ndarray, b: np.ndarray, n_permutations: int = 1000, seed: int = 42,
                              units: Sequence[str] | None = None) -> float:
    """Two-sided p of Fisher's randomization test on paired scores ``a``, ``b`` (one unit label per
    query in ``units``, or one unit per query)."""
    d = unit_means(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64), units)
    return randomization_test(d, n_permutations, seed).p


def exact_randomization_test(a: np.ndarray, b: np.ndarray, units: Sequence[str] | None = None) -> float:
    """Exact p of the randomization test: every one of the ``2^U`` sign vectors (``U <= 20``)."""
    d = unit_means(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64), units)
    if len(d) > 20:
        raise ValueError("exact test limited to 20 units")
    return randomization_test(d, 2 ** len(d)).p


def paired_t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired Student t-test p-value (NaN when undefined, e.g. identical scores)."""
    from scipy.stats import ttest_rel

    if len(a) < 2:
        return float("nan")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy warns on (nearly) identical scores
        return float(ttest_rel(a, b, alternative="two-sided").pvalue)


def format_p(p: float | None, resolution: float | None = None) -> str:
    """A p value printed with the resolution it has: ``resolution`` (the step of a permutation test's
    p, :attr:`PermutationP.resolution`) decides the decimals (at least 3; 4 for a t-test), and a p below
    the last decimal is ``< 0.001``-style, so the smallest p of 1,000 permutations, 1/1001, reads
    ``< 0.001`` and never ``0``."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    decimals = 4 if not resolution else max(3, round(-math.log10(resolution)))
    floor = 10.0 ** -decimals
    return f"< {floor:.{decimals}f}" if p < floor else f"{p:.{decimals}f}"


TESTS: Registry[str] = Registry("significance test")
TESTS.register("fisher", "Fisher's randomization test (ranx stat_test='fisher'; p = (b+1)/(R+1) or exact)")
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
    """One paired test. ``n_queries`` queries in ``n_units`` units (``unit``: ``"query"`` or
    ``"query group"``); ``mean_a``/``mean_b``: the means the test compares, over units (each unit the
    mean of its queries; over queries when every unit is one query). ``permutations``: sign vectors
    behind a Fisher p (``exact``: all ``2^U``), None for the t-test."""

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
    n_units: int = 0
    unit: str = "query"
    permutations: int | None = None
    exact: bool = False

    @property
    def p_resolution(self) -> float | None:
        """Step between the attainable p values of a Fisher test (None for the t-test)."""
        if not self.permutations:
            return None
        return PermutationP(self.p_value, self.permutations, self.exact).resolution

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("mean_a", "mean_b", "p_value", "p_corrected"):
            if d[key] is not None and np.isnan(d[key]):
                d[key] = None
        d["p_resolution"] = self.p_resolution
        return d


def compare_runs(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], metrics: Sequence[str], *,
                 test: str = "fisher", baseline: str | None = None, correction: str = "holm",
                 max_p: float = 0.05, n_permutations: int = 1000, seed: int = 42,
                 query_groups: Mapping[str, str] | None = None) -> list[Comparison]:
    """Paired tests for every metric: every pair of runs, or each run against ``baseline``.

    ``per_query`` is ``{run: {metric: {qid: score}}}``; a query missing from one run's scores (a
    TLR@k query not counted) is left out of that comparison. ``query_groups`` ``{qid: group}`` makes
    each group one unit (see the module docstring); None: each query is one.
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
    unit = "query" if query_groups is None else "query group"
    out: list[Comparison] = []
    for metric in metrics:
        group: list[Comparison] = []
        for a_name, b_name in pairs:
            a_scores, b_scores = per_query[a_name][metric], per_query[b_name][metric]
            qids = sorted(set(a_scores) & set(b_scores))
            units = None
            if query_groups is not None:
                missing = [q for q in qids if q not in query_groups]
                if missing:
                    raise MlirkitError(f"no query group for {len(missing)} of {len(qids)} queries "
                                       f"(e.g. {', '.join(map(repr, missing[:3]))})")
                units = [query_groups[q] for q in qids]
            a = unit_means(np.array([a_scores[q] for q in qids], dtype=np.float64), units)
            b = unit_means(np.array([b_scores[q] for q in qids], dtype=np.float64), units)
            permutations, exact = None, False
            if not qids:
                p = float("nan")
            elif test == "fisher":
                result = randomization_test(a - b, n_permutations, seed)
                p, permutations, exact = result.p, result.permutations, result.exact
            else:
                p = paired_t_test(a, b)
            group.append(Comparison(metric, a_name, b_name, test, len(qids),
                                    float(a.mean()) if qids else float("nan"),
                                    float(b.mean()) if qids else float("nan"), p, p, False,
                                    n_units=len(a), unit=unit, permutations=permutations, exact=exact))
        for c, p_adj in zip(group, correct([c.p_value for c in group], correction)):
            c.p_corrected = p_adj
            c.significant = bool(not np.isnan(p_adj) and p_adj <= max_p)
        out.extend(group)
    return out


__all__ = ["CORRECTIONS", "Comparison", "EXACT_MAX_UNITS", "PermutationP", "TESTS", "bonferroni", "compare_runs",
           "correct", "exact_randomization_test", "fisher_randomization_test", "format_p", "holm", "paired_t_test",
           "randomization_test", "unit_means", "use_exact"]
