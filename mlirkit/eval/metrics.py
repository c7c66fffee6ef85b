"""Metric names as users write them (``ndcg@20``, ``tlr@20``, ...) and the ranx wrapper.

A metric name is ``family@k`` (``k`` a positive integer; optional for the ranx families, where no
``k`` means the whole ranking). Families come from the :data:`METRICS` registry, so an unknown name
is answered with close matches. ``ranx`` families are computed by ranx (Bassani, ECIR 2022); ``tlr``
(:mod:`mlirkit.eval.tlr`), ``samelang`` (:mod:`mlirkit.eval.breakdowns`), ``peer`` and ``peer-mimo``
(:mod:`mlirkit.eval.peer`) and ``mrc`` (:mod:`mlirkit.eval.mrc`) by mlirkit.
"""
from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from typing import Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry, UnknownNameError, did_you_mean


@dataclass(frozen=True)
class MetricFamily:
    name: str
    kind: str  # "ranx", "tlr", "samelang", "peer" or "mrc"
    ranx_name: str | None
    needs_k: bool
    description: str
    #: the queries a mean counts when some are left out (for the report's legend); "" = every query
    counts: str = ""


METRICS: Registry[MetricFamily] = Registry("metric")
_ALIASES: dict[str, str] = {"p": "precision", "rr": "mrr", "ap": "map", "recip_rank": "mrr", "success": "hit_rate"}

for _family in (
    MetricFamily("ndcg", "ranx", "ndcg", False, "normalised DCG (Jarvelin & Kekalainen 2002), graded gains"),
    MetricFamily("recall", "ranx", "recall", False, "share of the relevant documents retrieved in the top k"),
    MetricFamily("mrr", "ranx", "mrr", False, "reciprocal rank of the first relevant document in the top k"),
    MetricFamily("map", "ranx", "map", False, "average precision (cut at k)"),
    MetricFamily("precision", "ranx", "precision", False, "share of the top k that is relevant"),
    MetricFamily("hit_rate", "ranx", "hit_rate", False, "1 if a relevant document is in the top k"),
    MetricFamily("r-precision", "ranx", "r-precision", False, "precision at R = number of relevant documents"),
    MetricFamily("tlr", "tlr", None, True, "target-language recall: recall of relevant documents written in "
                                           "another (known) language than the query's (SHIFT authors)",
                 "queries with a relevant document in another known language than the query's"),
    MetricFamily("samelang", "samelang", None, True, "share of the top k written in the query's language"),
    MetricFamily("peer", "peer", None, True, "probability of equal expected rank: Kruskal-Wallis p that the "
                                             "relevant documents of each language rank alike (Yang et al., SIGIR 2024)"),
    MetricFamily("peer-mimo", "peer", None, True, "PEER as the SHIFT authors' follow-up computes it (binary "
                                                  "relevance, queries with relevant documents in one language left out)",
                 "queries with relevant documents in two or more known languages"),
    MetricFamily("mrc", "mrc", None, True, "mean rank correlation x100: Spearman correlation of a question's scores "
                                           "in two languages over their top k (Yang et al., EMNLP MRL 2024)",
                 "queries whose question is asked in another language too"),
):
    METRICS.register(_family.name, _family)


@dataclass(frozen=True)
class MetricSpec:
    """One metric as the user named it: ``name`` is kept verbatim for tables and reports."""

    name: str
    family: MetricFamily
    k: int | None

    @property
    def kind(self) -> str:
        return self.family.kind

    @property
    def ranx_name(self) -> str:
        if self.family.ranx_name is None:
            raise ValueError(f"{self.name} is not a ranx metric")
        return self.family.ranx_name if self.k is None else f"{self.family.ranx_name}@{self.k}"


def known_metric_examples() -> list[str]:
    return [f"{name}@k" for name in METRICS.names()]


#: the largest cut-off ``k`` a metric name may ask for (far beyond any run; ranx compiles k as an integer)
MAX_CUTOFF = 2**31 - 1


def parse_metric(name: str) -> MetricSpec:
    """``"ndcg@20"`` -> ``MetricSpec("ndcg@20", METRICS["ndcg"], 20)``; errors say what is wrong."""
    if not isinstance(name, str) or not name.strip():
        raise MlirkitError(f"invalid metric name {name!r}")
    family_text, sep, k_text = name.strip().partition("@")
    key = family_text.lower()
    key = _ALIASES.get(key, key)
    try:
        family = METRICS.get(key)
    except UnknownNameError:
        raise MlirkitError(f"unknown metric {name!r}{did_you_mean(name, known_metric_examples() + _examples())}; "
                           f"known: {', '.join(known_metric_examples())}") from None
    k: int | None = None
    if sep:
        try:
            k = int(k_text)
        except ValueError:
            k = 0
        if k < 1 or str(k) != k_text.strip():
            raise MlirkitError(f"metric {name!r}: the cut-off after '@' must be a positive integer")
        if k > MAX_CUTOFF:  # ranx's compiled kernels count in 64-bit integers
            raise MlirkitError(f"metric {name!r}: the cut-off after '@' must be at most {MAX_CUTOFF}")
    elif family.needs_k:
        raise MlirkitError(f"metric {name!r} needs a cut-off, e.g. {family.name}@20")
    return MetricSpec(name, family, k)


def _examples() -> list[str]:
    return [f"{n}@{k}" for n in METRICS.names() for k in (10, 20, 100)]


def parse_metrics(names: Sequence[str]) -> list[MetricSpec]:
    """Parse a list of metric names, refusing duplicates and an empty list."""
    if isinstance(names, str):
        names = [names]
    if not names:
        raise MlirkitError("no metrics given")
    specs = [parse_metric(n) for n in names]
    seen: dict[tuple[str, int | None], str] = {}
    for spec in specs:
        key = (spec.family.name, spec.k)
        if key in seen:
            raise MlirkitError(f"metric {spec.name!r} is the same as {seen[key]!r}")
        seen[key] = spec.name
    return specs


#: ranx's parallel numba kernels, one call at a time: numba's default (workqueue) threading layer aborts the
#: process when two threads launch parallel kernels at once (the benchmark evaluates two encoders side by side)
_RANX_KERNELS = threading.Lock()


def ranx_per_query(qrels_tl, run_tl, specs: Sequence[MetricSpec]):
    """Per-query scores of the ranx metrics in ``specs`` as ``{spec.name: np.ndarray}``.

    ``qrels_tl`` / ``run_tl`` are numba typed lists prepared by :mod:`mlirkit.eval.ranking`
    (queries in the same order, runs already sorted by ``(-score, docid)``), so ranx neither
    re-sorts nor hashes ids.
    """
    import numpy as np

    from mlirkit.base.numba_cache import announce_first_compile, import_ranx

    specs = [s for s in specs if s.kind == "ranx"]
    if not specs:
        return {}
    ranx = import_ranx()
    announce_first_compile("metrics", "metric")
    names = [s.ranx_name for s in specs]
    with _RANX_KERNELS, warnings.catch_warnings():  # ranx's prange loops cast their uint64 index; harmless
        warnings.filterwarnings("ignore", message="unsafe cast from uint64 to int64")
        # ranx fails on a one-metric list with a cut-off (KeyError 'ndcg'): always ask for >= 2
        scores = ranx.evaluate(qrels_tl, run_tl, names if len(names) > 1 else names * 2, return_mean=False,
                               save_results_in_run=False)
    return {s.name: np.asarray(scores[s.ranx_name], dtype=np.float64) for s in specs}


__all__ = ["METRICS", "MetricFamily", "MetricSpec", "known_metric_examples", "parse_metric", "parse_metrics",
           "ranx_per_query"]
