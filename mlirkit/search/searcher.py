"""Batch search of an index directory with deterministic tie-breaking."""
from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from mlirkit.base.threads import faiss_threads
from mlirkit.base.vectors import transform_and_normalize
from mlirkit.encoders.base import Encoder, check_same_encoder
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.index.layout import TRANSFORM_FILE
from mlirkit.io.records import Query
from mlirkit.search.results import Hit, SearchResults, TextResult
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.defaults import DEFAULT_ALPHA

if TYPE_CHECKING:
    from mlirkit.search.langid import QueryLanguage

logger = logging.getLogger(__name__)

#: extra candidates fetched beyond k so that ties at the cut-off are broken by doc id, not by FAISS order
TIE_SLACK = 16


def encoder_for_index(index, **overrides: Any) -> Encoder:
    """The encoder an mlirkit index was built with, rebuilt from ``meta.json`` (``overrides``: the caller's own
    options, which win; only they can allow a model's own code, :mod:`mlirkit.encoders.model_code`)."""
    from mlirkit.encoders import load_encoder

    from mlirkit.encoders.model_code import options_from_file

    name = index.meta.get("encoder_name")
    if not name:
        raise MlirkitError(f"{index.path} does not record its encoder (not built by mlirkit.encode): give "
                           f"{option('encoder')}")
    # options that run the model's own code (trust_remote_code) count only when given here, never from meta.json
    options = options_from_file(index.meta.get("encoder_options"), index.path / "meta.json", overrides)
    encoder_class = options.pop("encoder_class", None)
    return load_encoder(name, encoder_class, **{**options, **overrides})


def _transform_file(transform: Any) -> str | None:
    """The absolute path of a query-time shift's transform file (None: the index's own, or an object with no file)."""
    path = transform if isinstance(transform, (str, os.PathLike)) else getattr(transform, "path", None)
    return None if path is None else os.path.abspath(path)


class Searcher:
    """Search an index directory with queries encoded by the index's encoder.

    Query vectors are ``normalize(T_q(g(q)))``: the encoder's query embedding, the query side of
    the index's language transform if it has one (centering and LIR; SHIFT has none), then L2
    normalisation. Results are sorted by ``(-score, doc_id)``.

    ``query_shift`` (``"cosine"`` or ``"ip"``; implied by ``alpha`` or ``transform``) scores every query
    with the SHIFT of its own language (``Query.lang``) from this one index, exactly
    (:class:`mlirkit.search.query_shift.QueryTimeShift`; needs ``embeddings.npy``): ``transform`` (a shift
    file or object; default the index's own) and ``alpha`` (default the index's) are chosen at query
    time. A flat index is scored exhaustively; other types give ``candidates`` rows (default
    :data:`mlirkit.search.query_shift.DEFAULT_CANDIDATES`; 0 = exhaustive) that are re-scored exactly.
    ``missing`` (``"corpus"`` or ``"keep"``): the document languages the shift has no vector for
    (:func:`mlirkit.transforms.hybrid.fill_missing`; default: as the index was built, else filled from the
    index's documents). The index's own shift is used as stored (filled when the index was built); another
    ``transform`` or ``missing`` runs the fit step (:func:`mlirkit.search.query_shift.fill_missing_for_index`)
    once, here; :meth:`search` never fits.

    Free text (:meth:`search_text`): a query without a language gets one from ``language_identifier`` (a name of
    :data:`mlirkit.search.langid.IDENTIFIERS`, default :data:`~mlirkit.search.langid.DEFAULT_IDENTIFIER`) when
    its confidence reaches ``langid_threshold`` (default :data:`~mlirkit.search.langid.DEFAULT_THRESHOLD`);
    each result says how its language was decided.
    """

    def __init__(self, index_dir: str | os.PathLike, encoder: Encoder | None = None, *,
                 force: bool = False, threads: int | None = None,
                 encoder_overrides: dict[str, Any] | None = None, query_shift: str | None = None,
                 alpha: Any = None, transform: Any = None, candidates: int | None = None,
                 missing: str | None = None, language_identifier: str | None = None,
                 langid_threshold: float | None = None) -> None:
        from mlirkit.index import DenseIndex
        from mlirkit.search.langid import DEFAULT_IDENTIFIER, DEFAULT_THRESHOLD, IDENTIFIERS

        # a directory, or an open index (DenseIndex, mlirkit.search.sharded.ShardedIndex)
        self.index = DenseIndex(index_dir) if isinstance(index_dir, (str, os.PathLike)) else index_dir
        self.encoder = encoder if encoder is not None else encoder_for_index(self.index, **(encoder_overrides or {}))
        # FAISS threads while searching (scoped; the process-wide count is the CLI's --threads)
        self.threads = threads if threads is not None else self.index.threads
        if self.encoder.dim != self.index.dim:
            raise MlirkitError(f"encoder dimension {self.encoder.dim} != index dimension {self.index.dim} ({self.index.path})")
        if self.index.encoder is not None:
            try:
                check_same_encoder(self.index.encoder, self.encoder.fingerprint, f"index {self.index.path}")
            except MlirkitError as e:
                if not force:
                    raise MlirkitError(f"{e} (use {option('force', True)} to search anyway)") from None
                logger.warning("%s; searching anyway (%s)", e, option("force", True))
        self.query_transform = None
        self.alpha = Alpha()
        meta_transform = self.index.transform
        if meta_transform:
            from mlirkit.transforms import load_transform

            transform_file = load_transform(self.index.path / TRANSFORM_FILE)
            if transform_file.touches("query"):
                self.query_transform = transform_file
                self.alpha = Alpha.coerce(meta_transform.get("alpha", DEFAULT_ALPHA))
        self.shift = None  # the query-time shift (mlirkit.search.query_shift), when asked for
        self.shift_settings: dict[str, Any] | None = None  # what it was asked for, as a run's sidecar records it
        if missing is not None and not (query_shift or alpha is not None or transform is not None):
            raise MlirkitError(f"{option('missing')} is for the query-time shift: add {option('query_shift')} (or "
                               f"{option('alpha')} / {option('transform')})")
        if query_shift or alpha is not None or transform is not None:
            self._setup_query_shift(query_shift or "cosine", alpha, transform, candidates, force, missing)
        self.language_identifier = language_identifier or DEFAULT_IDENTIFIER
        IDENTIFIERS.get(self.language_identifier)  # an unknown name fails here, with "did you mean"
        self.langid_threshold = DEFAULT_THRESHOLD if langid_threshold is None else float(langid_threshold)
        if not 0.0 <= self.langid_threshold <= 1.0:
            raise MlirkitError(f"{option('langid_threshold')} must be in [0, 1], got {langid_threshold}")
        self._identifier = None  # built on the first free-text query

    def _setup_query_shift(self, metric: str, alpha: Any, transform: Any, candidates: int | None,
                           force: bool, missing: str | None) -> None:
        """Every query scored with its own language's SHIFT from this one index (see query_shift.py)."""
        from mlirkit.search.query_shift import fill_missing_for_index, plan_for_index

        shift_transform = transform
        if transform is not None or missing is not None:
            # what the index does not store: the fit step for the languages the shift lacks, once, here
            shift_transform = fill_missing_for_index(self.index, transform, missing=missing, force=force)
            if transform is None and alpha is None:  # the index's own shift keeps the index's alpha
                alpha = (self.index.transform or {}).get("alpha", DEFAULT_ALPHA)
        self.shift_plan = plan_for_index(self.index, metric, alpha, shift_transform, candidates, force=force,
                                         missing=missing)
        self.shift, self.shift_alpha, self.shift_candidates = self.shift_plan
        self.shift_settings = {"metric": metric, "alpha": None if alpha is None else Alpha.coerce(alpha).to_json(),
                               "transform": _transform_file(transform), "own_transform": transform is None,
                               "candidates": candidates, "missing": missing}

    def provenance(self) -> dict[str, Any]:
        """What a run of this searcher records beside it (:mod:`mlirkit.io.provenance`): the index (every
        shard's path and ``meta.json`` sha256), the encoder (name, fingerprint digest and fingerprint), the
        index's transform (method, file sha256, alpha) and the query-time shift when there is one."""
        from mlirkit.index.reader import index_provenance

        transform = self.index.transform
        out: dict[str, Any] = {
            "index": index_provenance(self.index),
            "encoder": {"name": getattr(self.encoder, "name", None) or self.index.meta.get("encoder_name"),
                        "digest": self.encoder.digest, "fingerprint": self.encoder.fingerprint},
            "transform": None if not transform else {k: transform.get(k) for k in ("method", "sha256", "alpha", "file")},
        }
        if self.shift is not None:
            out["query_shift"] = {**self.shift.describe(self.shift_alpha), "candidates": self.shift_candidates,
                                  "transform_sha256": getattr(self.shift.transform, "sha256", None),
                                  "settings": self.shift_settings}
        return out

    def encode_queries(self, queries: Sequence[Query], batch_size: int | None = None) -> np.ndarray:
        langs = [q.lang for q in queries]
        vectors = self.encoder.encode_queries([q.text for q in queries], langs, batch_size=batch_size)
        return transform_and_normalize(vectors, langs, "query", self.query_transform, self.alpha)

    def search_vectors(self, vectors: np.ndarray, k: int, langs: Sequence[str | None] | None = None, *,
                       alpha: Any = None) -> list[list[Hit]]:
        """Hits of query vectors; with the query-time shift, ``langs`` (one per query) choose each one's shift
        and ``alpha`` (a float or per-language dict) replaces the searcher's alpha for this call."""
        if self.shift is None:
            if alpha is not None:
                raise MlirkitError(f"{option('alpha')} is for the query-time shift: this searcher has none")
            with faiss_threads(self.threads):
                return search_index(self.index.faiss_index, self.index.docids, vectors, k)
        if langs is None:
            raise MlirkitError("the query-time shift needs one language per query")
        from mlirkit.search.query_shift import plan_search

        plan = self.shift_plan
        if alpha is not None:
            plan = plan._replace(alpha=self.shift.transform.check_alpha(alpha))
        with faiss_threads(self.threads):
            hits = plan_search(plan, self.index.faiss_index, vectors, langs, k)
        return [[Hit(d, s) for d, s in h] for h in hits]

    # ----------------------------------------------------------------- free text
    def candidate_langs(self) -> list[str]:
        """The languages a free-text query can be identified as: the query-time shift's (its pivot and every
        language with a vector), else the index's document languages."""
        from mlirkit.base.langs import is_known

        if self.shift is not None:
            return list(self.shift.langs)
        return sorted({la for la in self.index.langs if is_known(la)})

    def _language_identifier(self):
        if self._identifier is None:
            from mlirkit.search.langid import make_identifier

            self._identifier = make_identifier(self.language_identifier, self.candidate_langs(),
                                               None if self.shift is None else self.shift.transform)
        return self._identifier

    def encode_texts(self, texts: Sequence[str], langs: Sequence[str | None]) -> np.ndarray:
        """Query vectors of ``texts`` as :meth:`encode_queries` makes them (``langs``: one per text, or None)."""
        raw = self.encoder.encode_queries(list(texts), list(langs))
        return transform_and_normalize(raw, list(langs), "query", self.query_transform, self.alpha)

    def query_languages(self, texts: Sequence[str], vectors: np.ndarray | None = None,
                        langs: Sequence[str | None] | None = None) -> list[QueryLanguage]:
        """How each text's language is decided (:func:`mlirkit.search.langid.decide_languages`): ``langs``
        (one per text, None items detected); ``vectors``: the texts' query vectors (for the ``embedding``
        identifier; encoded here when needed and not given)."""
        from mlirkit.search.langid import decide_languages

        given = [None] * len(texts) if langs is None else list(langs)
        todo = [i for i, la in enumerate(given) if la is None]
        detections: list[Any] = [None] * len(texts)
        if todo:
            identifier = self._language_identifier()
            found_vectors = None
            if identifier.needs_vectors:
                found_vectors = vectors[todo] if vectors is not None else self.encode_texts(
                    [texts[i] for i in todo], [None] * len(todo))
            for i, found in zip(todo, identifier.identify([texts[i] for i in todo], found_vectors)):
                detections[i] = found
        has_vector = None if self.shift is None else self.shift.has_vector
        return decide_languages(given, detections, threshold=self.langid_threshold,
                                pivot=None if self.shift is None else self.shift.pivot, has_vector=has_vector)

    def search_text(self, texts: str | Sequence[str], k: int = 10, *, langs: str | Sequence[str | None] | None = None,
                    alpha: Any = None, batch_size: int = 64) -> TextResult | list[TextResult]:
        """Search free text: one string gives one :class:`~mlirkit.search.results.TextResult`, a list of strings a
        list. ``langs``: None (identify each text's language), one code for every text, or one per text (None
        items identified). With the query-time shift each query is scored with its decided language's shift
        (:class:`~mlirkit.search.langid.QueryLanguage` says which, and how it was decided); ``alpha`` replaces the
        searcher's for this call."""
        from mlirkit.base.langs import canonical, check_lang
        from mlirkit.io.fields import check_text, is_blank

        single = isinstance(texts, str)
        items = [texts] if single else _check_text_list(texts)
        for i, text in enumerate(items):
            check_text(text, "the query text" if single else f"texts[{i}]")  # a lone surrogate: no tokenizer takes it
            if is_blank(text):
                raise MlirkitError(f"texts[{i}] is empty" if not single else "the query text is empty")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise MlirkitError(f"k must be a positive integer, got {k!r}")
        if langs is None or isinstance(langs, str):
            given = [langs] * len(items)
        elif isinstance(langs, (list, tuple)) and len(langs) == len(items):
            given = list(langs)
        else:
            raise MlirkitError(f"langs must be None, one language or one per text ({len(items)}), got {langs!r}"[:200])
        given = [None if la is None else canonical(check_lang(la, f"langs[{i}]", known=True))
                 for i, la in enumerate(given)]
        results: list[TextResult] = []
        for start in range(0, len(items), batch_size):
            batch, batch_langs = items[start:start + batch_size], given[start:start + batch_size]
            raw = self.encoder.encode_queries(batch, batch_langs)
            unshifted = transform_and_normalize(raw, batch_langs, "query", self.query_transform, self.alpha)
            decided = self.query_languages(batch, unshifted, batch_langs)
            decided_langs = [d.lang for d in decided]
            vectors = unshifted if self.query_transform is None or decided_langs == batch_langs else \
                transform_and_normalize(raw, decided_langs, "query", self.query_transform, self.alpha)
            shift_langs = None if self.shift is None else _shift_langs(decided, batch_langs, self.langid_threshold)
            hits = self.search_vectors(vectors, k, shift_langs, alpha=alpha)
            results += [TextResult(t, d, h) for t, d, h in zip(batch, decided, hits)]
        return results[0] if single else results

    def search(self, queries: Sequence[Query] | str | os.PathLike, k: int = 1000, batch_size: int = 64,
               show_progress: bool = False) -> SearchResults:
        """``{query_id: [Hit, ...]}`` with at most ``k`` hits per query, best first: a
        :class:`~mlirkit.search.results.SearchResults`, which :func:`mlirkit.eval.evaluate` takes as it is
        and ``to_ranx()`` turns into a ``ranx.Run``. ``queries``: :class:`~mlirkit.io.records.Query`
        objects or a topics source for :func:`mlirkit.io.topics.read_topics` (a file or an ir_datasets id)."""
        from tqdm.auto import tqdm

        if isinstance(queries, (str, os.PathLike)):
            from mlirkit.io.topics import read_topics

            queries = read_topics(queries)
        _check_queries(queries)
        out = SearchResults()
        with tqdm(total=len(queries), unit="query", desc="search", disable=not show_progress) as bar:
            for start in range(0, len(queries), batch_size):
                batch = queries[start:start + batch_size]
                vectors = self.encode_queries(batch, batch_size)
                for query, hits in zip(batch, self.search_vectors(vectors, k, [q.lang for q in batch])):
                    out[query.query_id] = hits
                bar.update(len(batch))
        return out


def _check_text_list(texts: Any) -> list[str]:
    """``texts`` as a list of strings, or a :class:`TypeError` naming the first item that is not one."""
    if not isinstance(texts, (list, tuple)):
        raise TypeError(f"texts must be a string or a list of strings, got {type(texts).__name__}")
    if not texts:
        raise MlirkitError("texts is an empty list")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not a string")
    return list(texts)


def _check_queries(queries: Any) -> None:
    """Records with ``query_id``, ``text`` and ``lang`` (a :class:`~mlirkit.io.records.Query`), else a one-line
    error naming the first bad item (free text goes to :meth:`Searcher.search_text`)."""
    if not isinstance(queries, Sequence):
        raise TypeError(f"queries must be Query records or a topics source, got {type(queries).__name__}")
    for i, q in enumerate(queries):
        if not all(hasattr(q, f) for f in ("query_id", "text", "lang")):
            hint = " (free text: Searcher.search_text)" if isinstance(q, str) else ""
            raise TypeError(f"queries[{i}] is {type(q).__name__}, not a Query record{hint}")


def search_index(faiss_index, docids: Sequence[str], vectors: np.ndarray, k: int) -> list[list[Hit]]:
    """Top ``k`` hits of each query vector in a FAISS index, sorted by ``(-score, doc_id)``.

    ``TIE_SLACK`` extra candidates are fetched so that ties at the cut-off are broken by doc id.
    """
    fetch = min(faiss_index.ntotal, k + TIE_SLACK)
    scores, rows = faiss_index.search(np.ascontiguousarray(vectors, dtype=np.float32), fetch)
    results = []
    for row_scores, row_ids in zip(scores, rows):
        hits = [Hit(docids[i], float(s)) for s, i in zip(row_scores, row_ids) if i >= 0]
        hits.sort(key=lambda h: (-h.score, h.doc_id))
        results.append(hits[:k])
    return results


def _shift_langs(decided: Sequence[Any], given: Sequence[str | None], threshold: float) -> list[str]:
    """The languages the query-time shift scores free-text queries with: the decided one; for a query sent to the
    pivot, what the record path would have had (the given or confidently detected language without a vector, or
    ``und`` when detection was not sure), so that the shift counts and warns about it as it does for records
    (every one of them is scored with the pivot)."""
    from mlirkit.base.langs import UNKNOWN

    out = []
    for d, lang in zip(decided, given):
        if d.how != "pivot":
            out.append(d.lang)
        elif lang is not None:
            out.append(lang)
        elif d.detected is not None and d.confidence is not None and d.confidence >= threshold:
            out.append(d.detected)
        else:
            out.append(UNKNOWN)
    return out


__all__ = ["Searcher", "TIE_SLACK", "encoder_for_index", "search_index"]
