"""Fuse runs through ``ranx.fuse``, with weights tuned on dev runs through ``ranx.optimize_fusion``.

mlirkit adds only what ranx leaves to its caller: the checks that make bad input one clear error (ranx
asserts), and the query alignment. Every run must list the same queries (ranx's rule); with
``allow_missing=True`` a query some runs lack is fused from the runs that list it (its missing lists count
as empty), which is what a BM25 run needs: a TREC file cannot hold a query without hits.

Runs may be ``ranx.Run`` objects or ``{qid: {docid: score}}`` dicts; ``names`` label them in errors.
"""
from __future__ import annotations

import logging
import math
import os
import warnings
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import in_cli, option
from mlirkit.eval.inputs import as_qrels, as_run
from mlirkit.fuse.methods import method as get_method
from mlirkit.fuse.methods import norm as get_norm

logger = logging.getLogger(__name__)

RunLike = Any  # ranx.Run or {qid: {docid: score}}


def _ranx():
    from mlirkit.base.numba_cache import announce_first_compile, import_ranx

    ranx = import_ranx()
    announce_first_compile("fusion", "fusion")
    return ranx


@contextmanager
def _quiet_casts() -> Iterator[None]:
    """ranx's prange loops cast their uint64 index (a harmless numba warning, silenced as in mlirkit.eval)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="unsafe cast from uint64 to int64")
        yield


def align_runs(runs: Sequence[RunLike], names: Sequence[str] | None = None,
               allow_missing: bool = False) -> list[dict[str, dict[str, float]]]:
    """The runs as dicts over one query set; an empty run, fewer than two runs, or (unless
    ``allow_missing``) runs with different query ids is :class:`MlirkitError`."""
    names = list(names) if names is not None else [f"run {i + 1}" for i in range(len(runs))]
    if len(runs) < 2:
        raise MlirkitError(f"fusion needs at least two runs, got {len(runs)}")
    dicts = [{q: dict(d) for q, d in as_run(r).items()} for r in runs]
    for name, run in zip(names, dicts):
        if not any(run.values()):
            raise MlirkitError(f"{name}: empty run (no results)")
    first = set(dicts[0])
    for name, run in zip(names[1:], dicts[1:]):
        if set(run) != first and not allow_missing:
            only_first, only_this = sorted(first - set(run)), sorted(set(run) - first)
            raise MlirkitError(
                f"{name}: query ids differ from {names[0]}'s ({len(only_first)} only in {names[0]}"
                f"{_some(only_first)}, {len(only_this)} only in {name}{_some(only_this)}); fuse runs of the same "
                f"topics, or allow queries missing from some runs ({option('allow_missing', True)})")
    union = sorted(set().union(*dicts))
    return [{q: run.get(q, {}) for q in union} for run in dicts]


def _some(ids: list[str]) -> str:
    return f": {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}" if ids else ""


def _given(flag: str, param: str) -> str:
    """A method parameter as the user gives it: the CLI's ``flag``, or ``params={param!r: ...}`` in Python."""
    return flag if in_cli() else f"params={{{param!r}: ...}}"


def _tuned() -> str:
    return "--tune-runs ... --qrels ..." if in_cli() else "tune(qrels, dev_runs, method=...)"


def check_params(method: str, params: Mapping[str, Any] | None, n_runs: int) -> dict[str, Any]:
    """``params`` completed and checked for ``method`` (:data:`mlirkit.fuse.methods.METHODS`)."""
    m = get_method(method)
    params = dict(params or {})
    if m.needs == "weights":
        weights = params.get("weights")
        if weights is None:
            raise MlirkitError(f"{method} needs one weight per run ({_given('--weights W1 W2 ...', 'weights')}, "
                               f"or tune them: {_tuned()})")
        if len(weights) != n_runs:
            raise MlirkitError(f"{method}: {len(weights)} weights for {n_runs} runs")
        params["weights"] = [_number(w, "weights", method) for w in weights]
        bad = [w for w in params["weights"] if not m.bounds.holds(w)]
        if bad or not any(w > 0 for w in params["weights"]):
            given = " ".join(f"{w:g}" for w in params["weights"])
            raise MlirkitError(f"{method}: " + (f"--weights {given}" if in_cli() else f"weights [{given}]")
                               + ": each weight must be a number >= 0 and one at least > 0")
    elif m.needs == "scalar" and m.param not in params:
        raise MlirkitError(f"{method} needs {_given(f'--param {m.param}=VALUE', m.param)} (or tune it: {_tuned()})")
    elif m.needs == "trained" and not params:
        raise MlirkitError(f"{method} is trained on judged dev runs: {_tuned()}")
    allowed = {m.param} if m.param else set()
    unknown = sorted(set(params) - allowed) if m.needs != "trained" else []
    if unknown:
        raise MlirkitError(f"{method} takes no parameter {unknown[0]!r}"
                           + (f" (it takes {m.param})" if m.param else " (it takes none)"))
    if m.needs in ("default", "scalar") and m.param in params:
        value = _number(params[m.param], m.param, method)
        if m.bounds is not None and not m.bounds.holds(value):
            given = f"--param {m.param}={params[m.param]}" if in_cli() else f"params={{{m.param!r}: {params[m.param]!r}}}"
            raise MlirkitError(f"{method}: {given} is out of range: {m.bounds.describe(m.param)}")
        params[m.param] = value
    return params


def _number(value: Any, name: str, method: str) -> float | int:
    """A parameter value that is a finite real number (a bool, a string, NaN are refused)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise MlirkitError(f"{method}: {name} must be a finite number, got {value!r}")
    return value


#: the finest grid step: 1/step points on [0, 1] (ranx reads a step's decimals from ``str(step)``, which has none
#: below 1e-4: ``'1e-05'``)
MAX_GRID = 10_000
#: the most weight combinations ranx's grid may go through (it enumerates every (1/step + 1)^runs tuple and keeps
#: those summing to 1)
MAX_WEIGHT_GRID = 10_000_000


def check_tuning(method: str, metric: str, step: float | None) -> tuple[str, dict[str, Any]]:
    """The ranx name of ``metric`` (one of mlirkit's ranx metrics, :mod:`mlirkit.eval.metrics`) and the
    grid arguments of ``method``'s tuning: ``step`` must fit the method's grid (rrf: an integer >= 1, the
    grid of k; the weight and parameter grids on [0, 1]: a step that divides 1, 1/step a whole number up to
    :data:`MAX_GRID`, so the grid ends at 1 (ranx keeps only weights that sum to 1); other methods have no
    grid)."""
    from mlirkit.eval.metrics import parse_metric

    try:
        spec = parse_metric(metric)
    except MlirkitError as e:
        raise MlirkitError(f"{option('metric')}: {e}") from None
    if spec.kind != "ranx":
        raise MlirkitError(f"{option('metric')} {metric!r}: fusion is tuned with ranx's metrics (ndcg@k, recall@k, "
                           f"mrr@k, map@k, precision@k, hit_rate@k, r-precision), not {spec.family.name}")
    m = get_method(method)
    if step is None:
        return spec.ranx_name, {}
    if m.step is None:
        raise MlirkitError(f"{option('step')}: {method} has no grid to step through")
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
        valid = False
    elif m.step == "int":
        valid = float(step).is_integer() and step >= 1
    else:
        valid = 0 < step <= 1 and round(1 / step) <= MAX_GRID and math.isclose(round(1 / step) * step, 1.0,
                                                                                 rel_tol=1e-9)
    if not valid:
        raise MlirkitError(f"{option('step')} {step:g}: {method}'s grid takes "
                           + ("an integer step >= 1 (of k)" if m.step == "int" else
                              f"a step in (0, 1] that divides 1 (1/step a whole number up to {MAX_GRID}: 0.5, "
                              "0.25, 0.1, 0.05, 0.01, ...)"))
    return spec.ranx_name, {"step": int(step) if m.step == "int" else 1 / round(1 / step)}


def scalar_grid(method: str, step: float | None) -> list[float]:
    """The values a scalar parameter (rbc's phi, gmnz's gamma, logn_isr's sigma) is tuned over: ``i * step`` for
    i = 1 .. 1/step (default step 0.01: ranx's grid 0.01 .. 1), those in the method's range. ranx's own grid
    (``arange(0.01, 1 + step, step)`` rounded to the step's decimals) leaves it for most steps (0.05 tries 1.01,
    0.3 tries 0 and 1.2; rbc's 1 is out of range at any step)."""
    m = get_method(method)
    n = round(1 / (step if step is not None else 0.01))
    return [v for v in (i / n for i in range(1, n + 1)) if m.bounds is None or m.bounds.holds(v)]


def _grid_search(qrels, runs: list, method: str, norm: str | None, metric: str, values: list[float]) -> dict[str, Any]:
    """ranx.optimize_fusion's search for one scalar parameter, over ``values``: each fused by ``ranx.fuse`` and
    scored by ``ranx.evaluate``; the last of the best (ranx's ``>=``)."""
    ranx = _ranx()
    param = get_method(method).param
    best, best_score = values[-1], -math.inf
    for v in values:
        with _quiet_casts():
            fused = ranx.fuse(runs, norm=get_norm(norm), method=method, params={param: v})
            score = ranx.evaluate(qrels, fused, metric, save_results_in_run=False)
        if score >= best_score:
            best, best_score = v, score
    return {param: best}


def to_ranx(run: Mapping[str, Mapping[str, float]], name: str):
    """A ``ranx.Run`` of a ``{qid: {docid: score}}`` dict (empty per-query lists kept)."""
    return _ranx().Run({q: dict(d) for q, d in run.items()}, name=name)


def fuse(runs: Sequence[RunLike], *, method: str = "rrf", norm: str | None = "min-max",
         params: Mapping[str, Any] | None = None, names: Sequence[str] | None = None,
         allow_missing: bool = False, name: str | None = None):
    """``ranx.fuse(runs, norm=norm, method=method, params=params)`` after the checks of :func:`align_runs`
    and :func:`check_params`; returns the fused ``ranx.Run`` (named ``name``, default the method)."""
    aligned = align_runs(runs, names, allow_missing)
    params = check_params(method, params, len(aligned))
    labels = list(names) if names is not None else [f"run{i + 1}" for i in range(len(aligned))]
    with _quiet_casts():
        fused = _ranx().fuse([to_ranx(r, n) for r, n in zip(aligned, labels)], norm=get_norm(norm), method=method,
                             params=params)
    fused.name = name or method
    return fused


def tune(qrels: Any, runs: Sequence[RunLike], *, method: str = "wsum", norm: str | None = "min-max",
         metric: str = "ndcg@20", names: Sequence[str] | None = None, allow_missing: bool = False,
         show_progress: bool = False, step: float | None = None, allow_partial_overlap: bool = False,
         allow_provenance_mismatch: bool = False) -> dict[str, Any]:
    """The parameters of ``method`` that maximise ``metric`` on judged dev ``runs``:
    ``ranx.optimize_fusion(qrels, runs, norm, method, metric)`` over the queries that have judgements
    (``step``: the step of ranx's grid, :func:`check_tuning`); a scalar parameter (phi, gamma, sigma) is searched
    the same way over :func:`scalar_grid`, the values in its range.

    The qrels must judge at least half of the dev runs' queries, and dev run files whose provenance names
    other topics or another collection than qrels given as a source are refused
    (:mod:`mlirkit.eval.belonging`; ``allow_partial_overlap``, ``allow_provenance_mismatch``)."""
    from mlirkit.eval.belonging import check_overlap, check_provenance

    m = get_method(method)
    if m.tuning is None:
        raise MlirkitError(f"{method} has no parameters to tune")
    ranx_metric, kwargs = check_tuning(method, metric, step)
    if m.tuning == "search":
        kwargs["show_progress"] = show_progress
    aligned = align_runs(runs, names, allow_missing)
    if m.needs == "weights":
        combinations = (round(1 / kwargs.get("step", 0.1)) + 1) ** len(aligned)
        if combinations > MAX_WEIGHT_GRID:
            raise MlirkitError(f"{option('step')} {kwargs['step']:g}: ranx's weight grid for {len(aligned)} runs goes "
                               f"through (1/step + 1)^{len(aligned)} = {combinations:.3g} combinations; take a "
                               f"coarser step (at most {MAX_WEIGHT_GRID:,} combinations)")
    qrels_source = qrels if isinstance(qrels, (str, os.PathLike)) else None
    judged = {q: dict(d) for q, d in as_qrels(qrels).items() if any(v > 0 for v in d.values())}
    labels = list(names) if names is not None else [f"run{i + 1}" for i in range(len(aligned))]
    if qrels_source is not None:
        files = {label: r for label, r in zip(labels, runs) if isinstance(r, (str, os.PathLike))}
        check_provenance(qrels_source, files, dict(zip(labels, aligned)), allow=allow_provenance_mismatch)
    check_overlap(list(aligned[0]), judged, "the qrels judge {n} of the {total} queries of the dev runs ({share})",
                  allow=allow_partial_overlap)
    queries = sorted(set(aligned[0]) & set(judged))
    if not queries:
        raise MlirkitError("no query of the dev runs has a relevant document in the qrels")
    dropped = len(aligned[0]) - len(queries)
    if dropped:
        logger.info("tuning on %d queries (%d without relevant documents left out)", len(queries), dropped)
    ranx = _ranx()
    dev = [to_ranx({q: r[q] for q in queries}, n) for r, n in zip(aligned, labels)]
    dev_qrels = ranx.Qrels({q: judged[q] for q in queries})
    if m.needs in ("default", "scalar") and m.step == "fraction":
        return _grid_search(dev_qrels, dev, method, norm, ranx_metric, scalar_grid(method, kwargs.get("step")))
    with _quiet_casts():
        best = ranx.optimize_fusion(dev_qrels, dev, norm=get_norm(norm), method=method, metric=ranx_metric, **kwargs)
    return {k: _plain(v) for k, v in best.items()}


def _plain(value: Any) -> Any:
    """Numbers and lists of numbers as plain Python (ranx returns tuples and numpy arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


__all__ = ["MAX_GRID", "align_runs", "check_params", "check_tuning", "fuse", "scalar_grid", "to_ranx", "tune"]
