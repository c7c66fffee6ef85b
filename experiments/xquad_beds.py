"""Beds for the label-free alpha study: cached embeddings of XQuAD-R, its partly parallel variant and the
DDTP beds, language vectors (Tatoeba pairs, the bundled pair sets, corpus-fitted), and exact scoring with the
query-time shift (``mlirkit.search --query-shift cosine``: each query with its own language's re-based
shift, from one index).

Embeddings come from :class:`mlirkit.benchmark.cache.EmbeddingCache` (``--cache-dir``; the first run encodes,
with ``threads`` BLAS/torch threads). Scores are :class:`mlirkit.search.query_shift.QueryTimeShift`'s; the
metrics are nDCG@20 (binary gains, as ranx) and recall@20 by document language (as
:func:`mlirkit.eval.evaluate`'s breakdown), per query, then macro-averaged over query languages;
:meth:`Bed.check_against_mlirkit_eval` checks the base run against :func:`mlirkit.eval.evaluate`.
Question groups (the translations of one question, or of one DDTP description) are what the grouped
tests resample and flip together.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

#: bed name -> (ir_datasets id of the bed's docs/queries/qrels, pooled id whose embedding cache it reads)
BEDS = {
    "xquad-r": ("mlirkit/xquad-r/multi", "mlirkit/xquad-r/multi"),
    "xquad-r-partial": ("mlirkit/xquad-r-partial/multi", "mlirkit/xquad-r/multi"),
    "ddtp": ("mlirkit/ddtp/multi/test", "mlirkit/ddtp/multi"),
    "ddtp-sorted": ("mlirkit/ddtp-nonparallel-sorted/multi/test", "mlirkit/ddtp/multi"),
}
#: cache labels of the pooled collections (kept stable: they name the cache entries)
CACHE_LABELS = {"mlirkit/xquad-r/multi": "xquad-r", "mlirkit/ddtp/multi": "ddtp"}
VECTORS = ("tatoeba", "bundled", "corpus")
K = 20


@dataclass
class Bed:
    """One bed: raw document embeddings, normalised query embeddings, relevance, question groups."""

    name: str
    docs: np.ndarray  # (n, d) untransformed
    doc_ids: list[str]
    doc_langs: list[str]
    queries: np.ndarray  # (m, d) L2-normalised
    query_ids: list[str]
    query_langs: list[str]
    groups: np.ndarray  # (m,) translations of one question share a value
    rel: list[np.ndarray]  # relevant document rows per query
    encoder_name: str
    fingerprint: dict[str, Any]

    def __post_init__(self) -> None:
        from scipy.sparse import csr_matrix

        rows = np.concatenate([np.full(len(r), i) for i, r in enumerate(self.rel)])
        self._relevant = csr_matrix((np.ones(len(rows), dtype=bool), (rows, np.concatenate(self.rel))),
                                    shape=(len(self.rel), len(self.docs)))
        self.languages = sorted(set(self.doc_langs))
        self._doc_code = np.array([self.languages.index(la) for la in self.doc_langs])
        onehot = np.zeros((len(self.docs), len(self.languages)))
        onehot[np.arange(len(self.docs)), self._doc_code] = 1
        self._n_rel_lang = np.asarray(self._relevant.astype(float) @ onehot)  # (m, L)
        self._n_rel = np.array([len(r) for r in self.rel])
        self.query_languages = sorted(set(self.query_langs))

    # ------------------------------------------------------------------ scoring
    def shift(self, transform: Any) -> Any:
        from mlirkit.search.query_shift import QueryTimeShift

        return QueryTimeShift(self.docs, self.doc_langs, transform, missing="keep")

    def top(self, shift: Any | None, alpha: Any, k: int = K) -> np.ndarray:
        """(m, k) document rows of each query's top k, ties by row (shift None: the base run)."""
        base = None if shift is not None else self.docs / np.linalg.norm(self.docs, axis=1, keepdims=True)
        out = np.empty((len(self.queries), k), dtype=np.intp)
        for a in range(0, len(self.queries), 2048):
            b = min(a + 2048, len(self.queries))
            s = self.queries[a:b] @ base.T if shift is None else shift.scores(self.queries[a:b],
                                                                              self.query_langs[a:b], alpha)
            part = np.argpartition(-s, k - 1, axis=1)[:, :k]
            order = np.lexsort((part, -np.take_along_axis(s, part, axis=1)), axis=1)
            out[a:b] = np.take_along_axis(part, order, axis=1)
        return out

    def per_query(self, top: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """nDCG@k of every query and ``{doc language: recall@k per query}`` (NaN: no relevant document there)."""
        k = top.shape[1]
        disc = 1 / np.log2(np.arange(k) + 2)
        hit = np.asarray(self._relevant[np.repeat(np.arange(len(top)), k), top.ravel()]).reshape(top.shape)
        ndcg = (hit * disc).sum(axis=1) / np.cumsum(disc)[np.minimum(self._n_rel, k) - 1]
        codes = self._doc_code[top]
        recall = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for c, la in enumerate(self.languages):
                n = self._n_rel_lang[:, c]
                recall[la] = np.where(n > 0, (hit & (codes == c)).sum(axis=1) / n, np.nan)
        return ndcg, recall

    def macro(self, per_query: np.ndarray) -> float:
        """Mean over query languages of a per-query figure."""
        ql = np.asarray(self.query_langs)
        return float(np.mean([np.nanmean(per_query[ql == la]) for la in self.query_languages]))

    def run(self, shift: Any | None, alpha: Any) -> dict[str, Any]:
        ndcg, recall = self.per_query(self.top(shift, alpha))
        ql = np.asarray(self.query_langs)
        return {"ndcg": self.macro(ndcg), "per_query": ndcg, "recall_per_query": recall,
                "by_query_lang": {la: float(ndcg[ql == la].mean()) for la in self.query_languages},
                "recall_by_doc_lang": {la: float(np.nanmean(v)) for la, v in recall.items()}}

    def sweep(self, transform: Any, grid: Sequence[float]) -> dict[float, float]:
        shift = self.shift(transform)
        return {a: self.run(shift, a)["ndcg"] for a in grid}

    def check_against_mlirkit_eval(self, qrels_id: str) -> float:
        """The base run's nDCG@20 here equals :func:`mlirkit.eval.evaluate`'s (micro mean); returns it."""
        from mlirkit.eval import evaluate
        from mlirkit.io.qrels import read_qrels

        top = self.top(None, 0.0)
        run = {q: {self.doc_ids[j]: float(K - p) for p, j in enumerate(t)} for q, t in zip(self.query_ids, top)}
        qrels = {q: r for q, r in read_qrels(qrels_id).items() if q in set(self.query_ids)}
        value = evaluate(qrels, {"base": run}, [f"ndcg@{K}"], significance=None).value("base", f"ndcg@{K}")
        mine = float(self.per_query(top)[0].mean())
        assert abs(value - mine) < 1e-9, (value, mine)
        return mine


def load_bed(name: str, encoder_name: str, cache_dir: str, threads: int = 1) -> Bed:
    """Bed ``name`` of :data:`BEDS` with ``encoder_name``'s embeddings (encoded once into ``cache_dir``)."""
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    bed_id, pooled_id = BEDS[name]
    encoder = _encoder(encoder_name, threads)
    pooled_docs = list(read_corpus(pooled_id))
    pooled_queries = read_topics(pooled_id)
    label = CACHE_LABELS[pooled_id]
    D = embed(encoder, encoder_name, cache_dir, f"{label}-corpus", "doc", pooled_docs)
    Q = embed(encoder, encoder_name, cache_dir, f"{label}-queries", "query", pooled_queries)
    drow = {d.doc_id: i for i, d in enumerate(pooled_docs)}
    qrow = {q.query_id: i for i, q in enumerate(pooled_queries)}
    docs = list(read_corpus(bed_id)) if bed_id != pooled_id else pooled_docs
    queries = read_topics(bed_id) if bed_id != pooled_id else pooled_queries
    qrels = read_qrels(bed_id)
    row = {d.doc_id: i for i, d in enumerate(docs)}
    rel = [np.array(sorted(row[d] for d, r in qrels.get(q.query_id, {}).items() if r > 0 and d in row), dtype=np.intp)
           for q in queries]
    keep = [i for i, r in enumerate(rel) if len(r)]
    queries = [queries[i] for i in keep]
    group_of: dict[str, int] = {}
    groups = np.array([group_of.setdefault(question_group(q.query_id), len(group_of)) for q in queries])
    Qb = Q[[qrow[q.query_id] for q in queries]]
    return Bed(name, D[[drow[d.doc_id] for d in docs]], [d.doc_id for d in docs], [d.lang for d in docs],
               Qb / np.linalg.norm(Qb, axis=1, keepdims=True), [q.query_id for q in queries],
               [q.lang for q in queries], groups, [rel[i] for i in keep], encoder_name, encoder.fingerprint)


def load_main_job_ddtp(encoder_name: str, cache_dir: str, threads: int = 1) -> Bed:
    """DDTP as the main job (``python -m mlirkit.benchmark``) searches it: its pooled corpus (every description of
    both splits) and its encoder options (e5-small: ``max_length`` 256), with the test queries in every language
    (``mlirkit/ddtp/multi/test``, the main job's "test translations" for MRC), each a group of one description's
    translations; embeddings read from the main job's cache entries (the same labels), encoded only if absent."""
    from mlirkit.benchmark.config import DEFAULT_BENCHMARK, DEFAULT_ENCODER_OPTIONS
    from mlirkit.benchmark.data import load_benchmark
    from mlirkit.encoders import load_encoder
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    data = load_benchmark(DEFAULT_BENCHMARK, ("en",))
    wanted = set((data.splits["test"].query_groups or {}).values())
    source = f"{DEFAULT_BENCHMARK}/multi/test"
    queries = [q for q in read_topics(source) if getattr(q, "group_id", None) in wanted]
    options = {k: v for k, v in DEFAULT_ENCODER_OPTIONS.get(encoder_name, {}).items() if k != "backend"}
    encoder = load_encoder(encoder_name, threads=threads, **options)
    docs = data.docs
    D = embed(encoder, encoder_name, cache_dir, f"{data.name}-corpus", "doc", docs)
    Q = embed(encoder, encoder_name, cache_dir, f"{data.name}-test-translations", "query", queries)
    qrels = read_qrels(source)
    row = {d.doc_id: i for i, d in enumerate(docs)}
    rel = [np.array(sorted(row[d] for d, r in qrels.get(q.query_id, {}).items() if r > 0 and d in row), dtype=np.intp)
           for q in queries]
    keep = [i for i, r in enumerate(rel) if len(r)]
    group_of: dict[str, int] = {}
    groups = np.array([group_of.setdefault(queries[i].group_id, len(group_of)) for i in keep])
    Qb = Q[keep]
    return Bed("ddtp-main-job", D, [d.doc_id for d in docs], [d.lang for d in docs],
               Qb / np.linalg.norm(Qb, axis=1, keepdims=True), [queries[i].query_id for i in keep],
               [queries[i].lang for i in keep], groups, [rel[i] for i in keep], encoder_name, encoder.fingerprint)


def question_group(query_id: str) -> str:
    """The question a query translates: XQuAD-R ``{lang}_{squad id}``, DDTP ``q/{package}/{lang}``."""
    return query_id.split("/")[1] if query_id.startswith("q/") else query_id.split("_", 1)[1]


_ENCODERS: dict[tuple[str, int], Any] = {}


def _encoder(name: str, threads: int) -> Any:
    from mlirkit.encoders import load_encoder

    if (name, threads) not in _ENCODERS:
        _ENCODERS[name, threads] = load_encoder(name, threads=threads)
    return _ENCODERS[name, threads]


def embed(encoder: Any, encoder_name: str, cache_dir: str, label: str, side: str, records: Sequence[Any],
          langs: Sequence[str] | None = None) -> np.ndarray:
    """Cached embeddings of documents / queries (records with ``text`` and ``lang``) or of plain texts."""
    from mlirkit.benchmark.cache import EmbeddingCache

    texts = [getattr(r, "text", r) for r in records]
    langs = [r.lang for r in records] if langs is None else list(langs)
    return EmbeddingCache(cache_dir, show_progress=True).embed(encoder, encoder_name, label, side, texts, langs)


# ---------------------------------------------------------------------- language vectors
def tatoeba_shift(bed: Bed, cache_dir: str, threads: int = 1) -> Any:
    """SHIFT vectors from every Tatoeba pair (``mlirkit/parallel/tatoeba``, up to 1,000 per language) of the
    bed's non-English languages: ``V_l = mean_i (f(l_i) - f(en_i))`` over l's own pairs (the English side
    differs per language)."""
    from mlirkit.datasets import parallel_rows

    targets = [la for la in bed.languages if la != "en"]
    pairs: dict[str, list[tuple[str, str]]] = {la: [] for la in targets}
    group: dict[str, dict[str, str]] = {}
    for gid, lang, text in parallel_rows("mlirkit/parallel/tatoeba"):
        group.setdefault(gid, {})[lang] = text
    for gid, texts in group.items():
        lang = gid.split("/")[0]
        if lang in pairs and "en" in texts and lang in texts:
            pairs[lang].append((texts[lang], texts["en"]))
    texts, langs = [], []
    for la in targets:  # target texts then their English sides, language by language (the cache's order)
        texts += [t for t, _ in pairs[la]] + [e for _, e in pairs[la]]
        langs += [la] * len(pairs[la]) + ["en"] * len(pairs[la])
    label = "tatoeba" if targets == ["ar", "de", "es", "hi", "ru", "vi", "zh"] else "tatoeba-" + "".join(targets)
    E = embed(_encoder(bed.encoder_name, threads), bed.encoder_name, cache_dir, label, "doc", texts, langs)
    alignment, start = {}, 0
    for la in targets:
        n = len(pairs[la])
        alignment[la] = (list(range(start, start + n)), list(range(start + n, start + 2 * n)))
        start += 2 * n
    return shift_from_alignment(E, alignment, bed.fingerprint, {"source": "mlirkit/parallel/tatoeba"})


def shift_from_alignment(embs: np.ndarray, alignment: dict[str, tuple[list[int], list[int]]],
                         fingerprint: dict[str, Any], meta: dict[str, Any]) -> Any:
    """English-source SHIFT vectors from ``{lang: (target rows, source rows)}`` of ``embs``: each aligned pair a group."""
    from mlirkit.transforms import ShiftTransform

    rows, langs, groups = [], [], []
    for la, (t, s) in alignment.items():
        rows += [*s, *t]
        langs += ["en"] * len(s) + [la] * len(t)
        groups += [(la, i) for i in range(len(s))] * 2
    out = ShiftTransform("en").fit(embs[rows], langs, groups)
    out.encoder = dict(fingerprint)
    out.meta.update(meta)
    return out


def bundled_shift(bed: Bed, cache_dir: str, threads: int = 1, pairs_per_lang: int = 200) -> Any:
    """SHIFT vectors from the bundled pair sets (libreoffice-help + gettext, ``pairs_per_lang`` pairs per
    language shared evenly, as ``python -m mlirkit.benchmark`` fits its other-domain condition); languages
    they lack get no vector here (see :func:`mlirkit.transforms.hybrid.fill_missing`)."""
    from mlirkit.benchmark.config import DEFAULT_FIT_SOURCES
    from mlirkit.benchmark.data import load_parallel

    targets = [la for la in bed.languages if la != "en"]
    ps = load_parallel("ood", DEFAULT_FIT_SOURCES["ood"], source_lang="en", target_langs=targets,
                       pairs_per_lang=pairs_per_lang)
    label = "parallel-ood-" + ("xq" if bed.name.startswith("xquad") else "ddtp")
    E = embed(_encoder(bed.encoder_name, threads), bed.encoder_name, cache_dir, label, "doc", ps.texts, ps.langs)
    return shift_from_alignment(E, ps.alignment, bed.fingerprint, {"source": "bundled", "pairs": ps.pairs})


def corpus_shift(bed: Bed) -> Any:
    """Corpus-fitted vectors (``shift fit --from-index --vectors corpus --min-docs 15``): mean(l docs) -
    mean(en docs); 15 documents per language at least, as the earlier DDTP measurements (the topic-skewed
    bed's test corpus has 19 Chinese documents)."""
    from experiments.corpus_variants import fit_corpus_shift

    return fit_corpus_shift(bed.docs, bed.doc_langs, "en", encoder=bed.fingerprint, min_docs=15)


def vectors(bed: Bed, kind: str, cache_dir: str, threads: int = 1, missing: str = "corpus") -> Any:
    """Vectors ``kind`` of :data:`VECTORS` for ``bed``, the languages they lack handled by ``missing``."""
    from mlirkit.transforms.hybrid import fill_missing_from_corpus

    t = {"tatoeba": lambda: tatoeba_shift(bed, cache_dir, threads), "bundled": lambda: bundled_shift(bed, cache_dir, threads),
         "corpus": lambda: corpus_shift(bed)}[kind]()
    return fill_missing_from_corpus(t, bed.docs, bed.doc_langs, policy=missing)


# ---------------------------------------------------------------------- statistics
def grouped_randomization(a: np.ndarray, b: np.ndarray, groups: np.ndarray, n: int = 10000,
                          seed: int = 0) -> tuple[float, str]:
    """``(mean difference over queries, two-sided p as printed)`` of the paired randomization test whose unit
    is a question group (:func:`mlirkit.eval.significance.randomization_test` on the groups' mean
    differences; :func:`~mlirkit.eval.significance.format_p`: ``< 0.0001`` for the smallest p of 10,000)."""
    from mlirkit.eval.significance import format_p, randomization_test, unit_means

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    result = randomization_test(unit_means(d, [str(g) for g in groups]), n, seed)
    return float(d.mean()), format_p(result.p, result.resolution)


def grouped_bootstrap(values: np.ndarray, groups: np.ndarray, query_langs: Sequence[str], n: int = 2000,
                      seed: int = 0) -> np.ndarray:
    """``n`` bootstrap replicates of the macro mean over query languages of per-query ``values`` ((m,) or
    (m, c) columns), resampling question groups with replacement (a group keeps all its translations)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[:, None] if values.ndim == 1 else values
    _, inv = np.unique(groups, return_inverse=True)
    ql = np.asarray(query_langs)
    langs = sorted(set(query_langs))
    G = inv.max() + 1
    sums = np.stack([np.stack([np.bincount(inv[ql == la], weights=values[ql == la, c], minlength=G)
                               for c in range(values.shape[1])], axis=1) for la in langs])  # (L, G, c)
    counts = np.stack([np.bincount(inv[ql == la], minlength=G) for la in langs])  # (L, G)
    rng = np.random.default_rng(seed)
    out = np.empty((n, values.shape[1]))
    for i in range(n):
        w = np.bincount(rng.integers(0, G, size=G), minlength=G)  # how often each group is drawn
        out[i] = np.mean((w[None, :, None] * sums).sum(axis=1) / (w[None, :] * counts).sum(axis=1)[:, None], axis=0)
    return out
