"""Where the benchmark's time goes: wall-clock and CPU seconds per part and stage (encode, fit, alpha, retrieve,
evaluate, write), a log line when each stage starts, and the table the CLI prints at the end."""
from __future__ import annotations

import logging
import threading
import time
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator

logger = logging.getLogger(__name__)

#: the stages, in the order the table shows them
STAGES = ("load", "encode", "fit", "alpha", "retrieve", "evaluate", "write")
#: the stage of a step, by the first word of the step's name (:class:`mlirkit.benchmark.steps.Timer`)
STAGE_OF_WORD = {"load": "load", "loading": "load", "encode": "encode", "fit": "fit", "choose": "alpha",
                 "alpha": "alpha", "retrieve": "retrieve", "evaluate": "evaluate", "MRC": "evaluate",
                 "tests": "evaluate", "write": "write", "plots": "write"}


#: the stages that run one at a time when the encoders run concurrently (:class:`StageClock`): loading and
#: encoding use every core, writing draws plots (matplotlib is not thread-safe)
EXCLUSIVE_STAGES = ("load", "encode", "write")


def stage_of(step: str) -> str:
    """The stage of a step name (``"encode corpus"`` -> ``encode``); ``ValueError`` for an unknown one."""
    word = step.split(" ", 1)[0]
    if word not in STAGE_OF_WORD:
        raise ValueError(f"step {step!r} has no stage (first words: {', '.join(STAGE_OF_WORD)})")
    return STAGE_OF_WORD[word]


class StageClock:
    """Seconds per ``(part, stage)``: wall clock (``time.perf_counter``) and the CPU time of the whole process
    (``time.process_time``: every thread, so it counts the work done however loaded the machine is). Stages do
    not nest: a step timed inside another is counted in both.

    Several threads (one per encoder) may time their steps at once: the :data:`EXCLUSIVE_STAGES` then run one at
    a time (the wait for the other thread's is not counted), the others overlap; a cell adds up every thread's
    seconds, and the CPU seconds of an overlapping stage include what the other threads did meanwhile."""

    def __init__(self) -> None:
        self.wall: dict[tuple[str, str], float] = {}
        self.cpu: dict[tuple[str, str], float] = {}
        self._exclusive = threading.RLock()
        self._update = threading.Lock()

    @contextmanager
    def __call__(self, part: str, stage: str, what: str = "") -> Iterator[None]:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r} (one of {', '.join(STAGES)})")
        with ExitStack() as stack:
            if stage in EXCLUSIVE_STAGES:
                stack.enter_context(self._exclusive)
            logger.info("stage: %s %s%s", part, stage, f" ({what})" if what else "")
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                yield
            finally:
                key = (part, stage)
                with self._update:
                    self.wall[key] = self.wall.get(key, 0.0) + time.perf_counter() - wall
                    self.cpu[key] = self.cpu.get(key, 0.0) + time.process_time() - cpu

    @property
    def parts(self) -> list[str]:
        return list(dict.fromkeys(p for p, _ in self.wall))

    def to_dict(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{part: {stage: {"wall_s": ..., "cpu_s": ...}}}`` (report.json's ``stages``)."""
        return {p: {s: {"wall_s": round(self.wall[p, s], 2), "cpu_s": round(self.cpu[p, s], 2)}
                    for s in STAGES if (p, s) in self.wall} for p in self.parts}

    def table(self, total_wall: float | None = None) -> str:
        """Markdown: one row per part, one column per stage, cells ``wall s (CPU s)``; a total row and column.
        ``total_wall``: the run's wall clock, to show what no stage counted (imports, reports, plots' set-up), or,
        when stages overlapped, by how much their seconds add up to more than it."""
        from mlirkit.benchmark.tables import table

        stages = [s for s in STAGES if any((p, s) in self.wall for p in self.parts)]

        def cell(wall: float, cpu: float) -> str:
            return f"{wall:.0f} ({cpu:.0f})"

        rows = []
        for p in self.parts:
            rows.append([p, *(cell(self.wall[p, s], self.cpu[p, s]) if (p, s) in self.wall else "" for s in stages),
                         cell(sum(v for (q, _), v in self.wall.items() if q == p),
                              sum(v for (q, _), v in self.cpu.items() if q == p))])
        rows.append(["all parts", *(cell(sum(v for (_, t), v in self.wall.items() if t == s),
                                         sum(v for (_, t), v in self.cpu.items() if t == s)) for s in stages),
                     cell(sum(self.wall.values()), sum(self.cpu.values()))])
        if total_wall is not None:  # the encoders' stages may overlap (class docstring): then they add up to more
            rest = total_wall - sum(self.wall.values())
            rows.append(["not in a stage" if rest >= 0 else "at the same time", *([""] * len(stages)),
                         f"{abs(rest):.0f}"])
        return table(["part", *stages, "total"], rows)


__all__ = ["STAGES", "StageClock", "stage_of"]
