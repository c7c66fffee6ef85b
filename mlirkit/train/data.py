"""Training data for DCL: English retrieval triples, a parallel corpus P, a monolingual corpus Q,
and a streaming batch composer that mixes them.

Sources (each a path or id; readers stream and fail naming file and line):

- retrieval triples: local JSONL(.gz) ``{"query", "positive", "negatives": [...]}``, or an ir_datasets id
  with docpairs (e.g. ``msmarco-passage/train/triples-small``; query and passage texts are looked up).
- parallel corpus P: aligned JSONL(.gz) with ``id``, ``lang`` and a text field (records of one id
  adjacent, as in ../shared/data), paired pivot -> every other language; a TSV in WikiMatrix style
  (``[score\\t]src\\ttgt``, languages from the file name ``*.<src>-<tgt>.tsv`` or given); or a dataset id
  resolved by ``mlirkit.datasets.parallel_rows(id)``. An optional Pharaoh file gives word alignments
  line by line.
- monolingual Q: JSONL(.gz) ``{"text", "lang"}``.

:class:`BatchComposer` yields :class:`Batch` objects with ``n_retrieval`` retrieval examples, ``n_parallel``
parallel pairs and ``n_monolingual`` monolingual sentences, each stream passing through a seeded
shuffle buffer and restarting at its end (epochs); with ``world_size > 1`` process ``rank`` keeps every
``world_size``-th item of each stream. Everything is deterministic given the seed, so a resumed run
regenerates (and skips) the batches it has already seen.
"""
from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.io.files import open_text, read_jsonl_objects
from mlirkit.io.sources import SourceKind, load_ir_dataset, source_kind
from mlirkit.train.alignment import Alignment, parse_pharaoh


@dataclass(frozen=True)
class RetrievalExample:
    query: str
    positive: str
    negatives: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParallelPair:
    src: str
    tgt: str
    src_lang: str
    tgt_lang: str
    alignment: tuple[tuple[int, int], ...] | None = None  # word-level Pharaoh pairs, if given


@dataclass(frozen=True)
class MonoSentence:
    text: str
    lang: str


@dataclass
class Batch:
    retrieval: list[RetrievalExample] = field(default_factory=list)
    parallel: list[ParallelPair] = field(default_factory=list)
    monolingual: list[MonoSentence] = field(default_factory=list)

    @classmethod
    def concat(cls, batches: Sequence["Batch"]) -> "Batch":
        out = cls()
        for b in batches:
            out.retrieval += b.retrieval
            out.parallel += b.parallel
            out.monolingual += b.monolingual
        return out


# --------------------------------------------------------------------------- file helpers
def _jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    return read_jsonl_objects(path)


def _field(obj: dict[str, Any], name: str, path: object, n: int, kind: type = str) -> Any:
    if name not in obj:
        raise format_error(path, n, f"missing field {name!r}")
    value = obj[name]
    if not isinstance(value, kind):
        raise format_error(path, n, f"field {name!r} must be a {kind.__name__}")
    return value


def _is_local(source: str) -> bool:
    """An existing path, or a name that looks like a file (so a missing one says "no such file")."""
    return source_kind(source) is not SourceKind.DATASET or bool(re.search(r"\.(jsonl|tsv|txt)(\.gz)?$", source))


# --------------------------------------------------------------------------- retrieval triples
def read_triples(source: str) -> Iterator[RetrievalExample]:
    """Retrieval examples from a local JSONL(.gz) or an ir_datasets id with docpairs."""
    if _is_local(source):
        for n, obj in _jsonl(source):
            negs = obj.get("negatives", [])
            if not isinstance(negs, list) or not all(isinstance(x, str) for x in negs):
                raise format_error(source, n, "field 'negatives' must be a list of strings")
            yield RetrievalExample(_field(obj, "query", source, n), _field(obj, "positive", source, n), tuple(negs))
        return
    yield from _ir_datasets_triples(source)


def _ir_datasets_triples(dataset_id: str) -> Iterator[RetrievalExample]:
    ds = load_ir_dataset(dataset_id)
    if not ds.has_docpairs():
        raise MlirkitError(f"{dataset_id}: the dataset has no docpairs (retrieval triples)")
    queries = {q.query_id: q.text for q in ds.queries_iter()}
    store = ds.docs_store()
    for pair in ds.docpairs_iter():
        yield RetrievalExample(queries[pair.query_id], store.get(pair.doc_id_a).text,
                               (store.get(pair.doc_id_b).text,))


# --------------------------------------------------------------------------- parallel corpus
def read_parallel(source: str, *, pivot: str = "en", langs: Sequence[str] | None = None,
                  text_fields: str = "text", tsv_langs: tuple[str, str] | None = None,
                  alignments: str | None = None) -> Iterator[ParallelPair]:
    """Parallel pairs (pivot text, other-language text) from a local file or a dataset id.

    ``langs`` keeps only those target languages (None = all); ``text_fields``: the JSONL field of the text.
    ``alignments``: a Pharaoh file with one
    line per yielded pair, in order.
    """
    if source.endswith((".tsv", ".tsv.gz", ".txt", ".txt.gz")):
        pairs = _tsv_pairs(source, tsv_langs)
    elif _is_local(source):
        pairs = _grouped_pairs(_jsonl_rows(source, text_fields), source, pivot, langs)
    else:
        pairs = _grouped_pairs(_dataset_rows(source, text_fields), source, pivot, langs)
    if alignments is None:
        yield from pairs
        return
    with open_text(alignments) as f:
        for n, pair in enumerate(pairs, 1):
            line = f.readline()
            if not line:
                raise format_error(alignments, n, "fewer alignment lines than parallel pairs")
            yield ParallelPair(pair.src, pair.tgt, pair.src_lang, pair.tgt_lang,
                               tuple(parse_pharaoh(line, path=alignments, lineno=n)))


def _jsonl_rows(path: str, text_field: str) -> Iterator[tuple[str, str, str, int]]:
    for n, obj in _jsonl(path):
        yield (str(_field(obj, "id", path, n)), _field(obj, "lang", path, n), _field(obj, text_field, path, n), n)


def _dataset_rows(dataset_id: str, text_field: str) -> Iterator[tuple[str, str, str, int]]:
    """Rows ``(group_id, lang, text)`` of a parallel set id via ``mlirkit.datasets.parallel_rows``."""
    try:
        from mlirkit.datasets import parallel_rows
    except ImportError as e:
        raise MlirkitError(f"{dataset_id!r} is not a file, and mlirkit.datasets.parallel_rows is unavailable") from e
    for n, (group_id, lang, text) in enumerate(parallel_rows(dataset_id), 1):
        yield (str(group_id), str(lang), str(text), n)


def _grouped_pairs(rows: Iterable[tuple[str, str, str, int]], source: str, pivot: str,
                   langs: Sequence[str] | None) -> Iterator[ParallelPair]:
    wanted = set(langs) if langs else None
    group_id: str | None = None
    group: dict[str, str] = {}
    seen: set[str] = set()

    def flush() -> Iterator[ParallelPair]:
        if pivot in group and group[pivot].strip():
            for lang in sorted(group):
                if lang != pivot and (wanted is None or lang in wanted) and group[lang].strip():
                    yield ParallelPair(group[pivot], group[lang], pivot, lang)

    for doc_id, lang, text, n in rows:
        if doc_id != group_id:
            yield from flush()
            if doc_id in seen:
                raise format_error(source, n, f"records of id {doc_id!r} are not adjacent (sort by id)")
            seen.add(doc_id)
            group_id, group = doc_id, {}
        group[lang] = text
    yield from flush()


def _tsv_pairs(path: str, tsv_langs: tuple[str, str] | None) -> Iterator[ParallelPair]:
    if tsv_langs is None:
        m = re.search(r"\.([A-Za-z-]+?)-([A-Za-z-]+?)\.(tsv|txt)(\.gz)?$", os.path.basename(path))
        if not m:
            raise MlirkitError(f"{path}: cannot tell the languages from the name (want *.src-tgt.tsv); give them")
        tsv_langs = (m.group(1), m.group(2))
    src_lang, tgt_lang = tsv_langs
    with open_text(path) as f:
        for n, line in enumerate(f, 1):
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 3:
                try:
                    float(cols[0])
                except ValueError as e:
                    raise format_error(path, n, f"first of 3 columns must be a score, not {cols[0]!r}") from e
                cols = cols[1:]
            if len(cols) != 2:
                raise format_error(path, n, f"expected 2 or 3 tab-separated columns, found {len(cols)}")
            yield ParallelPair(cols[0], cols[1], src_lang, tgt_lang)


# --------------------------------------------------------------------------- monolingual corpus
def read_monolingual(path: str) -> Iterator[MonoSentence]:
    for n, obj in _jsonl(path):
        text = _field(obj, "text", path, n)
        if text.strip():
            yield MonoSentence(text, _field(obj, "lang", path, n))


# --------------------------------------------------------------------------- batch composer
class _Stream:
    """An endless, sharded, shuffled stream over a re-openable source."""

    def __init__(self, name: str, opener: Callable[[], Iterable[Any]], rng: random.Random, buffer: int,
                 rank: int, world_size: int) -> None:
        self.name, self.opener, self.rng, self.buffer = name, opener, rng, max(1, buffer)
        self.rank, self.world_size = rank, world_size
        self.epoch = 0
        self._it = self._gen()

    def _gen(self) -> Iterator[Any]:
        while True:
            produced = 0
            buf: list[Any] = []
            for i, item in enumerate(self.opener()):
                if i % self.world_size != self.rank:
                    continue
                buf.append(item)
                if len(buf) >= self.buffer:
                    j = self.rng.randrange(len(buf))
                    buf[j], buf[-1] = buf[-1], buf[j]
                    yield buf.pop()
                    produced += 1
            self.rng.shuffle(buf)
            produced += len(buf)
            yield from buf
            if produced == 0:
                raise MlirkitError(f"{self.name}: the data source is empty (for process {self.rank})")
            self.epoch += 1

    def take(self, n: int) -> list[Any]:
        return [next(self._it) for _ in range(n)]


class BatchComposer:
    """Endless iterator of :class:`Batch` (see the module docstring). A source may be None (not used)."""

    def __init__(self, *, retrieval: Callable[[], Iterable[RetrievalExample]] | None,
                 parallel: Callable[[], Iterable[ParallelPair]] | None,
                 monolingual: Callable[[], Iterable[MonoSentence]] | None,
                 n_retrieval: int, n_parallel: int, n_monolingual: int, n_hard_negatives: int = 1,
                 seed: int = 0, shuffle_buffer: int = 1000, rank: int = 0, world_size: int = 1) -> None:
        self.n_retrieval, self.n_parallel, self.n_monolingual = n_retrieval, n_parallel, n_monolingual
        self.n_hard = n_hard_negatives
        self.rng = random.Random(f"{seed}/{rank}/negatives")

        def stream(name: str, opener, n: int) -> _Stream | None:
            if opener is None or n <= 0:
                return None
            return _Stream(name, opener, random.Random(f"{seed}/{rank}/{name}"), shuffle_buffer, rank, world_size)

        self._ret = stream("retrieval", self._with_negatives(retrieval) if retrieval else None, n_retrieval)
        self._par = stream("parallel", parallel, n_parallel)
        self._mono = stream("monolingual", monolingual, n_monolingual)

    def _with_negatives(self, opener: Callable[[], Iterable[RetrievalExample]]) -> Callable[[], Iterator[RetrievalExample]]:
        n_hard = self.n_hard

        def gen() -> Iterator[RetrievalExample]:
            for ex in opener():
                if len(ex.negatives) >= n_hard:
                    yield ex
        return gen

    def __iter__(self) -> "BatchComposer":
        return self

    def __next__(self) -> Batch:
        ret = self._ret.take(self.n_retrieval) if self._ret else []
        ret = [RetrievalExample(e.query, e.positive, tuple(self.rng.sample(list(e.negatives), self.n_hard))
                                if self.n_hard else ()) for e in ret]
        return Batch(retrieval=ret,
                     parallel=self._par.take(self.n_parallel) if self._par else [],
                     monolingual=self._mono.take(self.n_monolingual) if self._mono else [])

    def skip(self, n: int) -> None:
        """Advance by ``n`` batches (used when resuming)."""
        for _ in range(n):
            next(self)


def alignment_of(pair: ParallelPair) -> Alignment | None:
    return list(pair.alignment) if pair.alignment is not None else None


__all__ = ["Batch", "BatchComposer", "MonoSentence", "ParallelPair", "RetrievalExample", "read_monolingual",
           "read_parallel", "read_triples"]
