"""What every part of the benchmark does per encoder: time its steps, limit the threads of the steps after
encoding, fit the transforms of a parallel set, name its cache entries, write its TREC runs."""
from __future__ import annotations

import re
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, ContextManager, Iterator, Mapping, Sequence

import numpy as np

from mlirkit.benchmark.config import BenchmarkConfig
from mlirkit.benchmark.data import ParallelSet
from mlirkit.benchmark.stages import StageClock, stage_of


class Timer:
    """Wall-clock seconds per named step; with a ``clock``, each step is also timed as its stage of ``part``
    (:func:`mlirkit.benchmark.stages.stage_of`, logged when it starts; ``label`` names the encoder there)."""

    def __init__(self, clock: StageClock | None = None, part: str = "", label: str = "") -> None:
        self.seconds: dict[str, float] = {}
        self.clock, self.part, self.label = clock, part, label

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        with ExitStack() as stack:
            if self.clock is not None:
                stack.enter_context(self.clock(self.part, stage_of(name), f"{self.label} {name}".strip()))
            start = time.perf_counter()
            try:
                yield
            finally:
                self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 3)


class _ComputeThreads:
    """The process-wide thread limits of :func:`compute_threads`, set when the first step enters and restored when
    the last one leaves (the encoders' steps may overlap: a limit restored by one must not lift another's)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.stack: ExitStack | None = None

    @contextmanager
    def __call__(self, threads: int) -> Iterator[None]:
        from threadpoolctl import threadpool_limits

        from mlirkit.base.threads import faiss_threads, torch_threads

        with self.lock:
            if self.active == 0:
                stack = ExitStack()
                stack.enter_context(threadpool_limits(limits=threads))
                stack.enter_context(faiss_threads(threads))
                stack.enter_context(torch_threads(threads))
                self.stack = stack
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1
                if self.active == 0 and self.stack is not None:
                    self.stack.close()
                    self.stack = None


_COMPUTE_THREADS = _ComputeThreads()


def compute_threads(config: BenchmarkConfig) -> ContextManager[None]:
    """Thread limit of BLAS/OpenMP (numpy), FAISS and torch (LEACE's eigendecomposition) for the steps after
    encoding, restored after (when the last of the concurrent encoders' steps ends). These are small operations
    (512 x 512 eigendecompositions, ~1k x 10k inner products): one thread each costs little on an idle machine,
    the two encoders' steps run side by side (``BenchmarkConfig.concurrent_encoders``), and on a busy machine
    multi-threaded BLAS spins (measured: LIR fit 16 CPU-s with 2 threads, 0.4 CPU-s with 1, load average 20)."""
    return _COMPUTE_THREADS(config.compute_threads)


def cache_variant(config: BenchmarkConfig) -> str:
    """Label suffix of the cache entries of a selection (quick slice, language subset), so that running
    a variant never evicts the default run's entries (an entry is replaced only by its own variant)."""
    suffix = "-quick" if config.quick else ""
    if config.languages is not None:
        suffix += "-langs=" + "+".join(sorted(config.languages))
    return suffix


def fit_transforms(parallel: ParallelSet, embs: np.ndarray, fingerprint: dict[str, Any],
                   config: BenchmarkConfig) -> dict[str, Any]:
    """The three transforms (``shift``, ``centering``, ``lir``) fitted on one parallel set's embeddings."""
    from mlirkit.transforms import CenteringTransform, LIRTransform, ShiftTransform

    meta = {"parallel": {"condition": parallel.name, "sources": list(parallel.sources),
                         "pairs_by_source": parallel.by_source}}
    src = parallel.source_lang
    # SHIFT: every aligned (source row, target row) is a group of its own
    rows, langs, groups = [], [], []
    for lang, (t, s) in parallel.alignment.items():
        rows += [*s, *t]
        langs += [src] * len(s) + [lang] * len(t)
        groups += [(lang, i) for i in range(len(s))] * 2
    # centering and LIR: the rows used for each language
    plain = {lang: parallel.rows_of(lang) for lang in [src, *parallel.alignment]}
    plain_rows = [r for rs in plain.values() for r in rs]
    plain_langs = [lang for lang, rs in plain.items() for _ in rs]
    out = {"shift": ShiftTransform(src).fit(embs[rows], langs, groups),
           "centering": CenteringTransform(src).fit(embs[plain_rows], plain_langs),
           "lir": LIRTransform(src, rank=config.lir_rank).fit(embs[plain_rows], plain_langs)}
    for t in out.values():
        t.encoder = dict(fingerprint)
        t.meta.update(meta)
    return out


#: the methods fitted on the pooled corpus itself (no parallel text), at their published settings: LSAR at rank =
#: the number of languages (lsar+7 / lsar+11 of the authors' LAReQA runs), LEACE with concept-erasure's defaults
CORPUS_METHODS = ("lsar", "leace")


def fit_corpus_methods(doc_embs: np.ndarray, doc_langs: list[str], fingerprint: dict[str, Any],
                       source_lang: str) -> dict[str, Any]:
    """LSAR and LEACE fitted on the corpus's documents with their language labels (``lsar``, ``leace``)."""
    from mlirkit.transforms import TRANSFORMS

    out = {}
    for method in CORPUS_METHODS:
        t = TRANSFORMS.get(method)(source_lang).fit(doc_embs, doc_langs)
        t.encoder = dict(fingerprint)
        out[method] = t
    return out


def write_runs(runs: Mapping[str, Any], names: list[str], folder: Path, out: Path, encoder: str, *,
               suffix: str = ".trec", k: int | None = None, command: Sequence[str] | None = None) -> list[str]:
    """TREC runs ``folder/<name><suffix>`` of the runs ``names`` (tag ``<encoder>.<name>``, a provenance
    sidecar naming the command, the encoder, the split folder and the system); the paths written, relative to
    the output directory ``out``."""
    from mlirkit.io.trec import write_run

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        path = folder / f"{name}{suffix}"
        tag = f"{encoder}.{name}".replace("@", "_a").replace("/", "_")
        write_run(runs[name], path, re.sub(r"[^A-Za-z0-9._-]+", "_", tag), k=k,
                  provenance={**({} if command is None else {"command": list(command)}), "encoder": {"name": encoder},
                              "benchmark": {"split": folder.name, "system": name}})
        written.append(str(path.relative_to(out)))
    return written


__all__ = ["CORPUS_METHODS", "Timer", "cache_variant", "compute_threads", "fit_corpus_methods", "fit_transforms",
           "write_runs"]
