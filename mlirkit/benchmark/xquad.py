"""The main job on the SHIFT paper's own benchmark: XQuAD-R, beside the DDTP part.

**XQuAD-R** (``mlirkit/xquad-r/multi``, the SHIFT authors' construction): the 240 XQuAD paragraphs in 8
languages pooled (1,920 documents); each of the 1,190 questions asked in each language, its paragraph
relevant in every language. One index per encoder (the untransformed document vectors), searched with

- ``base``: cosine;
- ``shift-V@a``: the query-time shift, each query scored with its own language's re-based vectors
  (:class:`mlirkit.search.query_shift.QueryTimeShift`, the code of ``python -m mlirkit.search --query-shift
  cosine``), with the vectors ``V`` = ``tatoeba`` (Tatoeba sentence pairs: general-domain text),
  ``bundled`` (LibreOffice help + gettext, as the DDTP part's ``ood``) or ``corpus`` (the language means of
  the pooled documents, ``python -m mlirkit.shift fit --from-index DIR --vectors corpus``); languages the
  pair sets lack are handled as the query-time shift handles them by default (the report says how);
- ``centering-tatoeba``, ``lir-tatoeba``: fitted on the same Tatoeba pairs, applied to documents and
  queries at their published strength (alpha 1).

XQuAD-R has no dev split, and its labels choose nothing: each SHIFT's alpha is the label-free choice on the
pooled documents (:func:`mlirkit.transforms.alpha_select.select_alpha`, its default rule and grid). The
sweep over alpha is measured beside it for the report, never used to choose.

Metrics as in the DDTP part; their main value is the macro mean over query languages, the micro mean beside
it. Paired tests of every system against base: the unit is the question (its translations move together),
Holm over the systems; per query language, the same test on that language's queries (one per question).

**LAReQA** (``mlirkit/lareqa-xquad-r/multi``, 13,014 candidate sentences of 11 languages, every question in
every language): base and SHIFT with Tatoeba and corpus vectors (label-free alpha on the sentence pool),
mean average precision over the whole ranking (:mod:`.average_precision`), tested by question.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.benchmark.cache import EmbeddingCache
from mlirkit.benchmark.config import XQUAD_BASELINE_SOURCE, BenchmarkConfig
from mlirkit.benchmark.data import ParallelSet, Rows, Split, load_parallel
from mlirkit.benchmark.retrieval import Condition, retrieve, score_rows
from mlirkit.benchmark.stages import StageClock
from mlirkit.benchmark.steps import Timer, cache_variant, compute_threads, fit_corpus_methods, fit_transforms, write_runs
from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc

logger = logging.getLogger(__name__)

#: vectors fitted on the pooled documents themselves (the named recipe of ``shift fit --from-index``)
CORPUS = "corpus"
#: metric of the LAReQA sentence pool
MAP = "map"
#: queries scored per block (a block's score matrix is queries x candidates)
QUERY_BLOCK = 1024
#: the parts run by :func:`run_xquad`: the SHIFT paper's benchmark, and MLQA-R (partly parallel)
XQUAD, MLQA = "xquad-r", "mlqa-r"
LABELS = {XQUAD: "XQuAD-R", MLQA: "MLQA-R"}


@dataclass
class Collection:
    """A pooled collection: its documents, and its queries with their qrels (``topics``)."""

    name: str
    docs: list[Doc]
    topics: Split

    @property
    def doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.docs]

    @property
    def doc_langs(self) -> list[str]:
        return [d.lang for d in self.docs]

    @property
    def languages(self) -> list[str]:
        return sorted({d.lang for d in self.docs} | {q.lang for q in self.topics.queries})

    def summary(self) -> dict[str, Any]:
        from collections import Counter

        queries = self.topics.queries
        groups = self.topics.query_groups
        return {"id": self.name, "documents": len(self.docs),
                "documents_per_language": dict(sorted(Counter(self.doc_langs).items())),
                "queries": len(queries), "queries_per_language": dict(sorted(Counter(q.lang for q in queries).items())),
                "questions": len(set(groups.values())) if groups else len(queries)}


@dataclass
class XquadData:
    """The XQuAD-R paragraph pool and (optionally) LAReQA's sentence pool of the same questions."""

    paragraphs: Collection
    sentences: Collection | None = None

    def summary(self) -> dict[str, Any]:
        return {"paragraphs": self.paragraphs.summary(),
                **({"sentences": self.sentences.summary()} if self.sentences is not None else {})}


def load_collection(dataset_id: str, *, quick_groups: int | None = None) -> Collection:
    """Documents, queries and qrels of ``dataset_id`` (queries without a relevant document dropped).

    ``quick_groups``: keep that many questions (the topics' groups, chosen by a hash of their id, so
    XQuAD-R and LAReQA keep the same ones) and only the documents relevant to them.
    """
    import mlirkit.datasets  # noqa: F401  (registers the ids)
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    qrels = {q: rels for q, rels in read_qrels(dataset_id).items() if any(r > 0 for r in rels.values())}
    queries = [q for q in read_topics(dataset_id) if q.query_id in qrels]
    docs = list(read_corpus(dataset_id))
    if quick_groups is not None:
        group = {q.query_id: getattr(q, "group_id", None) or q.query_id for q in queries}
        keep = set(sorted(set(group.values()), key=lambda g: hashlib.sha1(g.encode()).hexdigest())[:quick_groups])
        queries = [q for q in queries if group[q.query_id] in keep]
        needed = {d for q in queries for d, r in qrels[q.query_id].items() if r > 0}
        docs = [d for d in docs if d.doc_id in needed]
    qrels = {q.query_id: qrels[q.query_id] for q in queries}
    if not queries or not docs:
        raise MlirkitError(f"{dataset_id}: no queries with a relevant document")
    return Collection(dataset_id, docs, Split("all", queries, qrels))


def load_xquad(config: BenchmarkConfig) -> XquadData:
    quick = config.quick_groups if config.quick else None
    sentences = None
    if config.lareqa is not None and any(config.runs_lareqa(e) for e in config.encoders):
        sentences = load_collection(config.lareqa, quick_groups=quick)
    return XquadData(load_collection(config.xquad, quick_groups=quick), sentences)


def load_pair_sets(config: BenchmarkConfig, langs: list[str], rows: Rows | None = None, *,
                   names: list[str] | None = None) -> dict[str, ParallelSet]:
    """The pair sets of ``config.xquad_pair_sources`` (those of ``names``, default all) for ``langs``
    (``xquad_pairs`` pairs per language)."""
    return {name: load_parallel(name, sources, source_lang=config.source_lang, target_langs=langs,
                                pairs_per_lang=config.xquad_pairs_per_lang, rows=rows)
            for name, sources in config.xquad_pair_sources.items() if names is None or name in names}


# ---------------------------------------------------------------------------- results
@dataclass
class LareqaResult:
    """LAReQA's sentence pool for one encoder: AP per query of each system, tests against base."""

    collection: str
    systems: list[str]
    chosen_alpha: dict[str, float]
    ap: dict[str, dict[str, float]]  # system -> {qid: AP}
    query_langs: dict[str, str]
    tests: list  # Comparison (mlirkit.eval.significance)
    selection: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: EvaluationResult of the language-fairness metrics (PEER@k on each system's top k, MRC@k from every
    #: score), with the grouped tests against base
    fairness: Any = None

    def value(self, system: str, *, micro: bool = False, lang: str | None = None) -> float:
        from mlirkit.eval.means import macro_mean, micro_mean

        qids = [q for q in self.ap[system] if lang is None or self.query_langs[q] == lang]
        values = np.array([self.ap[system][q] for q in qids])
        if micro or lang is not None:
            return micro_mean(values)
        return macro_mean(values, [self.query_langs[q] for q in qids])

    @property
    def languages(self) -> list[str]:
        return sorted(set(self.query_langs.values()))


@dataclass
class XquadEncoderResult:
    """The XQuAD-R part for one encoder."""

    name: str
    fingerprint: dict[str, Any]
    vectors: dict[str, dict[str, Any]]  # per SHIFT vectors: pairs, label-free selection, missing languages, file
    chosen_alpha: dict[str, float]
    main_runs: list[str]
    result: Any  # EvaluationResult of the main runs, with the grouped tests
    lang_tests: dict[str, list]  # query language -> [Comparison] (select metric, each system vs base)
    sweep: dict[str, dict[float, float | None]]  # vectors -> alpha -> select metric (macro)
    lareqa: LareqaResult | None = None
    #: SHIFT vectors -> EvaluationResult of that SHIFT (the baseline of its grouped tests), LSAR and LEACE
    versus_shift: dict[str, Any] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------- the part
def shift_run(shift: Any, query_embs: np.ndarray, query_ids: list[str], query_langs: list[str], k: int,
              alpha: float) -> dict[str, dict[str, float]]:
    """``{qid: {docid: score}}``: the top ``k`` of every query with the query-time shift at ``alpha``."""
    run: dict[str, dict[str, float]] = {}
    for a in range(0, len(query_ids), QUERY_BLOCK):
        hits = shift.search(query_embs[a:a + QUERY_BLOCK], query_langs[a:a + QUERY_BLOCK], k, alpha)
        run.update({qid: dict(h) for qid, h in zip(query_ids[a:a + QUERY_BLOCK], hits)})
    return run


def shift_sweep_runs(shift: Any, query_embs: np.ndarray, query_ids: list[str], query_langs: list[str], k: int,
                     alphas: list[float]) -> list[dict[str, dict[str, float]]]:
    """:func:`shift_run` at each of ``alphas``, from one score matrix per block of queries
    (:meth:`mlirkit.search.query_shift.QueryTimeShift.search_sweep`)."""
    runs: list[dict[str, dict[str, float]]] = [{} for _ in alphas]
    for a in range(0, len(query_ids), QUERY_BLOCK):
        swept = shift.search_sweep(query_embs[a:a + QUERY_BLOCK], query_langs[a:a + QUERY_BLOCK], k, alphas)
        for run, hits in zip(runs, swept):
            run.update({qid: dict(h) for qid, h in zip(query_ids[a:a + QUERY_BLOCK], hits)})
    return runs


def run_xquad(name: str, encoder: Any, config: BenchmarkConfig, data: XquadData,
              pairs: Mapping[str, ParallelSet], lareqa_pairs: Mapping[str, ParallelSet] | None,
              cache: EmbeddingCache, out: Path, *, part: str = XQUAD, clock: StageClock | None = None,
              command: Sequence[str] | None = None) -> XquadEncoderResult:
    """The XQuAD-R part (module docstring) for one encoder, or the same part on another pooled collection
    (``part``: :data:`MLQA`); runs, transforms and plots written under ``out``, named by ``part``; ``command``
    is what the runs' provenance records (:func:`~mlirkit.benchmark.steps.write_runs`)."""
    from mlirkit.transforms import save_transform

    timer = Timer(clock, part, name)
    safe = name.replace("/", "_")
    coll = data.paragraphs
    variant = cache_variant(config.with_(languages=None))
    docs, queries = coll.docs, coll.topics.queries
    with timer("encode corpus"):
        doc_embs = cache.embed(encoder, name, f"{part}-corpus{variant}", "doc", [d.text for d in docs],
                               coll.doc_langs, reuse=True)
    with timer("encode queries"):
        query_embs = cache.embed(encoder, name, f"{part}-queries{variant}", "query", [q.text for q in queries],
                                 [q.lang for q in queries], reuse=True)
    transforms, info = _fit(name, encoder, config, pairs, doc_embs, coll, cache, variant, part, timer)
    shifts, selections = {}, {}
    with timer("choose alpha (label-free)"), compute_threads(config):
        for source, t in transforms["shift"].items():
            shifts[source], selections[source] = _shift_and_alpha(t, doc_embs, coll)
    chosen = {s: sel.alpha for s, sel in selections.items()}
    for source, t in transforms["shift"].items():
        path = out / "transforms" / safe / f"{part}-{source}-shift.safetensors"
        path.parent.mkdir(parents=True, exist_ok=True)
        save_transform(shifts[source].transform, path)
        info.setdefault(source, {}).update({
            "label_free_alpha": selections[source].as_dict(), "transform_file": str(path.relative_to(out)),
            "missing_languages": shifts[source].transform.meta.get("missing_languages"),
            "never_shifted_documents": shifts[source].describe(chosen[source])["docs_never_shifted"]})
    q_ids, q_langs = [q.query_id for q in queries], [q.lang for q in queries]
    runs: dict[str, dict[str, dict[str, float]]] = {}
    k = config.k
    with timer("retrieve"), compute_threads(config):
        runs["base"] = retrieve(Condition("base"), doc_embs, coll.doc_ids, coll.doc_langs, query_embs, q_ids,
                                q_langs, k)
        for source, shift in shifts.items():
            alphas = sorted(set(config.sweep) | {chosen[source]})
            for alpha, run in zip(alphas, shift_sweep_runs(shift, query_embs, q_ids, q_langs, k, alphas)):
                runs[Condition("shift", source, alpha).name] = run
        for method in ("centering", "lir"):
            cond = Condition(method, XQUAD_BASELINE_SOURCE, None, transforms[method])
            runs[cond.name] = retrieve(cond, doc_embs, coll.doc_ids, coll.doc_langs, query_embs, q_ids, q_langs, k)
        for method, t in transforms["corpus-fitted"].items():
            cond = Condition(method, CORPUS, None, t)
            runs[cond.name] = retrieve(cond, doc_embs, coll.doc_ids, coll.doc_langs, query_embs, q_ids, q_langs, k)
    corpus_runs = [f"{m}-{CORPUS}" for m in transforms["corpus-fitted"]]
    main_runs = ["base", *(Condition("shift", s, chosen[s]).name for s in shifts),
                 f"centering-{XQUAD_BASELINE_SOURCE}", f"lir-{XQUAD_BASELINE_SOURCE}", *corpus_runs]
    scorers = {"base": score_rows(Condition("base"), doc_embs, coll.doc_langs, query_embs, q_langs),
               **{Condition("shift", s, chosen[s]).name: _shift_scores(shift, query_embs, q_langs, chosen[s])
                  for s, shift in shifts.items()},
               **{f"{m}-{XQUAD_BASELINE_SOURCE}": score_rows(Condition(m, XQUAD_BASELINE_SOURCE, None, transforms[m]),
                                                             doc_embs, coll.doc_langs, query_embs, q_langs)
                  for m in ("centering", "lir")},
               **{f"{m}-{CORPUS}": score_rows(Condition(m, CORPUS, None, t), doc_embs, coll.doc_langs, query_embs,
                                              q_langs)
                  for m, t in transforms["corpus-fitted"].items()}}
    with timer("MRC (every score)"), compute_threads(config):
        mrc = mrc_by_run(config, scorers, coll)
    with timer("evaluate"), compute_threads(config):
        result = _evaluate(config, coll, {r: runs[r] for r in main_runs}, significance=True, precomputed=mrc)
        versus_shift = {s: _evaluate(config, coll, {r: runs[r] for r in (Condition("shift", s, chosen[s]).name,
                                                                         *corpus_runs)},
                                     significance=True, baseline=Condition("shift", s, chosen[s]).name,
                                     precomputed=mrc)
                        for s in (XQUAD_BASELINE_SOURCE, CORPUS) if s in shifts}
        sweep_result = _evaluate(config, coll, {r: run for r, run in runs.items() if r.startswith("shift-")},
                                 significance=False, metrics=[config.select_metric])
        lang_tests = by_query_language_tests(result, coll, config)
    sweep = {s: {a: sweep_result.value(Condition("shift", s, a).name, config.select_metric)
                 for a in sorted(set(config.sweep) | {chosen[s]})} for s in shifts}
    res = XquadEncoderResult(name=name, fingerprint=encoder.fingerprint, vectors=info, chosen_alpha=chosen, main_runs=main_runs, result=result,
                             lang_tests=lang_tests, sweep=sweep, versus_shift=versus_shift)
    with timer("write runs"):
        res.files["runs"] = write_runs(runs, main_runs, out / "runs" / safe / part, out, name,
                                       suffix=".trec.gz", k=k, command=command)
    res.files["transforms"] = [v["transform_file"] for v in info.values() if "transform_file" in v]
    if config.plots:
        with timer("plots"), compute_threads(config):
            res.files["plots"] = _plots(res, config, coll, runs, out / "plots" / safe, out, part)
    if lareqa_pairs is not None and data.sentences is not None and config.runs_lareqa(name):
        start = time.perf_counter()
        res.lareqa = run_lareqa(name, encoder, config, data.sentences, lareqa_pairs, cache, variant,
                                Timer(clock, "lareqa", name))
        timer.seconds["LAReQA"] = round(time.perf_counter() - start, 3)
    res.timings = timer.seconds
    return res


def _fit(name: str, encoder: Any, config: BenchmarkConfig, pairs: Mapping[str, ParallelSet], doc_embs: np.ndarray,
         coll: Collection, cache: EmbeddingCache, variant: str, label: str,
         timer: Timer) -> tuple[dict[str, Any], dict[str, Any]]:
    """``({"shift": {vectors: transform}, "centering": T, "lir": T}, {vectors: what they were fitted on})``."""
    shift: dict[str, Any] = {}
    out: dict[str, Any] = {}
    info: dict[str, dict[str, Any]] = {}
    for source, ps in pairs.items():
        with timer(f"encode pairs {source}"):
            embs = cache.embed(encoder, name, f"{label}-pairs-{source}{variant}", "doc", ps.texts, ps.langs,
                               reuse=True)
        with timer(f"fit {source}"), compute_threads(config):
            fitted = fit_transforms(ps, embs, encoder.fingerprint, config)
        shift[source] = fitted["shift"]
        if source == XQUAD_BASELINE_SOURCE:
            out.update({m: fitted[m] for m in ("centering", "lir")})
        info[source] = {"sources": list(ps.sources), "pairs": ps.pairs}
    with timer("fit corpus"), compute_threads(config):
        shift[CORPUS] = corpus_shift(doc_embs, coll, config.source_lang, encoder.fingerprint)
        corpus_fitted = fit_corpus_methods(doc_embs, coll.doc_langs, encoder.fingerprint, config.source_lang)
    info[CORPUS] = {"sources": [coll.name], "recipe": shift[CORPUS].meta.get("recipe")}
    return {"shift": shift, **out, "corpus-fitted": corpus_fitted}, info


def corpus_shift(doc_embs: np.ndarray, coll: Collection, source_lang: str, fingerprint: dict[str, Any]) -> Any:
    """SHIFT vectors fitted on the collection's own documents (``V_l = mean(l) - mean(source)``)."""
    from mlirkit.transforms import ShiftTransform

    t = ShiftTransform(source_lang, vectors=CORPUS).fit(doc_embs, coll.doc_langs)
    t.encoder = dict(fingerprint)
    t.meta["source"] = coll.name
    return t


def _shift_and_alpha(transform: Any, doc_embs: np.ndarray, coll: Collection) -> tuple[Any, Any]:
    """The query-time shift of ``transform`` on the pooled documents, and its label-free alpha (chosen on
    the vectors the shift uses, languages the transform lacks handled as the shift handles them)."""
    from mlirkit.search.query_shift import QueryTimeShift
    from mlirkit.transforms.alpha_select import select_alpha
    from mlirkit.transforms.hybrid import fill_missing_from_corpus

    transform = fill_missing_from_corpus(transform, doc_embs, coll.doc_langs)  # the fit step, then the shift
    shift = QueryTimeShift(doc_embs, coll.doc_langs, transform, metric="cosine", docids=coll.doc_ids)
    return shift, select_alpha(doc_embs, coll.doc_langs, shift.transform, per_language=False)


def _shift_scores(shift: Any, query_embs: np.ndarray, query_langs: list[str], alpha: float):
    """``rows -> scores`` of the query-time shift at ``alpha`` (every document, as :func:`shift_run` ranks them)."""
    return lambda rows: shift.scores(query_embs[rows], [query_langs[i] for i in rows], alpha)


def mrc_by_run(config: BenchmarkConfig, scorers: Mapping[str, Any], coll: Collection) -> dict[str, dict[str, Any]]:
    """``{MRC metric: {run: {qid: MRC}}}`` of each system from every score (``scorers``: run -> ``rows ->
    scores``), for :func:`mlirkit.eval.evaluate`'s ``precomputed``; empty when the metrics have no MRC."""
    from mlirkit.eval.mrc import mrc_from_scores
    from mlirkit.eval.metrics import parse_metric

    metrics = [m for m in config.metrics if parse_metric(m).kind == "mrc"]
    queries = coll.topics.queries
    groups = coll.topics.query_groups or {}
    q_ids, q_langs = [q.query_id for q in queries], [q.lang for q in queries]
    if not groups:
        return {}
    return {m: {run: mrc_from_scores(f, q_ids, q_langs, groups, coll.doc_ids, parse_metric(m).k)
                for run, f in scorers.items()} for m in metrics}


def _evaluate(config: BenchmarkConfig, coll: Collection, runs: Mapping[str, Any], *, significance: bool,
              metrics: list[str] | None = None, baseline: str = "base",
              precomputed: Mapping[str, Any] | None = None) -> Any:
    from mlirkit.eval import evaluate
    from mlirkit.eval.metrics import parse_metric

    sp = coll.topics
    metrics = list(metrics or config.metrics)
    if not precomputed:  # MRC comes from every score, never from the runs (they hold the top k)
        metrics = [m for m in metrics if parse_metric(m).kind != "mrc"]
    return evaluate(sp.qrels, runs, metrics, doc_langs=dict(zip(coll.doc_ids, coll.doc_langs)),
                    query_langs=sp.query_langs, significance="fisher" if significance else None,
                    baseline=baseline if significance else None, correction="holm",
                    n_permutations=config.n_permutations, seed=config.seed, k=config.k,
                    query_groups=sp.query_groups, precomputed=precomputed)


def by_query_language_tests(result: Any, coll: Collection, config: BenchmarkConfig) -> dict[str, list]:
    """Per query language: each system against base on ``config.select_metric``, over that language's
    queries (paired randomization test, unit = question, Holm over the systems)."""
    from mlirkit.eval.significance import compare_runs

    langs = coll.topics.query_langs
    groups = coll.topics.query_groups
    out = {}
    for lang in sorted(set(langs.values())):
        per_query = {run: {config.select_metric: {q: v for q, v in scores[config.select_metric].items()
                                                  if langs.get(q) == lang}}
                     for run, scores in result.per_query.items()}
        out[lang] = compare_runs(per_query, [config.select_metric], test="fisher", baseline="base", correction="holm",
                                 n_permutations=config.n_permutations, seed=config.seed,
                                 query_groups=None if groups is None else {q: g for q, g in groups.items()
                                                                           if langs.get(q) == lang})
    return out


def _plots(res: XquadEncoderResult, config: BenchmarkConfig, coll: Collection, runs: Mapping[str, Any],
           root: Path, out: Path, part: str = XQUAD) -> list[str]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from mlirkit.eval.plots import plot_alpha_curves, plot_language_mix

    root.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    metric = config.select_metric
    baselines = {r: {metric: res.result.value(r, metric)} for r in res.main_runs if not r.startswith("shift-")}
    for source, curve in res.sweep.items():
        files += plot_alpha_curves({a: {metric: v} for a, v in curve.items()}, root / f"{part}-alpha-{source}",
                                   [metric], baselines,
                                   title=f"{res.name}: {LABELS[part]}, SHIFT ({source}); label-free alpha "
                                         f"{res.chosen_alpha[source]:g}", chosen=res.chosen_alpha[source])
    files += plot_language_mix({r: runs[r] for r in res.main_runs}, dict(zip(coll.doc_ids, coll.doc_langs)),
                               coll.topics.query_langs, config.k, root / f"{part}-language-mix",
                               qrels=coll.topics.qrels, title=f"{res.name}: {LABELS[part]}, languages of the top {config.k}")
    return [str(Path(f).relative_to(out)) for f in files]


# ---------------------------------------------------------------------------- LAReQA
def run_lareqa(name: str, encoder: Any, config: BenchmarkConfig, coll: Collection, pairs: Mapping[str, ParallelSet],
               cache: EmbeddingCache, variant: str, timer: Timer | None = None) -> LareqaResult:
    """Base and SHIFT (Tatoeba and corpus vectors, label-free alpha) on LAReQA's sentence pool: AP of every
    query over the whole ranking, tests against base by question."""
    from mlirkit.benchmark.average_precision import average_precision, id_ranks
    from mlirkit.eval.significance import compare_runs
    timer = timer or Timer()
    docs, queries = coll.docs, coll.topics.queries
    tatoeba = pairs[XQUAD_BASELINE_SOURCE]
    with timer("encode sentences, queries and pairs"):
        doc_embs = cache.embed(encoder, name, f"lareqa-corpus{variant}", "doc", [d.text for d in docs],
                               coll.doc_langs, reuse=True)
        query_embs = cache.embed(encoder, name, f"lareqa-queries{variant}", "query", [q.text for q in queries],
                                 [q.lang for q in queries], reuse=True)
        embs = cache.embed(encoder, name, f"lareqa-pairs-{XQUAD_BASELINE_SOURCE}{variant}", "doc", tatoeba.texts,
                           tatoeba.langs, reuse=True)
    with timer("fit tatoeba and corpus"), compute_threads(config):
        vectors = {XQUAD_BASELINE_SOURCE: fit_transforms(tatoeba, embs, encoder.fingerprint, config)["shift"],
                   CORPUS: corpus_shift(doc_embs, coll, config.source_lang, encoder.fingerprint)}
    with timer("choose alpha (label-free)"), compute_threads(config):
        shifts, selections = {}, {}
        for source, t in vectors.items():
            shifts[source], selections[source] = _shift_and_alpha(t, doc_embs, coll)
    chosen = {s: sel.alpha for s, sel in selections.items()}
    row = {d: i for i, d in enumerate(coll.doc_ids)}
    qids = [q.query_id for q in queries]
    q_langs = [q.lang for q in queries]
    relevant = [np.array(sorted(row[d] for d, r in coll.topics.qrels[q].items() if r > 0 and d in row), dtype=np.intp)
                for q in qids]
    ranks = id_ranks(coll.doc_ids)
    base_docs = doc_embs / np.linalg.norm(doc_embs, axis=1, keepdims=True)
    systems = ["base", *(Condition("shift", s, chosen[s]).name for s in shifts)]
    ap: dict[str, np.ndarray] = {s: np.empty(len(qids)) for s in systems}
    with timer("retrieve (AP over the whole ranking)"), compute_threads(config):
        for a in range(0, len(qids), QUERY_BLOCK):
            block = slice(a, a + QUERY_BLOCK)
            ap["base"][block] = average_precision(query_embs[block] @ base_docs.T, relevant[block], ranks)
            for source, shift in shifts.items():
                scores = shift.scores(query_embs[block], q_langs[block], chosen[source])
                ap[Condition("shift", source, chosen[source]).name][block] = average_precision(scores, relevant[block],
                                                                                              ranks)
    per_query = {s: {MAP: dict(zip(qids, v.tolist()))} for s, v in ap.items()}
    scorers = {"base": lambda rows: query_embs[rows] @ base_docs.T,
               **{Condition("shift", s, chosen[s]).name: _shift_scores(shift, query_embs, q_langs, chosen[s])
                  for s, shift in shifts.items()}}
    with timer("evaluate (PEER, MRC, tests)"), compute_threads(config):
        fairness = _fairness(config, coll, scorers, ranks)
        tests = compare_runs(per_query, [MAP], test="fisher", baseline="base", correction="holm",
                             n_permutations=config.n_permutations, seed=config.seed,
                             query_groups=coll.topics.query_groups)
    return LareqaResult(coll.name, systems, chosen, {s: v[MAP] for s, v in per_query.items()}, dict(zip(qids, q_langs)),
                        tests, {s: sel.as_dict() for s, sel in selections.items()}, fairness)


def _fairness(config: BenchmarkConfig, coll: Collection, scorers: Mapping[str, Any], id_rank: np.ndarray) -> Any:
    """PEER (on each system's top k, taken from every score) and MRC (from every score) of a pool searched
    without runs, evaluated with the grouped tests against base; None when the metrics have neither."""
    from mlirkit.eval.metrics import parse_metric
    from mlirkit.base.top_k import top_k_columns

    metrics = [m for m in config.metrics if parse_metric(m).kind in ("peer", "mrc")]
    if not metrics:
        return None
    qids, doc_ids = [q.query_id for q in coll.topics.queries], coll.doc_ids
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for run, f in scorers.items():
        runs[run] = {}
        for a in range(0, len(qids), QUERY_BLOCK):
            rows = np.arange(a, min(a + QUERY_BLOCK, len(qids)))
            scores = f(rows)
            top = top_k_columns(scores, config.k, id_rank)
            for i, cols in zip(rows, top):
                runs[run][qids[i]] = {doc_ids[c]: float(scores[i - a, c]) for c in cols}
    return _evaluate(config, coll, runs, significance=True, metrics=metrics, precomputed=mrc_by_run(config, scorers, coll))


__all__ = ["Collection", "LareqaResult", "MLQA", "XquadData", "XquadEncoderResult", "corpus_shift", "load_collection",
           "load_pair_sets", "load_xquad", "mrc_by_run", "run_xquad", "shift_run", "shift_sweep_runs"]
