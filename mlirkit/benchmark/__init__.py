"""The main job: language bias of real multilingual retrievers on real translated text, and SHIFT
removing it, with language centering and LIR beside it.

``python -m mlirkit.benchmark`` (``bash scripts/main.sh``) encodes the bundled DDTP benchmark with the
offline ``multilingual-e5-small-q4`` and ``usem`` encoders (embeddings cached on disk), fits the
transforms from parallel text of other sources and from DDTP descriptions disjoint from the benchmark,
chooses SHIFT's alpha on the dev split, reports the test split with significance tests, per-language
tables and plots. Python API: :func:`run_benchmark` with a :class:`BenchmarkConfig`.
"""
from __future__ import annotations

from mlirkit.benchmark.config import BenchmarkConfig

__all__ = ["BenchmarkConfig", "run_benchmark"]


def __getattr__(name: str):
    if name == "run_benchmark":
        from mlirkit.benchmark.pipeline import run_benchmark

        return run_benchmark
    raise AttributeError(f"module 'mlirkit.benchmark' has no attribute {name!r}")
