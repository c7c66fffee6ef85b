"""Compile ranx's numba kernels once, into numba's cache (``$NUMBA_CACHE_DIR``; ``scripts/test.sh`` runs this
before the tests, so no test and no test worker compiles them: about a minute of CPU on an empty cache, a few
seconds when the kernels are cached).

Each kernel is called once on a toy run: the metrics of ``mlirkit.eval`` (``METRICS``, with and without a cut-off),
ranx's significance tests (``TESTS``), every fusion method of ``mlirkit.fuse`` (``METHODS``) but the trained ones
(``bayesfuse``, ``probfuse``, ...: no test reaches their training, which compiles on its first use) and every
normalisation (``NORMS``), and mlirkit's kernel reading a run back into dicts (``ranx_to_dict``). Split over two
processes, the compilation took about as long (numba's shared machinery compiles in each).
"""
from __future__ import annotations

import time
import warnings

from mlirkit.base.numba_cache import import_ranx, numba_cache_dir
from mlirkit.eval.metrics import METRICS
from mlirkit.eval.inputs import ranx_to_dict
from mlirkit.eval.significance import TESTS
from mlirkit.fuse.methods import METHODS, NORMS, norm


def main() -> None:
    start = time.perf_counter()
    ranx = import_ranx()
    qrels = ranx.Qrels({"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}, "q3": {"d2": 1, "d4": 1}})
    runs = [ranx.Run({"q1": {"d1": 0.9, "d2": 0.4, "d3": 0.1}, "q2": {"d3": 0.8, "d1": 0.3},
                      "q3": {"d4": 0.6, "d2": 0.5, "d1": 0.2}}, name="a"),
            ranx.Run({"q1": {"d2": 0.7, "d3": 0.5, "d4": 0.2}, "q2": {"d1": 0.9, "d3": 0.2},
                      "q3": {"d1": 0.8, "d4": 0.1, "d2": 0.05}}, name="b")]
    metrics = [name for f in METRICS.names() if (name := METRICS.get(f).ranx_name) is not None]
    metrics += [f"{m}@2" for m in metrics if m != "r-precision"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx.evaluate(qrels, runs[0], metrics, return_mean=False)
        for test in TESTS.names():
            ranx.compare(qrels, runs, metrics=["ndcg@2", "map@2"], stat_test=test, max_p=0.05, random_seed=0)
        ranx_to_dict(runs[0])  # mlirkit's own kernel: a run read back into dicts
        for name in NORMS.names():
            ranx.fuse(runs, norm=norm(name), method="sum")
        for name in METHODS.names():
            m = METHODS.get(name)
            if m.needs == "trained":
                continue
            if m.needs == "weights":
                ranx.fuse(runs, norm="min-max", method=name, params={m.param: [0.5, 0.5]})
            elif m.needs == "scalar":
                ranx.fuse(runs, norm="min-max", method=name, params={m.param: 0.5})
            else:
                ranx.fuse(runs, norm="min-max", method=name)
    print(f"[setup] ranx's kernels are compiled and cached in {numba_cache_dir()} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
