"""Where the benchmark's time goes (:mod:`mlirkit.benchmark.stages`): every step has a stage, each stage's start is
logged, the table sums its cells, and a run records its parts' stages in the result and report.json."""
from __future__ import annotations

import json
import logging
import time

import pytest

from mlirkit.benchmark.stages import STAGES, StageClock, stage_of
from mlirkit.benchmark.steps import Timer


def test_every_step_name_of_the_parts_has_a_stage():
    for step, stage in [("encode corpus", "encode"), ("encode pairs tatoeba", "encode"), ("fit corpus", "fit"),
                        ("choose alpha (label-free)", "alpha"), ("retrieve", "retrieve"),
                        ("MRC (every score)", "evaluate"), ("evaluate dev", "evaluate"), ("plots", "write"),
                        ("write runs", "write"), ("load data", "load")]:
        assert stage_of(step) == stage
    with pytest.raises(ValueError, match="has no stage"):
        stage_of("frobnicate")
    with pytest.raises(ValueError, match="unknown stage"):
        with StageClock()("ddtp", "frobnicate"):
            pass


def test_the_clock_sums_wall_and_cpu_per_part_and_stage_and_logs_each_start(caplog):
    clock = StageClock()
    timer = Timer(clock, "xquad-r", "enc")
    with caplog.at_level(logging.INFO, logger="mlirkit.benchmark.stages"):
        with timer("encode corpus"):
            time.sleep(0.02)
        with timer("encode queries"):
            sum(range(200_000))
        with Timer(clock, "ddtp", "enc")("retrieve"):
            pass
    assert [r.getMessage() for r in caplog.records] == ["stage: xquad-r encode (enc encode corpus)",
                                                        "stage: xquad-r encode (enc encode queries)",
                                                        "stage: ddtp retrieve (enc retrieve)"]
    assert set(timer.seconds) == {"encode corpus", "encode queries"}
    assert clock.wall["xquad-r", "encode"] >= 0.02 and clock.cpu["xquad-r", "encode"] > 0
    assert clock.parts == ["xquad-r", "ddtp"]
    table = clock.table(total_wall=10.0)
    lines = table.splitlines()
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    assert cells[0] == ["part", "encode", "retrieve", "total"]
    assert [row[0] for row in cells[2:]] == ["xquad-r", "ddtp", "all parts", "not in a stage"]
    total = sum(clock.wall.values())
    assert cells[-1][-1] == f"{10.0 - total:.0f}" and cells[-2][-1].startswith(f"{total:.0f} (")
    assert set(clock.to_dict()) == {"xquad-r", "ddtp"} and set(clock.to_dict()["xquad-r"]) == {"encode"}


def test_a_run_records_where_its_time_went(tmp_path):
    from tests.benchmark.test_xquad import config, run

    result = run(config(tmp_path))
    stages = result.stages.to_dict()
    assert set(stages) == {"setup", "xquad-r", "lareqa"}
    for part in ("xquad-r", "lareqa"):
        assert {"encode", "fit", "alpha", "retrieve", "evaluate"} <= set(stages[part]), part
    assert set(stages["xquad-r"]) <= set(STAGES)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["stages"] == stages
    assert "Where the time went" in (tmp_path / "out" / "report.md").read_text()


def test_exclusive_stages_run_one_at_a_time_and_the_others_overlap():
    """Two threads (two encoders): their encode steps never overlap, their retrieve steps do; the overlap is
    shown as such in the table."""
    import threading

    clock = StageClock()
    inside = {"encode": 0, "retrieve": 0}
    most = {"encode": 0, "retrieve": 0}
    both_retrieving = threading.Barrier(2, timeout=10)
    lock = threading.Lock()

    def step(stage: str, wait=None) -> None:
        with clock("ddtp", stage):
            with lock:
                inside[stage] += 1
                most[stage] = max(most[stage], inside[stage])
            time.sleep(0.05) if wait is None else wait.wait()  # retrieve: both threads must be in it at once
            with lock:
                inside[stage] -= 1

    def encoder() -> None:
        step("encode")
        step("retrieve", both_retrieving)

    threads = [threading.Thread(target=encoder) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == {"encode": 1, "retrieve": 2}
    assert clock.table(total_wall=0.0).splitlines()[-1].startswith("| at the same time")


def test_compute_threads_are_restored_by_the_last_of_overlapping_steps():
    from threadpoolctl import threadpool_info

    from mlirkit.benchmark.config import BenchmarkConfig
    from mlirkit.benchmark.steps import compute_threads

    def blas() -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    before = blas()
    config = BenchmarkConfig(compute_threads=1)
    first, second = compute_threads(config), compute_threads(config)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first step ends while the second still runs: the limit stays
    assert blas() <= {1}
    second.__exit__(None, None, None)
    assert blas() == before
