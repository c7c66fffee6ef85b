"""``SearchService``: one index, one encoder, searched without and with the query-time shift, for every front end.

Opened from an index directory or a Qdrant shard directory (:mod:`mlirkit.index.qdrant_export`, searched by
:class:`~mlirkit.search.qdrant_searcher.QdrantSearcher`, exactly) (``transform``: a SHIFT file for the query-time shift; ``lexical``: a BM25
index of mlirkit.lexical for reciprocal rank fusion; ``corpus``: where the documents' texts are, default the
corpus recorded in the index's ``meta.json``). Requests are plain dicts or :mod:`mlirkit.serve.schemas` models;
concurrent requests share one encoder call (:class:`~mlirkit.serve.batcher.MicroBatcher`). Nothing in a request
names a file.
"""
from __future__ import annotations

import logging
import os
from collections import defaultdict
from typing import Any, Mapping, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, check_lang, lookup
from mlirkit.base.registry import did_you_mean
from mlirkit.io.fields import is_blank
from mlirkit.serve.batcher import MicroBatcher
from mlirkit.serve.schemas import MAX_BATCH, SNIPPET_CHARS, SearchRequest

__all__ = ["SearchService", "RequestError", "UnknownDocument", "open_index"]

logger = logging.getLogger(__name__)

RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al., SIGIR 2009)


class RequestError(MlirkitError):
    """A request the service cannot answer; ``field`` names the part of the request at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class UnknownDocument(RequestError):
    """A document id the index does not hold."""


def open_index(index_dir: str | os.PathLike):
    """The :class:`~mlirkit.index.DenseIndex` at ``index_dir`` (or the
    :class:`~mlirkit.search.qdrant_searcher.QdrantShard`, for a shard directory), read completely now (FAISS file or
    Qdrant shard, ids, languages), so that a missing, truncated or foreign index fails here in one line."""
    from mlirkit.index import DenseIndex
    from mlirkit.search.qdrant_searcher import QdrantShard, is_qdrant_shard

    index = QdrantShard(index_dir) if is_qdrant_shard(index_dir) else DenseIndex(index_dir)
    try:
        _ = (index.shard, index.docids) if isinstance(index, QdrantShard) else index.faiss_index, index.langs
    except MlirkitError:
        raise
    except Exception as e:  # FAISS's RuntimeError of a cut or foreign file: one line, no C++ trace
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise MlirkitError(f"{index.path}: cannot read the index ({first[:200]})") from None
    return index


class SearchService:
    """Search one index for free text, plain and with the query-time shift, optionally fused with BM25."""

    def __init__(self, index_dir: str | os.PathLike, *, transform: str | os.PathLike | None = None,
                 lexical: str | os.PathLike | None = None, corpus: str | None = None, encoder: Any = None,
                 language_identifier: str | None = None, langid_threshold: float | None = None,
                 max_wait: float = 0.005) -> None:
        from mlirkit.search import Searcher
        from mlirkit.search.qdrant_searcher import QdrantSearcher, QdrantShard

        self.index = open_index(index_dir)
        searcher = QdrantSearcher if isinstance(self.index, QdrantShard) else Searcher  # both share the open index
        common = {"language_identifier": language_identifier, "langid_threshold": langid_threshold}
        self.plain = searcher(self.index, encoder, **common)
        self.encoder = self.plain.encoder
        self.shifted = None if transform is None else searcher(self.index, self.encoder, query_shift="cosine",
                                                               transform=transform, **common)
        self.lexical_dir = None if lexical is None else str(lexical)
        self._lexical = None
        self._position = {doc_id: i for i, doc_id in enumerate(self.index.docids)}
        self.texts = self._read_texts(corpus)
        langs = set(self.plain.candidate_langs()) | set(self.shifted.candidate_langs() if self.shifted else [])
        self.languages = sorted(langs)
        self.batcher: MicroBatcher = MicroBatcher(self._search_batch, MAX_BATCH, max_wait)

    # ------------------------------------------------------------------ state
    def health(self) -> dict[str, Any]:
        """What the service serves: the index, its size, whether it shifts, fuses and has texts."""
        return {"status": "ok", "index": self.index.path.name, "documents": len(self.index.docids),
                "shift": self.shifted is not None, "lexical": self.lexical_dir is not None,
                "texts": self.texts is not None}

    def ready(self) -> bool:
        """True once the index and the encoder are loaded (they are, once the constructor returned)."""
        return True

    def close(self) -> None:
        self.batcher.close()

    # ------------------------------------------------------------------ documents
    def document(self, doc_id: str) -> dict[str, Any]:
        """``{"doc_id", "lang", "text"}`` of one document (``text`` None without a corpus)."""
        i = self._position.get(doc_id)
        if i is None:
            raise UnknownDocument("doc_id", f"unknown document id {doc_id[:100]!r}")
        return {"doc_id": doc_id, "lang": self.index.langs[i],
                "text": None if self.texts is None else self.texts.get(doc_id)}

    def _read_texts(self, corpus: str | None) -> dict[str, str] | None:
        """The texts of the index's documents: from ``corpus``, else the corpus in ``meta.json``; None if neither."""
        from mlirkit.io.corpus import read_corpus

        source = corpus or self.index.meta.get("corpus")
        if not source:
            logger.warning("no corpus given or recorded in %s: hits have no snippets", self.index.path)
            return None
        try:
            texts = {d.doc_id: d.text for d in read_corpus(source, default_lang="und") if d.doc_id in self._position}
        except MlirkitError as e:
            if corpus:  # asked for: an error
                raise
            logger.warning("the corpus recorded in the index cannot be read (%s): hits have no snippets", e)
            return None
        logger.info("%d of %d document texts from %s", len(texts), len(self._position), source)
        return texts

    # ------------------------------------------------------------------ search
    def search(self, requests: SearchRequest | Mapping[str, Any] | Sequence[SearchRequest | Mapping[str, Any]]
               ) -> dict[str, Any] | list[dict[str, Any]]:
        """One request (a dict or :class:`SearchRequest`) gives one response dict, a list gives a list; each
        response: ``query``, ``language`` (``lang``, ``how``, ``detected``, ``confidence``), ``shift``,
        ``alpha``, ``fusion``, ``hits`` (``doc_id``, ``score``, ``lang``, ``snippet``)."""
        single = isinstance(requests, (SearchRequest, Mapping))
        items = [requests] if single else list(requests)
        checked = [self._check(r, "" if single else f"queries[{i}].") for i, r in enumerate(items)]
        answers = self.batcher.run(checked)
        return answers[0] if single else answers

    def _check(self, request: SearchRequest | Mapping[str, Any], where: str) -> SearchRequest:
        from pydantic import ValidationError

        if not isinstance(request, SearchRequest):
            try:
                request = SearchRequest.model_validate(request)
            except ValidationError as e:
                err = e.errors()[0]
                raise RequestError(where + ".".join(map(str, err["loc"])), err["msg"]) from None
        if is_blank(request.query):
            raise RequestError(where + "query", "no text: only whitespace or invisible characters")
        if request.lang is not None:
            try:  # in its BCP 47 case (DE -> de), meeting the service's languages by lookup (de-CH -> de)
                lang = canonical(check_lang(request.lang, "lang", known=True))
            except MlirkitError:
                lang = None
            if lang is None or lookup(lang, self.languages) is None:
                raise RequestError(where + "lang", f"unknown language {request.lang!r}"
                                   f"{did_you_mean(request.lang, self.languages)} (this index: {', '.join(self.languages)})")
            request = request.model_copy(update={"lang": lang})
        if request.alpha is not None and not (request.shift and self.shifted is not None):
            raise RequestError(where + "alpha", "alpha is for the query-time shift: " + (
                "this service has none (start it with --transform)" if self.shifted is None else 'ask "shift": true'))
        if request.fusion and self.lexical_dir is None:
            raise RequestError(where + "fusion", "this service has no lexical index (start it with --lexical)")
        return request

    def _search_batch(self, requests: list[SearchRequest]) -> list[dict[str, Any]]:
        """Every request of a batch: one encoder call, then each group (plain/shift, alpha, k) searched together."""
        texts = [r.query for r in requests]
        given = [r.lang for r in requests]
        vectors = self.plain.encode_texts(texts, given)
        groups: dict[tuple, list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            use_shift = r.shift and self.shifted is not None
            groups[(use_shift, r.alpha if use_shift else None, r.k)].append(i)
        out: list[dict[str, Any]] = [{} for _ in requests]
        for (use_shift, alpha, k), rows in groups.items():
            searcher = self.shifted if use_shift else self.plain
            decided = searcher.query_languages([texts[i] for i in rows], vectors[rows], [given[i] for i in rows])
            decided_langs = [d.lang for d in decided]
            group_vectors = vectors[rows]
            if searcher.query_transform is not None and decided_langs != [given[i] for i in rows]:
                group_vectors = searcher.encode_texts([texts[i] for i in rows], decided_langs)
            hits = searcher.search_vectors(group_vectors, k, decided_langs if use_shift else None, alpha=alpha)
            for i, language, h in zip(rows, decided, hits):
                r = requests[i]
                pairs = [(x.doc_id, float(x.score)) for x in h]
                if r.fusion:
                    pairs = self._fuse(r.query, language.lang, pairs, k)
                out[i] = {"query": r.query, "language": language.to_json(), "shift": use_shift,
                          "alpha": alpha, "fusion": r.fusion, "hits": [self._hit(d, s) for d, s in pairs]}
        return out

    def _hit(self, doc_id: str, score: float) -> dict[str, Any]:
        text = None if self.texts is None else self.texts.get(doc_id)
        snippet = None if text is None else (text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS - 1] + "…")
        return {"doc_id": doc_id, "score": score, "lang": self.index.langs[self._position[doc_id]] if doc_id in self._position else "und",
                "snippet": snippet}

    def _fuse(self, text: str, lang: str, dense: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
        """Reciprocal rank fusion (:func:`mlirkit.fuse.fusion.fuse`, ``rrf``) of the dense hits and BM25's."""
        from mlirkit.eval.inputs import ranx_to_dict
        from mlirkit.fuse.fusion import fuse
        from mlirkit.io.records import Query

        if self._lexical is None:
            from mlirkit.lexical.searcher import Bm25Searcher

            self._lexical = Bm25Searcher(self.lexical_dir)  # starts the JVM: only when fusion is asked for
        bm25 = self._lexical.search([Query("q", text, lang)], k=k).get("q", {})
        if not bm25:
            return dense
        fused = ranx_to_dict(fuse([{"q": dict(dense)}, {"q": bm25}], method="rrf", norm=None,
                                  params={"k": RRF_K})).get("q", {})
        return sorted(((d, float(s)) for d, s in fused.items()), key=lambda p: (-p[1], p[0]))[:k]
