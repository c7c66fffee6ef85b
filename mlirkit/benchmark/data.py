"""The benchmark's inputs: the pooled corpus, dev/test queries with qrels, and translation pairs.

- Corpus and queries come from ``{benchmark}/{query_lang}/{split}`` (ir_datasets ids registered by
  :mod:`mlirkit.datasets`; the corpus is the same pooled collection in every split), read with
  :func:`mlirkit.io.corpus.read_corpus` / :func:`mlirkit.io.topics.read_topics`.
- A *group* is the set of relevant documents of a query (every language version of one description);
  dev and test split the groups, so no group is on both sides.
- ``--languages`` keeps only documents of those languages (qrels follow; a query left without a
  relevant document is dropped and counted). ``--quick`` keeps ``quick_groups`` groups, dev and test in
  the benchmark's proportion, and only their documents.
- Translation pairs for fitting (:class:`ParallelSet`): for each target language, up to
  ``pairs_per_lang`` groups having both the source-language and the target-language text, shared evenly
  by the parallel sets of the condition; groups are visited in a fixed pseudo-random order (SHA-1 of the
  group id) so a sample spreads over the whole file and every language reuses the same source texts.
"""
from __future__ import annotations

import hashlib
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.io.records import Doc, ParallelQuery, Query

logger = logging.getLogger(__name__)

SPLITS = ("dev", "test")
Rows = Callable[[str], Iterable[tuple[str, str, str]]]


@dataclass
class Split:
    """Queries of one split with their qrels (``{qid: {docid: rel}}``)."""

    name: str
    queries: list[Query | ParallelQuery]
    qrels: dict[str, dict[str, int]]

    @property
    def query_langs(self) -> dict[str, str]:
        return {q.query_id: q.lang for q in self.queries}

    @property
    def query_groups(self) -> dict[str, str] | None:
        """``{qid: group}`` when the topics carry groups (the translations of one description), else None:
        the unit of the paired tests (:mod:`mlirkit.eval.query_groups`)."""
        from mlirkit.eval.query_groups import topic_groups

        return topic_groups(self.queries)


@dataclass
class ParallelSet:
    """Unique ``(lang, text)`` rows to encode plus, per target language, which rows are translations of
    which source rows. ``pairs[lang]`` counts the pairs, ``by_source[set][lang]`` where they come from."""

    name: str
    sources: tuple[str, ...]
    source_lang: str
    texts: list[str] = field(default_factory=list)
    langs: list[str] = field(default_factory=list)
    #: target language -> (target rows, source rows), aligned
    alignment: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    by_source: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def pairs(self) -> dict[str, int]:
        return {lang: len(t) for lang, (t, _) in sorted(self.alignment.items())}

    def rows_of(self, lang: str) -> list[int]:
        """Rows used for ``lang``: its target rows, or for the source language every source row used."""
        if lang == self.source_lang:
            return sorted({s for _, src in self.alignment.values() for s in src})
        return list(self.alignment[lang][0]) if lang in self.alignment else []


@dataclass
class BenchmarkData:
    name: str
    docs: list[Doc]
    splits: dict[str, Split]
    notes: dict = field(default_factory=dict)

    @property
    def doc_langs(self) -> dict[str, str]:
        return {d.doc_id: d.lang for d in self.docs}

    @property
    def languages(self) -> list[str]:
        return sorted({d.lang for d in self.docs})

    def summary(self) -> dict:
        return {
            "benchmark": self.name,
            "documents": len(self.docs),
            "documents_per_language": dict(sorted(Counter(d.lang for d in self.docs).items())),
            "queries": {s: len(sp.queries) for s, sp in self.splits.items()},
            "query_languages": {s: dict(sorted(Counter(q.lang for q in sp.queries).items()))
                                for s, sp in self.splits.items()},
            "groups": {s: len({_group_key(r) for r in sp.qrels.values()}) for s, sp in self.splits.items()},
            **self.notes,
        }


def _hash_order(key: str) -> str:
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def _group_key(rels: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(sorted(d for d, r in rels.items() if r > 0))


def load_benchmark(benchmark: str, query_langs: Sequence[str], *, langs: Sequence[str] | None = None,
                   quick_groups: int | None = None) -> BenchmarkData:
    """Read corpus, dev/test queries and qrels of ``benchmark`` (see module docstring)."""
    import mlirkit.datasets  # noqa: F401  (registers the ids)
    from mlirkit.datasets import DATASETS
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.qrels import read_qrels
    from mlirkit.io.topics import read_topics

    splits: dict[str, Split] = {s: Split(s, [], {}) for s in SPLITS}
    corpus_id = None
    for lang in query_langs:
        for split in SPLITS:
            dataset_id = f"{benchmark}/{lang}/{split}"
            if dataset_id not in DATASETS:
                from mlirkit.base.registry import did_you_mean

                raise MlirkitError(f"no dataset {dataset_id!r} (query language {lang!r} of {benchmark})"
                                   + did_you_mean(dataset_id, DATASETS.names()))
            corpus_id = corpus_id or dataset_id
            queries = read_topics(dataset_id)
            splits[split].queries.extend(queries)
            splits[split].qrels.update(read_qrels(dataset_id))
    docs = list(read_corpus(corpus_id))
    return select(BenchmarkData(benchmark, docs, splits), langs=langs, quick_groups=quick_groups)


def select(data: BenchmarkData, *, langs: Sequence[str] | None = None,
           quick_groups: int | None = None) -> BenchmarkData:
    """Keep documents of ``langs`` and (quick) ``quick_groups`` groups; see module docstring."""
    docs, splits, notes = data.docs, dict(data.splits), dict(data.notes)
    if langs is not None:
        from mlirkit.base.langs import require_langs

        require_langs(langs, {d.lang for d in docs}, "documents", f" in {data.name}")
        keep = set(langs)
        docs = [d for d in docs if d.lang in keep]
        kept_ids = {d.doc_id for d in docs}
        dropped = {}
        for name, sp in splits.items():
            qrels = {q: {d: r for d, r in rels.items() if d in kept_ids} for q, rels in sp.qrels.items()}
            qrels = {q: rels for q, rels in qrels.items() if any(r > 0 for r in rels.values())}
            queries = [q for q in sp.queries if q.query_id in qrels]
            dropped[name] = len(sp.queries) - len(queries)
            splits[name] = Split(name, queries, qrels)
        notes["languages"] = sorted(keep)
        notes["queries_dropped_without_relevant"] = dropped
    if quick_groups is not None:
        groups = {name: sorted({_group_key(r) for r in sp.qrels.values()}, key=lambda g: _hash_order("|".join(g)))
                  for name, sp in splits.items()}
        total = sum(len(g) for g in groups.values())
        if total == 0:
            raise MlirkitError(f"{data.name}: no query groups")
        wanted: dict[str, int] = {}
        for name, g in groups.items():
            share = round(quick_groups * len(g) / total)
            wanted[name] = min(len(g), max(1, share)) if g else 0
        for name, sp in splits.items():
            chosen = set(groups[name][:wanted[name]])
            qrels = {q: r for q, r in sp.qrels.items() if _group_key(r) in chosen}
            splits[name] = Split(name, [q for q in sp.queries if q.query_id in qrels], qrels)
        needed = {d for sp in splits.values() for rels in sp.qrels.values() for d in rels}
        docs = [d for d in docs if d.doc_id in needed]
        notes["quick_groups"] = wanted
    for name, sp in splits.items():
        if not sp.queries:
            raise MlirkitError(f"{data.name}: no {name} queries left")
    if not docs:
        raise MlirkitError(f"{data.name}: no documents left")
    return BenchmarkData(data.name, docs, splits, notes)


def _groups(rows: Iterable[tuple[str, str, str]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for gid, lang, text in rows:
        out[gid][lang] = text
    return out


def load_parallel(name: str, sources: Sequence[str], *, source_lang: str, target_langs: Sequence[str],
                  pairs_per_lang: int, rows: Rows | None = None) -> ParallelSet:
    """Pairs (source language, each target language) from the parallel ``sources`` (see module docstring).

    ``rows(source)`` yields ``(group_id, lang, text)``; default :func:`mlirkit.datasets.parallel_rows`.
    """
    if rows is None:
        from mlirkit.datasets import parallel_rows as rows
    by_source = {s: _groups(rows(s)) for s in sources}
    out = ParallelSet(name, tuple(sources), source_lang)
    index: dict[tuple[str, str], int] = {}

    def row(lang: str, text: str) -> int:
        key = (lang, text)
        if key not in index:
            index[key] = len(out.texts)
            out.texts.append(text)
            out.langs.append(lang)
        return index[key]

    orders = {s: sorted(g, key=_hash_order) for s, g in by_source.items()}
    for lang in target_langs:
        if lang == source_lang:
            continue
        available = {s: [gid for gid in orders[s] if source_lang in by_source[s][gid] and lang in by_source[s][gid]]
                     for s in sources}
        remaining = pairs_per_lang
        tgt_rows: list[int] = []
        src_rows: list[int] = []
        # sources with fewer pairs first; each takes an even share of what is still wanted
        ordered = sorted((s for s in sources if available[s]), key=lambda s: len(available[s]))
        for i, s in enumerate(ordered):
            take = min(len(available[s]), remaining // (len(ordered) - i))
            for gid in available[s][:take]:
                texts = by_source[s][gid]
                src_rows.append(row(source_lang, texts[source_lang]))
                tgt_rows.append(row(lang, texts[lang]))
            if take:
                out.by_source.setdefault(s, {})[lang] = take
            remaining -= take
        if tgt_rows:
            out.alignment[lang] = (tgt_rows, src_rows)
        else:
            logger.warning("%s: no %s-%s pairs in %s: %s gets no vector fitted on pairs", name, source_lang,
                           lang, ", ".join(sources), lang)
    if not out.alignment:
        raise MlirkitError(f"{name}: no translation pairs for {', '.join(t for t in target_langs if t != source_lang)} "
                           f"in {', '.join(sources)}")
    return out


__all__ = ["BenchmarkData", "ParallelSet", "Rows", "Split", "load_benchmark", "load_parallel", "select"]
