"""What the benchmark measured: :class:`EncoderResult` per encoder, :class:`BenchmarkResult` for the run
(produced by :mod:`.pipeline`, written by :mod:`.report`), and the CPU count the report records."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlirkit.benchmark.config import BenchmarkConfig


@dataclass
class EncoderResult:
    """Everything measured for one encoder."""

    name: str
    fingerprint: dict[str, Any]
    digest: str
    dim: int
    parallel: dict[str, dict[str, Any]]
    chosen_alpha: dict[str, float]
    main_runs: list[str]
    dev: Any  # EvaluationResult, every run
    test: Any  # EvaluationResult, main runs, with significance
    test_sweep: Any  # EvaluationResult, every run, no tests
    #: pair source -> EvaluationResult of that SHIFT (the baseline of its tests), LSAR and LEACE on test
    versus_shift: dict[str, Any] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def sweep(self, split: str, source: str, metric: str) -> dict[float, float | None]:
        result = self.dev if split == "dev" else self.test_sweep
        out = {}
        for run in result.runs:
            if run.startswith(f"shift-{source}@"):
                out[float(run.split("@", 1)[1])] = result.value(run, metric)
        return dict(sorted(out.items()))


@dataclass
class BenchmarkResult:
    config: BenchmarkConfig
    data: dict[str, Any]
    split_statement: str
    encoders: list[EncoderResult]  # the DDTP part (empty when skipped)
    cache: dict[str, Any]
    timings: dict[str, float]
    output: Path
    command: str
    xquad: list[Any] = field(default_factory=list)  # the XQuAD-R part, XquadEncoderResult (empty when skipped)
    xquad_data: dict[str, Any] = field(default_factory=dict)
    mlqa: list[Any] = field(default_factory=list)  # the MLQA-R part, XquadEncoderResult (empty when skipped)
    mlqa_data: dict[str, Any] = field(default_factory=dict)
    #: wall and CPU seconds per part and stage (:class:`mlirkit.benchmark.stages.StageClock`)
    stages: Any = None


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


__all__ = ["BenchmarkResult", "EncoderResult", "cpu_count"]
