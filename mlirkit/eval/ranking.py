"""Array form of qrels and runs shared by every metric: one sort per run, then vectorised kernels.

Conventions (the same for ranx metrics, TLR@k and the breakdowns):

- **Evaluated queries** are the qrels queries with at least one relevant document (``rel >= 1``),
  in sorted id order. Run queries outside that set are ignored (counted); an evaluated query
  missing from a run is an empty ranking (scores 0), as trec_eval ``-c`` does.
- **Ranking order** is ``(-score, docid)``: ties are broken by document id, so every metric sees
  the same top k, whatever order the run dict was built in.
- A document absent from ``doc_langs`` has language :data:`~mlirkit.base.langs.UNKNOWN`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, canonical, log_fallback, meeting_codes, normalize_unknown
from mlirkit.eval.query_langs import check_query_langs_meet

logger = logging.getLogger(__name__)

REL_LEVEL = 1  # a judgement >= 1 is relevant (ranx's default rel_lvl)


class Languages:
    """Small integer codes for language names; code 0 is always :data:`UNKNOWN`; aliases share the code of
    their canonical name (:func:`mlirkit.base.langs.canonical`: ``dt`` and ``nl`` are one language)."""

    def __init__(self) -> None:
        self.names: list[str] = [UNKNOWN]
        self._codes: dict[str, int] = {UNKNOWN: 0}
        #: codes that meet another side's code by :func:`mlirkit.base.langs.lookup` (``zh-CN`` -> ``zh``)
        self.fold: dict[str, str] = {}

    def code(self, lang: str | None) -> int:
        lang = canonical(normalize_unknown(lang))
        lang = self.fold.get(lang, lang)  # type: ignore[arg-type]
        code = self._codes.get(lang)
        if code is None:
            code = self._codes[lang] = len(self.names)
            self.names.append(lang)
        return code

    def codes(self, langs) -> np.ndarray:
        return np.fromiter((self.code(x) for x in langs), dtype=np.int32)

    def __len__(self) -> int:
        return len(self.names)


@dataclass
class Judged:
    """Qrels restricted to the evaluated queries, flattened: one row per judgement."""

    qids: list[str]
    q: np.ndarray  # (J,) query index of each judgement
    docs: list[str]  # (J,) document id of each judgement
    rel: np.ndarray  # (J,) integer relevance
    dropped_queries: int = 0
    languages: Languages = field(default_factory=Languages)
    doc_langs: Mapping[str, str] | None = None
    query_lang_codes: np.ndarray | None = None  # (Q,) language code per query

    @classmethod
    def from_qrels(cls, qrels: Mapping[str, Mapping[str, int]]) -> "Judged":
        if not isinstance(qrels, Mapping) or not qrels:
            raise MlirkitError("qrels are empty")
        qids = sorted(q for q, docs in qrels.items() if any(r >= REL_LEVEL for r in docs.values()))
        if not qids:
            raise MlirkitError("no query in the qrels has a relevant document (relevance >= 1)")
        docs: list[str] = []
        rels: list[int] = []
        lens = np.empty(len(qids), dtype=np.int64)
        for i, qid in enumerate(qids):
            judged = qrels[qid]
            docs.extend(judged.keys())
            rels.extend(judged.values())
            lens[i] = len(judged)
        dropped = len(qrels) - len(qids)
        if dropped:
            logger.info("%d qrels queries have no relevant document and are not evaluated", dropped)
        return cls(qids=qids, q=np.repeat(np.arange(len(qids), dtype=np.int64), lens), docs=docs,
                   rel=np.asarray(rels, dtype=np.int64), dropped_queries=dropped)

    @cached_property
    def qid_index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qids)}

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    def set_languages(self, doc_langs: Mapping[str, str], query_langs: list[str], *, refuse_unmet: bool = True) -> None:
        """Attach document languages (``{docid: lang}``) and one language per evaluated query. Tags that
        meet by :func:`mlirkit.base.langs.lookup` get one code (``zh`` queries, ``zh-CN`` documents);
        ``refuse_unmet``: a known query language meeting no document language is an error
        (:func:`mlirkit.eval.query_langs.check_query_langs_meet`; for TLR and samelang)."""
        if len(query_langs) != self.n_queries:
            raise ValueError("one language per evaluated query expected")
        self.doc_langs = doc_langs
        doc_set = set(doc_langs.values())
        if refuse_unmet:
            check_query_langs_meet(query_langs, doc_set)
        self.languages.fold = meeting_codes(set(query_langs), doc_set)
        for a, b in self.languages.fold.items():
            log_fallback(a, b, "language tags", "tag (the same language in evaluation)")
        self.query_lang_codes = self.languages.codes(query_langs)

    @cached_property
    def lang(self) -> np.ndarray:
        """(J,) language code of each judged document."""
        if self.doc_langs is None:
            raise ValueError("document languages not set")
        get = self.doc_langs.get
        return self.languages.codes(get(d, UNKNOWN) for d in self.docs)

    @cached_property
    def relevant(self) -> np.ndarray:
        return self.rel >= REL_LEVEL


class Ranking:
    """One run as arrays sorted by ``(query, -score, docid)``.

    ``doc`` holds codes into ``vocab`` (the sorted ids of the run's and the judged documents, so a
    smaller code means a smaller id and ranx sees consistent integer ids); ``judged_doc`` maps each
    row of the :class:`Judged` table to the same codes.
    """

    def __init__(self, judged: Judged, run: Mapping[str, Mapping[str, float]], name: str = "run") -> None:
        import pandas as pd

        if not isinstance(run, Mapping):
            raise MlirkitError(f"run {name!r} must be a mapping {{qid: {{docid: score}}}}")
        self.judged = judged
        self.name = name
        n_q = judged.n_queries
        docs: list[str] = []
        scores: list[float] = []
        lens = np.zeros(n_q, dtype=np.int64)
        for i, qid in enumerate(judged.qids):
            hits = run.get(qid)
            if hits:
                docs.extend(hits.keys())
                scores.extend(hits.values())
                lens[i] = len(hits)
        self.missing_queries = int((lens == 0).sum())
        index = judged.qid_index
        self.ignored_queries = sum(1 for q in run if q not in index)
        if self.ignored_queries:
            logger.info("run %s: %d queries are not in the qrels (or have no relevant document) and are ignored",
                        name, self.ignored_queries)
        if self.missing_queries:
            logger.info("run %s: %d evaluated queries have no results (scored as empty rankings)",
                        name, self.missing_queries)
        score = np.asarray(scores, dtype=np.float64)
        if not np.isfinite(score).all():
            raise MlirkitError(f"run {name!r} has non-finite scores")
        n_judged = len(judged.docs)
        all_docs = np.empty(n_judged + len(docs), dtype=object)
        all_docs[:n_judged] = judged.docs
        all_docs[n_judged:] = docs
        codes, uniques = pd.factorize(all_docs)
        uniques = np.asarray(uniques, dtype=object)
        order = np.argsort(uniques, kind="stable")
        rank_of = np.empty(len(uniques), dtype=np.int64)
        rank_of[order] = np.arange(len(uniques), dtype=np.int64)
        self.vocab = uniques[order]
        self.judged_doc = rank_of[codes[:n_judged]]
        doc = rank_of[codes[n_judged:]]
        q = np.repeat(np.arange(n_q, dtype=np.int64), lens)
        perm = np.lexsort((doc, -score, q))
        self.q = q[perm]
        self.doc = doc[perm]
        self.score = score[perm]
        self.offsets = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(lens, out=self.offsets[1:])
        self.pos = np.arange(len(self.q), dtype=np.int64) - self.offsets[self.q]
        self.lens = lens

    @property
    def n_vocab(self) -> int:
        return len(self.vocab)

    def top(self, k: int) -> np.ndarray:
        """Boolean mask of the rows in each query's top ``k``."""
        return self.pos < k

    @cached_property
    def _relevant_keys(self) -> np.ndarray:
        j = self.judged
        return np.unique(j.q[j.relevant] * self.n_vocab + self.judged_doc[j.relevant])

    def rows_relevant(self, rows: np.ndarray) -> np.ndarray:
        """Whether the hits at ``rows`` (an index or mask) are relevant for their query."""
        keys = self.q[rows] * self.n_vocab + self.doc[rows]
        return np.isin(keys, self._relevant_keys)

    @cached_property
    def vocab_lang(self) -> np.ndarray:
        """(V,) language code of each vocabulary document."""
        j = self.judged
        if j.doc_langs is None:
            raise ValueError("document languages not set")
        get = j.doc_langs.get
        return j.languages.codes(get(d, UNKNOWN) for d in self.vocab)

    def typed_lists(self):
        """``(qrels, run)`` as numba typed lists of ``[[doc code, value], ...]`` arrays for ranx.

        qrels rows are sorted by relevance (descending), as ranx's ideal-DCG computation needs.
        """
        from numba.typed import List as TypedList

        j = self.judged
        jorder = np.lexsort((self.judged_doc, -j.rel, j.q))
        qrels_rows = np.column_stack((self.judged_doc[jorder], j.rel[jorder])).astype(np.float64)
        jcounts = np.bincount(j.q, minlength=j.n_queries)
        jsplits = np.split(qrels_rows, np.cumsum(jcounts)[:-1])
        run_rows = np.column_stack((self.doc, self.score)).astype(np.float64)
        rsplits = np.split(run_rows, self.offsets[1:-1])
        qrels_tl = TypedList()
        run_tl = TypedList()
        for a in jsplits:
            qrels_tl.append(np.ascontiguousarray(a))
        for a in rsplits:
            run_tl.append(np.ascontiguousarray(a))
        return qrels_tl, run_tl


__all__ = ["Judged", "Languages", "Ranking", "REL_LEVEL"]
