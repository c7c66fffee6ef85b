"""Settings of the benchmark run (one frozen dataclass; the CLI builds it, the report records it)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option

DEFAULT_ENCODERS = ("multilingual-e5-small-q4", "usem")
DEFAULT_ALPHAS = tuple(round(0.1 * i, 1) for i in range(1, 11))  # 0.1 ... 1.0
QUICK_ALPHAS = (0.2, 0.4, 0.6, 0.8, 1.0)
#: benchmark family: ``{prefix}/{query_lang}/{split}`` are the ir_datasets ids
DEFAULT_BENCHMARK = "mlirkit/ddtp"
#: where transforms are fitted from: condition name -> parallel sets (ids for mlirkit.datasets.parallel_rows)
DEFAULT_FIT_SOURCES: dict[str, tuple[str, ...]] = {
    "ood": ("mlirkit/parallel/libreoffice-help", "mlirkit/parallel/gettext"),
    "ddtp": ("mlirkit/parallel/ddtp",),
}
#: per-encoder options that keep the default run within its time budget (measured: docs/performance.md).
#: e5-small runs on the fastest backend whose vectors match torch fp32 (min cosine >= 0.9999,
#: docs/encoders.md): OpenVINO on the CPU, bf16 arithmetic where the CPU has it; int8 only when asked.
DEFAULT_ENCODER_OPTIONS: dict[str, dict[str, Any]] = {
    "multilingual-e5-small-q4": {"max_length": 256, "batch_size": 32, "backend": "auto"},
}
METRICS = ("ndcg@20", "recall@20", "mrr@10", "tlr@20", "samelang@20", "peer@20", "mrc@10")
SELECT_METRIC = "ndcg@20"
#: the SHIFT paper's benchmark: XQuAD-R's paragraph pool (queries in each of its 8 languages)
DEFAULT_XQUAD = "mlirkit/xquad-r/multi"
#: LAReQA's sentence pool of the same questions (11 languages), reported with mean average precision
DEFAULT_LAREQA = "mlirkit/lareqa-xquad-r/multi"
#: MLQA-R's paragraph pool (7 languages, partly parallel; LAReQA's files, not bundled)
DEFAULT_MLQA = "mlirkit/mlqa-r/multi"
#: language vectors of the XQuAD-R part fitted on translation pairs: name -> parallel sets. Tatoeba is
#: general-domain text (the role of mMARCO in the SHIFT paper); the bundled sets lack ar, hi and vi.
XQUAD_PAIR_SOURCES: dict[str, tuple[str, ...]] = {
    "tatoeba": ("mlirkit/parallel/tatoeba",),
    "bundled": DEFAULT_FIT_SOURCES["ood"],
}
#: the pair source whose centering and LIR are reported beside SHIFT on XQuAD-R
XQUAD_BASELINE_SOURCE = "tatoeba"


@dataclass(frozen=True)
class BenchmarkConfig:
    """Everything that decides what the benchmark computes.

    ``benchmark``: the DDTP-style benchmark family (None = that part skipped); ``query_langs`` and
    ``languages`` select its queries and documents (None = all of the benchmark's).
    ``quick``: ``quick_groups`` query groups (dev and test in the benchmark's proportion),
    ``quick_pairs`` translation pairs per language and ``QUICK_ALPHAS`` unless alphas are given.
    ``max_pairs``: translation pairs per target language used to fit each condition's transforms,
    shared evenly by the condition's parallel sets. Alpha is chosen on the dev split by
    ``SELECT_METRIC`` and everything is reported on the test split.

    The XQuAD-R part (``xquad``: a pooled collection id such as :data:`DEFAULT_XQUAD`, None = skipped,
    the default: it is ``--parts xquad-r`` of the CLI) has no dev split: its alphas
    are chosen without its labels, by the label-free rule on its documents
    (:func:`mlirkit.transforms.alpha_select.select_alpha`). ``lareqa`` (None = skipped; :data:`DEFAULT_LAREQA`) is LAReQA's
    sentence pool, for the encoders ``lareqa_encoders`` (None = all). ``xquad_pairs``: translation
    pairs per language of each of ``xquad_pair_sources``. ``mlqa`` (None = skipped; :data:`DEFAULT_MLQA`,
    ``--parts mlqa-r``) is MLQA-R's paragraph pool, run as the XQuAD-R part is (same systems, statistics and
    label-free alpha).
    """

    encoders: tuple[str, ...] = DEFAULT_ENCODERS
    benchmark: str | None = DEFAULT_BENCHMARK
    query_langs: tuple[str, ...] = ("en",)
    languages: tuple[str, ...] | None = None
    alphas: tuple[float, ...] | None = None
    output: Path = Path("runs/benchmark")
    quick: bool = False
    overwrite: bool = False
    fit_sources: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_FIT_SOURCES))
    source_lang: str = "en"
    max_pairs: int = 200
    quick_groups: int = 100
    quick_pairs: int = 50
    lir_rank: int = 1
    depth: int = 100
    metrics: tuple[str, ...] = METRICS
    select_metric: str = SELECT_METRIC
    n_permutations: int = 1000
    seed: int = 42
    cache_dir: Path | None = None
    encoder_options: dict[str, dict[str, Any]] = field(default_factory=lambda: {
        k: dict(v) for k, v in DEFAULT_ENCODER_OPTIONS.items()})
    xquad: str | None = None
    lareqa: str | None = None
    mlqa: str | None = None
    lareqa_encoders: tuple[str, ...] | None = None
    xquad_pair_sources: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(XQUAD_PAIR_SOURCES))
    xquad_pairs: int = 1000
    #: tokens per text in the XQuAD-R part (e5-small's 512 positions)
    xquad_max_length: int = 512
    plots: bool = True
    #: BLAS/OpenMP threads for everything after encoding (fitting, search, evaluation, plots)
    compute_threads: int = 1
    #: encoders run at the same time, one thread each: one's retrieval and evaluation overlap the other's
    #: encoding or its own (loading, encoding and writing stay one at a time: mlirkit.benchmark.stages)
    concurrent_encoders: int = 2
    show_progress: bool = True

    def __post_init__(self) -> None:
        if not self.encoders:
            raise MlirkitError("no encoders given")
        if len(set(self.encoders)) != len(self.encoders):
            raise MlirkitError(f"an encoder is given twice: {', '.join(self.encoders)}")
        if not self.query_langs:
            raise MlirkitError("no query languages given")
        if self.languages is not None and not self.languages:
            raise MlirkitError(f"{option('languages')} is empty")
        for a in self.alphas or ():
            if not (isinstance(a, (int, float)) and math.isfinite(a) and 0.0 < a <= 2.0):
                raise MlirkitError(f"alpha {a!r} is outside (0, 2]")
        if self.alphas is not None and not self.alphas:
            raise MlirkitError(f"{option('alphas')} is empty")
        for name, value in (("max_pairs", self.max_pairs), ("xquad_pairs", self.xquad_pairs),
                            ("xquad_max_length", self.xquad_max_length),
                            ("quick_groups", self.quick_groups),
                            ("quick_pairs", self.quick_pairs), ("lir_rank", self.lir_rank), ("depth", self.depth),
                            ("compute_threads", self.compute_threads),
                            ("concurrent_encoders", self.concurrent_encoders)):
            if int(value) < 1:
                raise MlirkitError(f"{name} must be at least 1, got {value}")
        if not self.fit_sources:
            raise MlirkitError("no parallel data to fit transforms from")
        if self.select_metric not in self.metrics:
            raise MlirkitError(f"the selection metric {self.select_metric} is not among the metrics")
        if (self.xquad is not None or self.mlqa is not None) and XQUAD_BASELINE_SOURCE not in self.xquad_pair_sources:
            raise MlirkitError(f"the XQuAD-R and MLQA-R parts need the {XQUAD_BASELINE_SOURCE!r} pair source")
        if self.lareqa is not None and self.xquad is None:
            raise MlirkitError("the LAReQA part runs with the XQuAD-R part (its vectors and questions)")
        for name in self.lareqa_encoders or ():
            if name not in self.encoders:
                from mlirkit.base.registry import did_you_mean

                raise MlirkitError(f"LAReQA encoder {name!r} is not one of the encoders{did_you_mean(name, self.encoders)}")

    @property
    def sweep(self) -> tuple[float, ...]:
        """The alphas evaluated (sorted, unique)."""
        alphas = self.alphas if self.alphas is not None else (QUICK_ALPHAS if self.quick else DEFAULT_ALPHAS)
        return tuple(sorted({float(a) for a in alphas}))

    @property
    def pairs_per_lang(self) -> int:
        return self.quick_pairs if self.quick else self.max_pairs

    @property
    def xquad_pairs_per_lang(self) -> int:
        return self.quick_pairs if self.quick else self.xquad_pairs

    def runs_lareqa(self, encoder: str) -> bool:
        return self.lareqa is not None and (self.lareqa_encoders is None or encoder in self.lareqa_encoders)

    @property
    def k(self) -> int:
        """The cut-off of the breakdowns and plots (the largest of the metrics' k)."""
        return max(int(m.split("@")[1]) for m in self.metrics if "@" in m)

    def options_for(self, encoder: str) -> dict[str, Any]:
        return dict(self.encoder_options.get(encoder, {}))

    def xquad_options_for(self, encoder: str) -> dict[str, Any]:
        """The XQuAD-R part's options: those of :meth:`options_for`, with ``xquad_max_length`` tokens where
        they limit the length (XQuAD-R's paragraphs are whole, not cut as DDTP's descriptions are)."""
        options = self.options_for(encoder)
        if "max_length" in options:
            options["max_length"] = self.xquad_max_length
        return options

    def with_(self, **changes: Any) -> "BenchmarkConfig":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["output"] = str(self.output)
        d["cache_dir"] = None if self.cache_dir is None else str(self.cache_dir)
        d["alphas"] = list(self.sweep)
        d["fit_sources"] = {k: list(v) for k, v in self.fit_sources.items()}
        d["xquad_pair_sources"] = {k: list(v) for k, v in self.xquad_pair_sources.items()}
        return d


__all__ = ["BenchmarkConfig", "DEFAULT_BENCHMARK", "DEFAULT_ENCODERS", "DEFAULT_ENCODER_OPTIONS",
           "DEFAULT_FIT_SOURCES", "DEFAULT_LAREQA", "DEFAULT_MLQA", "DEFAULT_XQUAD", "METRICS",
           "XQUAD_BASELINE_SOURCE"]
