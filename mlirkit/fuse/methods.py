"""The fusion methods and score normalisations of ranx, by name, with what each needs.

Every name is ranx's own (``ranx.fuse(runs, norm=..., method=...)``; Bassani and Romelli, "ranx.fuse: A
Python Library for Metasearch", CIKM 2022). :data:`METHODS` says which parameters a method needs and how
they are obtained: ``none`` (no parameter), ``default`` (optional, ranx's default otherwise: ``rrf`` k = 60,
``logn_isr`` sigma = 0.01), ``scalar`` (one number given or tuned: ``gmnz`` gamma, ``rbc`` phi),
``weights`` (one weight per run, given or tuned) and ``trained`` (probabilities or scores estimated from
judged dev runs: ``bayesfuse``, ``mapfuse``, ``posfuse``, ``probfuse``, ``segfuse``, ``slidefuse``).
Tuning is ``ranx.optimize_fusion`` on dev runs and their qrels (:func:`mlirkit.fuse.fusion.tune`).
"""
from __future__ import annotations

from dataclasses import dataclass

from mlirkit.base.registry import Registry


@dataclass(frozen=True)
class FusionMethod:
    name: str
    needs: str  # none | default | scalar | weights | trained
    param: str | None = None  # the ranx keyword of a scalar or weights parameter
    tuning: str | None = None  # ranx.optimize_fusion: "search" (a grid, scored by a metric) or "train" (estimated)


METHODS: Registry[FusionMethod] = Registry("fusion method")
for _m in (
    FusionMethod("anz", "none"), FusionMethod("bordafuse", "none"), FusionMethod("condorcet", "none"),
    FusionMethod("isr", "none"), FusionMethod("log_isr", "none"), FusionMethod("max", "none"),
    FusionMethod("med", "none"), FusionMethod("min", "none"), FusionMethod("mnz", "none"),
    FusionMethod("sum", "none"),
    FusionMethod("rrf", "default", "k", "search"), FusionMethod("logn_isr", "default", "sigma", "search"),
    FusionMethod("gmnz", "scalar", "gamma", "search"), FusionMethod("rbc", "scalar", "phi", "search"),
    FusionMethod("wsum", "weights", "weights", "search"), FusionMethod("wmnz", "weights", "weights", "search"),
    FusionMethod("mixed", "weights", "weights", "search"), FusionMethod("w_bordafuse", "weights", "weights", "search"),
    FusionMethod("w_condorcet", "weights", "weights", "search"),
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


__all__ = ["METHODS", "NORMS", "FusionMethod", "method", "norm"]
