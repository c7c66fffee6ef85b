"""The fusion methods and score normalisations of ranx, by name, with what each needs.

Every name is ranx's own (``ranx.fuse(runs, norm=..., method=...)``; Bassani and Romelli, "ranx.fuse: A
Python Library for Metasearch", CIKM 2022). :data:`METHODS` says which parameters a method needs and how
they are obtained: ``none`` (no parameter), ``default`` (optional, ranx's default otherwise: ``rrf`` k = 60,
``logn_isr`` sigma = 0.01), ``scalar`` (one number given or tuned: ``gmnz`` gamma, ``rbc`` phi),
``weights`` (one weight per run, given or tuned) and ``trained`` (probabilities or scores estimated from
judged dev runs: ``bayesfuse``, ``mapfuse``, ``posfuse``, ``probfuse``, ``segfuse``, ``slidefuse``). A
parameter's :class:`Bounds` are the values that keep the method what its paper defines (``rrf`` k >= 0,
``rbc`` 0 < phi < 1, weights >= 0, ...); anything else is refused naming the range.
Tuning is ``ranx.optimize_fusion`` on dev runs and their qrels (:func:`mlirkit.fuse.fusion.tune`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from mlirkit.base.registry import Registry


@dataclass(frozen=True)
class Bounds:
    """The values a parameter may take: a finite number in ``low .. high`` (None: unbounded; ``*_open``:
    the end itself excluded)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def holds(self, x: float) -> bool:
        if not math.isfinite(x):
            return False
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        return self.high is None or (x < self.high if self.high_open else x <= self.high)

    def describe(self, name: str) -> str:
        """``k >= 0``, ``0 < phi < 1``, ``0 <= sigma <= 1``."""
        low = None if self.low is None else f"{self.low:g} {'<' if self.low_open else '<='} "
        high = None if self.high is None else f" {'<' if self.high_open else '<='} {self.high:g}"
        if low and high:
            return f"{low}{name}{high}"
        if low:
            return f"{name} {'>' if self.low_open else '>='} {self.low:g}"
        return f"{name}{high}" if high else f"{name} finite"


@dataclass(frozen=True)
class FusionMethod:
    name: str
    needs: str  # none | default | scalar | weights | trained
    param: str | None = None  # the ranx keyword of a scalar or weights parameter
    tuning: str | None = None  # ranx.optimize_fusion: "search" (a grid, scored by a metric) or "train" (estimated)
    bounds: Bounds | None = None  # the values of the parameter (of each weight) that keep the method what it is
    step: str | None = None  # the tuning grid's step: "int" (rrf's k grid), "fraction" (0 < step <= 1), None: none


#: a weight: >= 0 (a negative weight turns a run's ranking upside down); at least one > 0
WEIGHT = Bounds(low=0.0)
_FRACTION = "fraction"
METHODS: Registry[FusionMethod] = Registry("fusion method")
for _m in (
    FusionMethod("anz", "none"), FusionMethod("bordafuse", "none"), FusionMethod("condorcet", "none"),
    FusionMethod("isr", "none"), FusionMethod("log_isr", "none"), FusionMethod("max", "none"),
    FusionMethod("med", "none"), FusionMethod("min", "none"), FusionMethod("mnz", "none"),
    FusionMethod("sum", "none"),
    # rrf: 1 / (k + rank) (Cormack et al., 2009): a negative k makes the first ranks' scores negative
    FusionMethod("rrf", "default", "k", "search", Bounds(low=0.0), "int"),
    # logn_isr: ranx asserts 0 <= sigma <= 1; gmnz: sum * n^gamma, a negative gamma punishes agreement;
    # rbc: (1 - phi) * phi^rank (Bailey et al., 2017), a persistence in (0, 1)
    FusionMethod("logn_isr", "default", "sigma", "search", Bounds(0.0, 1.0), _FRACTION),
    FusionMethod("gmnz", "scalar", "gamma", "search", Bounds(low=0.0), _FRACTION),
    FusionMethod("rbc", "scalar", "phi", "search", Bounds(0.0, 1.0, True, True), _FRACTION),
    FusionMethod("wsum", "weights", "weights", "search", WEIGHT, _FRACTION),
    FusionMethod("wmnz", "weights", "weights", "search", WEIGHT, _FRACTION),
    FusionMethod("mixed", "weights", "weights", "search", WEIGHT, _FRACTION),
    FusionMethod("w_bordafuse", "weights", "weights", "search", WEIGHT, _FRACTION),
    FusionMethod("w_condorcet", "weights", "weights", "search", WEIGHT, _FRACTION),
    FusionMethod("bayesfuse", "trained", tuning="train"), FusionMethod("mapfuse", "trained", tuning="train"),
    FusionMethod("posfuse", "trained", tuning="train"), FusionMethod("segfuse", "trained", tuning="train"),
    FusionMethod("probfuse", "trained", tuning="search"), FusionMethod("slidefuse", "trained", tuning="search"),
):
    METHODS.register(_m.name, _m)

#: ranx's score normalisations (``none``: the scores as they are)
NORMS: Registry[str] = Registry("score normalisation")
for _n in ("none", "min-max", "max", "sum", "zmuv", "rank", "borda", "min-max-inverted"):
    NORMS.register(_n, _n)


def method(name: str) -> FusionMethod:
    """The method called ``name``; an unknown name is one error with a did-you-mean and the known names."""
    return METHODS.get(name)


def norm(name: str | None) -> str | None:
    """ranx's ``norm`` argument for the normalisation called ``name`` (``none`` -> None)."""
    if name is None:
        return None
    return None if NORMS.get(name) == "none" else name


__all__ = ["METHODS", "NORMS", "WEIGHT", "Bounds", "FusionMethod", "method", "norm"]
