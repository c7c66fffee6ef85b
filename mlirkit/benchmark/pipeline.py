"""The benchmark's steps, for each encoder:

1. encode the pooled corpus and the dev+test queries (embeddings cached on disk, :mod:`.cache`);
2. for each fitting condition (default: ``ood`` = LibreOffice help + gettext, ``ddtp`` = DDTP
   descriptions disjoint from the benchmark), encode the translation pairs (cached) and fit SHIFT,
   language centering and LIR (rank 1) from the embeddings (:mod:`mlirkit.transforms`);
3. retrieve with every condition: base, SHIFT at every alpha of the sweep, centering, LIR
   (:mod:`.retrieval`);
4. evaluate every run on the **dev** split, choose SHIFT's alpha per condition by dev nDCG@20;
5. evaluate on the **test** split: base, SHIFT at the chosen alpha, centering, LIR, with paired Fisher
   randomization tests against the base (Holm-corrected over the systems, per metric), plus the whole
   sweep (no tests) for the alpha curves;
6. write TREC runs (main systems, both splits), transform files, plots, and the report.

Everything is written to a temporary directory beside ``output`` and renamed onto it at the end.
"""
from __future__ import annotations

import logging
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.benchmark.cache import EmbeddingCache
from mlirkit.benchmark.config import XQUAD_BASELINE_SOURCE, BenchmarkConfig
from mlirkit.benchmark.data import BenchmarkData, ParallelSet, Rows, load_benchmark, load_parallel
from mlirkit.benchmark.result import BenchmarkResult, EncoderResult
from mlirkit.benchmark.retrieval import Condition, encode_side, retrieve, score_rows, shift_sweep
from mlirkit.benchmark.stages import StageClock
from mlirkit.benchmark.steps import (CORPUS_METHODS, Timer, cache_variant, compute_threads, fit_corpus_methods,
                                     fit_transforms, write_runs)
from mlirkit.benchmark.xquad import MLQA, XquadData, load_collection, load_pair_sets, load_xquad, run_xquad
from mlirkit.base.errors import MlirkitError
from mlirkit.encoders.base import Encoder

logger = logging.getLogger(__name__)

METHODS = ("shift", "centering", "lir")
SPLIT_STATEMENT = ("SHIFT's alpha is chosen on the dev split (by {metric}); every figure of the main table is "
                   "measured on the test split. Dev and test split the description groups ({dev} / {test} "
                   "groups), so no description has queries or relevant documents on both sides; the pooled "
                   "corpus is the same in both.")


def default_command(argv: list[str] | None = None) -> str:
    args = sys.argv[1:] if argv is None else argv
    return "python -m mlirkit.benchmark" + ("" if not args else " " + " ".join(shlex.quote(a) for a in args))


def run_benchmark(config: BenchmarkConfig, *, encoders: Mapping[str, Any] | None = None,
                  data: BenchmarkData | None = None, parallel_rows: Rows | None = None,
                  xquad: XquadData | None = None, mlqa: XquadData | None = None,
                  command: str | None = None) -> BenchmarkResult:
    """Run the benchmark (see module docstring) and write its outputs to ``config.output``.

    ``encoders`` maps names to ready encoder objects (tests); otherwise each name of ``config.encoders``
    is built with :func:`mlirkit.encoders.load_encoder` and ``config.options_for(name)``. ``data``,
    ``xquad``, ``mlqa`` and ``parallel_rows`` replace the registered DDTP benchmark, XQuAD-R and MLQA-R
    collections and parallel sets (tests). ``config.benchmark`` / ``config.xquad`` / ``config.mlqa`` None
    skips that part. ``command`` (default :func:`default_command`) is what the report and every run's
    provenance sidecar record.
    """
    from mlirkit.base.fs import atomic_directory

    command = command or default_command()
    argv = shlex.split(command)

    clock = StageClock()
    timer = Timer(clock, "setup")
    total_start = time.perf_counter()
    cache_root = config.cache_dir
    if cache_root is None:
        from mlirkit.base.cache import cache_dir

        cache_root = cache_dir("benchmark", "embeddings")
    cache = EmbeddingCache(cache_root, show_progress=config.show_progress)
    if mlqa is None and config.mlqa is not None:  # LAReQA's files, not bundled: when missing, one line, first
        mlqa = XquadData(load_collection(config.mlqa, quick_groups=config.quick_groups if config.quick else None))
    with atomic_directory(config.output, overwrite=config.overwrite, kind="benchmark") as out:
        with timer("load data"):
            if data is None and config.benchmark is not None:
                data = load_benchmark(config.benchmark, config.query_langs, langs=config.languages,
                                      quick_groups=config.quick_groups if config.quick else None)
            parallel = {} if data is None else {
                name: load_parallel(name, sources, source_lang=config.source_lang, target_langs=data.languages,
                                    pairs_per_lang=config.pairs_per_lang, rows=parallel_rows)
                for name, sources in config.fit_sources.items()}
            if xquad is None and config.xquad is not None:
                xquad = load_xquad(config)
            pairs = None if xquad is None else load_pair_sets(config, xquad.paragraphs.languages, parallel_rows)
            lareqa_pairs = None if xquad is None or xquad.sentences is None else \
                load_pair_sets(config, xquad.sentences.languages, parallel_rows, names=[XQUAD_BASELINE_SOURCE])
            mlqa_pairs = None if mlqa is None else load_pair_sets(config, mlqa.paragraphs.languages, parallel_rows)
        if data is None and xquad is None and mlqa is None:
            raise MlirkitError("nothing to run: the DDTP, XQuAD-R and MLQA-R parts are all off")
        summary = {} if data is None else data.summary()
        if data is not None:
            logger.info("%s: %d documents in %d languages; %s queries", data.name, len(data.docs),
                        len(data.languages), ", ".join(f"{len(sp.queries)} {s}" for s, sp in data.splits.items()))
        def parts_of(name: str) -> tuple[Any, Any, Any]:
            """Every part for the encoder ``name``: its DDTP, XQuAD-R and MLQA-R results (None for a part off)."""
            loaded = _Encoders(name, encoders, clock)
            ddtp_result = xquad_result = mlqa_result = None
            if data is not None:
                encoder = loaded.get("ddtp", config.options_for(name))
                ddtp_result = _run_encoder(name, encoder, config, data, parallel, cache, out, clock=clock,
                                           command=argv)
            if xquad is not None:
                encoder = loaded.get("xquad-r", config.xquad_options_for(name))
                start = time.perf_counter()
                xquad_result = run_xquad(name, encoder, config, xquad, pairs, lareqa_pairs, cache, out, clock=clock,
                                         command=argv)
                timer.seconds[f"XQuAD-R {name}"] = round(time.perf_counter() - start, 3)
            if mlqa is not None:
                encoder = loaded.get(MLQA, config.xquad_options_for(name))
                start = time.perf_counter()
                mlqa_result = run_xquad(name, encoder, config, mlqa, mlqa_pairs, None, cache, out, part=MLQA,
                                        clock=clock, command=argv)
                timer.seconds[f"MLQA-R {name}"] = round(time.perf_counter() - start, 3)
            return ddtp_result, xquad_result, mlqa_result

        outcomes = _each_encoder(parts_of, config.encoders, config.concurrent_encoders)
        results = [r for r, _, _ in outcomes if r is not None]
        xquad_results = [r for _, r, _ in outcomes if r is not None]
        mlqa_results = [r for _, _, r in outcomes if r is not None]
        groups = summary.get("groups", {})
        statement = SPLIT_STATEMENT.format(metric=config.select_metric, dev=groups.get("dev", "?"),
                                           test=groups.get("test", "?"))
        timer.seconds["total"] = round(time.perf_counter() - total_start, 3)
        result = BenchmarkResult(
            config=config, data=summary, split_statement=statement, encoders=results,
            cache={"root": str(cache_root), "hits": cache.stats.hits, "misses": cache.stats.misses,
                   "texts_encoded": cache.stats.texts_encoded, "texts_reused": cache.stats.texts_reused,
                   "removed_stale": cache.stats.removed_stale,
                   "entries": cache.stats.entries},
            timings=timer.seconds, output=Path(config.output), command=command,
            stages=clock,
            xquad=xquad_results, xquad_data={} if xquad is None else xquad.summary(),
            mlqa=mlqa_results, mlqa_data={} if mlqa is None else mlqa.summary())
        from mlirkit.benchmark.report import write_reports

        write_reports(result, out)
    return result


def _each_encoder(work: Any, names: tuple[str, ...], workers: int) -> list[Any]:
    """``[work(name) for name in names]``, ``workers`` encoders at a time in threads (the stage clock keeps
    their loading, encoding and writing one at a time); every thread has ended when this returns or raises."""
    if workers == 1 or len(names) == 1:
        return [work(name) for name in names]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(workers, len(names)), thread_name_prefix="encoder") as pool:
        futures = [pool.submit(work, name) for name in names]
        return [f.result() for f in futures]  # the first failure raises once the pool has waited for the rest


class _Encoders:
    """The encoder ``name`` for each part, loaded once per distinct set of options (USE has the same in every
    part; e5-small has XQuAD-R's 512 tokens and DDTP's 256); ``given`` (tests) replaces loading."""

    def __init__(self, name: str, given: Mapping[str, Any] | None, clock: StageClock) -> None:
        self.name, self.given, self.clock = name, given, clock
        self._loaded: dict[str, Any] = {}

    def get(self, part: str, options: dict[str, Any]) -> Any:
        if self.given is not None and self.name in self.given:
            return self.given[self.name]
        key = repr(sorted(options.items()))
        if key not in self._loaded:
            with self.clock(part, "load", f"encoder {self.name}"):
                self._loaded[key] = _load_encoder(self.name, options)
        return self._loaded[key]


def _load_encoder(name: str, options: dict[str, Any]) -> Any:
    from mlirkit.encoders import load_encoder

    logger.info("loading encoder %s %s", name, options or "")
    return load_encoder(name, **options)


def _run_encoder(name: str, encoder: Encoder, config: BenchmarkConfig, data: BenchmarkData,
                 parallel: Mapping[str, ParallelSet], cache: EmbeddingCache, out: Path, *,
                 clock: StageClock | None = None, command: Sequence[str] | None = None) -> EncoderResult:
    from tqdm.auto import tqdm

    from mlirkit.transforms import save_transform

    timer = Timer(clock, "ddtp", name)
    fingerprint = encoder.fingerprint
    safe = name.replace("/", "_")
    docs = data.docs
    doc_ids = [d.doc_id for d in docs]
    doc_langs = [d.lang for d in docs]
    queries = [q for s in data.splits.values() for q in s.queries]
    query_ids = [q.query_id for q in queries]
    query_langs = [q.lang for q in queries]
    variant = cache_variant(config)
    with timer("encode corpus"):
        doc_embs = cache.embed(encoder, name, f"{data.name}-corpus{variant}", "doc", [d.text for d in docs],
                               doc_langs)
    with timer("encode queries"):
        query_embs = cache.embed(encoder, name, f"{data.name}-queries{variant}", "query", [q.text for q in queries],
                                 query_langs)
    transforms: dict[str, dict[str, Any]] = {}
    parallel_info: dict[str, dict[str, Any]] = {}
    for source, ps in parallel.items():
        with timer(f"encode parallel {source}"):
            embs = cache.embed(encoder, name, f"parallel-{source}{variant}", "doc", ps.texts, ps.langs)
        with timer(f"fit {source}"), compute_threads(config):
            transforms[source] = fit_transforms(ps, embs, fingerprint, config)
        files = {}
        for method, t in transforms[source].items():
            path = out / "transforms" / safe / f"{source}-{method}.safetensors"
            path.parent.mkdir(parents=True, exist_ok=True)
            save_transform(t, path)
            files[method] = str(path.relative_to(out))
        parallel_info[source] = {"sources": list(ps.sources), "texts_encoded": len(ps.texts),
                                 "pairs": ps.pairs, "pairs_by_source": ps.by_source, "transform_files": files}
    with timer("fit corpus"), compute_threads(config):
        corpus_fitted = fit_corpus_methods(doc_embs, doc_langs, fingerprint, config.source_lang)
    corpus_files = []
    for method, t in corpus_fitted.items():
        path = out / "transforms" / safe / f"corpus-{method}.safetensors"
        path.parent.mkdir(parents=True, exist_ok=True)
        save_transform(t, path)
        corpus_files.append(str(path.relative_to(out)))
    conditions = [Condition("base")]
    for source, ts in transforms.items():
        conditions += [Condition("shift", source, a, ts["shift"]) for a in config.sweep]
        conditions += [Condition(m, source, None, ts[m]) for m in METHODS if m != "shift"]
    conditions += [Condition(m, "corpus", None, t) for m, t in corpus_fitted.items()]
    computed: dict[str, dict[str, dict[str, float]]] = {}
    with timer("retrieve"), compute_threads(config):
        for source, ts in transforms.items():  # SHIFT's sweep: one score matrix for every alpha
            swept = shift_sweep(ts["shift"], config.sweep, doc_embs, doc_ids, doc_langs, query_embs, query_ids,
                                query_langs, config.depth)
            computed.update({Condition("shift", source, a).name: run for a, run in zip(config.sweep, swept)})
        for cond in tqdm([c for c in conditions if c.name not in computed], desc=f"retrieve {name}", unit="system",
                         disable=not config.show_progress, dynamic_ncols=True):
            computed[cond.name] = retrieve(cond, doc_embs, doc_ids, doc_langs, query_embs, query_ids, query_langs,
                                           config.depth)
    runs = {cond.name: computed[cond.name] for cond in conditions}  # in the order of the conditions
    split_runs = {s: {r: {q: run[q] for q in sp.query_langs} for r, run in runs.items()}
                  for s, sp in data.splits.items()}
    doc_lang_map = dict(zip(doc_ids, doc_langs))
    with timer("evaluate dev"), compute_threads(config):
        dev = _evaluate(config, data, "dev", split_runs["dev"], doc_lang_map, significance=False)
    chosen = {source: _choose_alpha(dev, source, config) for source in transforms}
    main_runs = ["base"]
    for source in transforms:
        main_runs += [f"shift-{source}@{chosen[source]:g}", f"centering-{source}", f"lir-{source}"]
    main_runs += [f"{m}-corpus" for m in CORPUS_METHODS]
    mrc = _translated_mrc(name, encoder, config, data, cache, variant, doc_embs,
                          {c.name: c for c in conditions if c.name in main_runs}, timer)
    with timer("evaluate test"), compute_threads(config):
        test = _evaluate(config, data, "test", {r: split_runs["test"][r] for r in main_runs}, doc_lang_map,
                         significance=True, precomputed=mrc)
        versus_shift = {source: _evaluate(config, data, "test", {r: split_runs["test"][r] for r in (
            f"shift-{source}@{chosen[source]:g}", *(f"{m}-corpus" for m in CORPUS_METHODS))}, doc_lang_map,
            significance=True, baseline=f"shift-{source}@{chosen[source]:g}", precomputed=mrc) for source in transforms}
        test_sweep = _evaluate(config, data, "test", split_runs["test"], doc_lang_map, significance=False)
    result = EncoderResult(name=name, fingerprint=fingerprint, digest=encoder.digest, dim=int(encoder.dim),
                           parallel=parallel_info, chosen_alpha=chosen, main_runs=main_runs, dev=dev, test=test,
                           test_sweep=test_sweep, versus_shift=versus_shift)
    with timer("write runs"):
        result.files["runs"] = [f for split, runs_ in split_runs.items()
                                for f in write_runs(runs_, main_runs, out / "runs" / safe / split, out, name,
                                                   command=command)]
    result.files["transforms"] = [f for info in parallel_info.values() for f in info["transform_files"].values()] + \
        corpus_files
    if config.plots:
        with timer("plots"), compute_threads(config):
            result.files["plots"] = _plots(result, config, data, split_runs["test"], doc_lang_map, doc_embs,
                                           doc_langs, transforms, out / "plots" / safe)
    result.timings = timer.seconds
    return result


def _translated_mrc(name: str, encoder: Encoder, config: BenchmarkConfig, data: BenchmarkData,
                    cache: EmbeddingCache, variant: str, doc_embs: np.ndarray,
                    conditions: Mapping[str, Condition], timer: Timer) -> dict[str, dict[str, dict[str, float]]]:
    """MRC@k of the test queries against their translations (``{benchmark}/multi/test``: the same description's
    short description in every language, encoded for this metric only), each system scoring every document:
    ``{metric: {run: {qid: MRC}}}`` for the split's queries; empty without MRC metrics or translations."""
    from mlirkit.eval.metrics import parse_metric
    from mlirkit.eval.mrc import mrc_from_scores

    metrics = [m for m in config.metrics if parse_metric(m).kind == "mrc"]
    test = data.splits["test"]
    wanted = set((test.query_groups or {}).values())
    if not metrics or not wanted:
        return {}
    import mlirkit.datasets  # noqa: F401  (registers the ids)
    from mlirkit.datasets import DATASETS
    from mlirkit.io.topics import read_topics

    source = f"{data.name}/multi/test"
    if source not in DATASETS:
        logger.info("no %s: MRC of the DDTP part not computed", source)
        return {}
    queries = [q for q in read_topics(source) if getattr(q, "group_id", None) in wanted]
    q_ids, q_langs = [q.query_id for q in queries], [q.lang for q in queries]
    groups = {q.query_id: q.group_id for q in queries}
    with timer("encode test translations"):
        embs = cache.embed(encoder, name, f"{data.name}-test-translations{variant}", "query",
                           [q.text for q in queries], q_langs, reuse=True)
    doc_ids, doc_langs = [d.doc_id for d in data.docs], [d.lang for d in data.docs]
    keep = set(test.query_langs)
    with timer("MRC (translated queries)"), compute_threads(config):
        return {m: {run: {q: v for q, v in mrc_from_scores(score_rows(cond, doc_embs, doc_langs, embs, q_langs),
                                                            q_ids, q_langs, groups, doc_ids,
                                                            parse_metric(m).k).items() if q in keep}
                    for run, cond in conditions.items()} for m in metrics}


def _evaluate(config: BenchmarkConfig, data: BenchmarkData, split: str, runs: Mapping[str, Any],
              doc_langs: Mapping[str, str], *, significance: bool, baseline: str = "base",
              precomputed: Mapping[str, Any] | None = None) -> Any:
    from mlirkit.eval import evaluate
    from mlirkit.eval.metrics import parse_metric

    sp = data.splits[split]
    metrics = [m for m in config.metrics if precomputed and m in precomputed or parse_metric(m).kind != "mrc"]
    return evaluate(sp.qrels, runs, metrics, doc_langs=doc_langs, query_langs=sp.query_langs,
                    significance="fisher" if significance else None, baseline=baseline if significance else None,
                    correction="holm", n_permutations=config.n_permutations, seed=config.seed,
                    k=config.k, query_groups=sp.query_groups, precomputed=precomputed)


def _choose_alpha(dev: Any, source: str, config: BenchmarkConfig) -> float:
    """The sweep's alpha with the best dev score (the smallest such alpha on a tie)."""
    best_alpha, best = None, -np.inf
    for alpha in config.sweep:
        value = dev.value(Condition("shift", source, alpha).name, config.select_metric)
        if value is not None and value > best:
            best_alpha, best = alpha, value
    if best_alpha is None:
        raise MlirkitError(f"no dev {config.select_metric} for SHIFT ({source}): cannot choose alpha")
    return best_alpha


def _plots(result: EncoderResult, config: BenchmarkConfig, data: BenchmarkData, test_runs: Mapping[str, Any],
           doc_langs: Mapping[str, str], doc_embs: np.ndarray, doc_lang_list: list[str],
           transforms: Mapping[str, Mapping[str, Any]], root: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from mlirkit.eval.plots import plot_alpha_curves, plot_language_mix, plot_projection

    root.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    metrics = [m for m in (config.select_metric, "tlr@20", "samelang@20") if m in config.metrics]
    for source in transforms:  # the test split's curves (the dev curves are tabled in the report)
        sweep = {a: {m: result.sweep("test", source, m)[a] for m in metrics} for a in config.sweep}
        baselines = {r: {m: result.test_sweep.value(r, m) for m in metrics}
                     for r in ("base", f"centering-{source}", f"lir-{source}")}
        files += plot_alpha_curves(sweep, root / f"alpha-{source}-test", metrics, baselines,
                                   title=f"{result.name}: SHIFT fitted on {source} pairs, test split "
                                         f"(alpha chosen on dev: {result.chosen_alpha[source]:g})",
                                   chosen=result.chosen_alpha[source])
    sp = data.splits["test"]
    files += plot_language_mix({r: test_runs[r] for r in result.main_runs}, doc_langs, sp.query_langs, config.k,
                               root / "language-mix-test", qrels=sp.qrels,
                               title=f"{result.name}: languages of the top {config.k} (test split)")
    before = transform_and_normalize(doc_embs, doc_lang_list, "doc")
    for source, ts in transforms.items():
        alpha = result.chosen_alpha[source]
        after = encode_side(doc_embs, doc_lang_list, "doc", ts["shift"], alpha)
        files += plot_projection(before, after, doc_lang_list, root / f"projection-shift-{source}",
                                 titles=("base", f"SHIFT ({source}), alpha={alpha:g}"), seed=config.seed)
    return [str(Path(f).relative_to(root.parents[1])) for f in files]


def timing_line(result: BenchmarkResult) -> str:
    return ", ".join(f"{k} {v:.1f}s" for k, v in result.timings.items())


__all__ = ["default_command", "run_benchmark"]
