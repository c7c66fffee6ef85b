"""Streaming indexer: documents -> encoder -> (language transform) -> L2 norm -> FAISS index directory."""
from __future__ import annotations

import logging
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.encoders.base import Encoder
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option
from mlirkit.index.layout import TRANSFORM_FILE
from mlirkit.io.fields import check_text
from mlirkit.io.records import Doc
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.defaults import DEFAULT_ALPHA

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)


@dataclass
class IndexStats:
    documents: int = 0
    seconds: float = 0.0
    lang_counts: Counter = field(default_factory=Counter)

    @property
    def docs_per_second(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0


def chunked(items: Iterable[Doc], size: int) -> Iterator[list[Doc]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


class Indexer:
    """Encode documents into an index directory that Pyserini's ``FaissSearcher`` opens.

    Document vectors are ``normalize(T(f(d)))``: the encoder output ``f(d)``, the language transform
    ``T`` if one is given (e.g. SHIFT ``z - alpha * V_lang(d)``), then L2 normalisation, so inner
    product = cosine. The untransformed ``f(d)`` can be kept in ``embeddings.npy`` for post-hoc
    transforms and alpha sweeps. Memory is bounded by ``chunk_size`` documents plus the index itself.

    ``missing``: the documents of languages a SHIFT transform has no vector for, ``"corpus"`` (the vector of
    :func:`mlirkit.transforms.hybrid.fill_missing` from the corpus indexed, so those documents are transformed
    when the last document is in; the index is then built from spooled vectors) or ``"keep"`` (unshifted);
    None: the transform's own policy (default :data:`mlirkit.transforms.defaults.DEFAULT_MISSING`). The transform stored in the index and its
    meta.json record say what was done (:func:`mlirkit.transforms.hybrid.fill_missing`). That corpus fill is the
    fit step, run once when the last document is in (encoding a chunk never fits); its result is the index's
    ``transform.safetensors``, which the query-time shift and post-hoc apply reuse without fitting again.

    The index directory comes first, as in :class:`~mlirkit.search.Searcher` (``Indexer(index_dir, encoder)``).
    """

    def __init__(self, index_dir: str | os.PathLike, encoder: Encoder, *,
                 transform: LanguageTransform | str | os.PathLike | None = None, alpha: AlphaLike = DEFAULT_ALPHA,
                 save_embeddings: bool = False, overwrite: bool = False, batch_size: int | None = None,
                 chunk_size: int = 2048, strict: bool = False, force: bool = False,
                 langid_threshold: float | None = None,
                 show_progress: bool = True, encoder_name: str | None = None,
                 encoder_options: dict[str, Any] | None = None, extra_meta: dict[str, Any] | None = None,
                 index_type: Any = None, missing: str | None = None) -> None:
        from mlirkit.transforms.hybrid import check_missing_policy

        self.alpha = Alpha.coerce(alpha)  # a bad alpha fails first
        check_missing_policy(missing)
        self.missing = missing
        self.encoder = encoder
        self.index_dir = Path(index_dir)
        self.transform_path: Path | None = None
        if isinstance(transform, (str, os.PathLike)):
            from mlirkit.transforms.io import load_transform

            self.transform_path = Path(transform)
            transform = load_transform(self.transform_path)
        elif transform is not None:
            self.transform_path = Path(transform.path)
        self.transform = transform
        if transform is not None:
            transform.check_encoder(encoder.fingerprint, force=force)
            if missing == "corpus" and transform.method != "shift":
                raise MlirkitError(f"{option('missing', 'corpus')} fills shift vectors; {transform.method} has no "
                                   f"corpus fill (use {option('missing', 'keep')})")
        if langid_threshold is not None:
            if transform is None:
                raise MlirkitError("language identification (langid_threshold) needs a transform with a classifier")
            transform.use_langid(langid_threshold)
        self.save_embeddings = save_embeddings
        #: documents the transform left unchanged or gave a predicted language (``missing:<lang>``, ``unknown``,
        #: ``langid:<lang>``, ...), over every :meth:`index` call
        self.counts: Counter[str] = Counter()
        self.overwrite = overwrite
        self.batch_size = batch_size
        self.chunk_size = chunk_size
        self.strict = strict
        self.show_progress = show_progress
        self.index_type = index_type  # IndexSpec, type name or None (flat); see mlirkit.index.types
        self.extra_meta = {"encoder_name": encoder_name, "encoder_options": encoder_options or {},
                           **(extra_meta or {})}

    def index(self, docs: Iterable[Doc], total: int | None = None) -> IndexStats:
        from tqdm.auto import tqdm

        from mlirkit.index import IndexWriter

        transform_meta = self.transform.describe(self.alpha) if self.transform is not None else None
        stats = IndexStats()
        start = time.perf_counter()
        with IndexWriter(self.index_dir, dim=self.encoder.dim, encoder=self.encoder.fingerprint, normalized=True,
                         transform=transform_meta, save_embeddings=self.save_embeddings,
                         overwrite=self.overwrite, extra_meta=self.extra_meta,
                         index_type=self.index_type) as writer, \
                tqdm(total=total, unit="doc", desc="encode", disable=not self.show_progress) as bar:
            if self.transform_path is not None:
                shutil.copyfile(self.transform_path, writer.tmp / TRANSFORM_FILE)
            fill = _CorpusFill(self.transform, writer) if self._fills_from_corpus() else None
            for chunk in chunked(docs, self.chunk_size):
                for d in chunk:  # a record built in Python: its text a string of valid Unicode, named by its id
                    check_text(d.text, f"document {d.doc_id!r}")
                ids = [d.doc_id for d in chunk]
                langs = [d.lang for d in chunk]
                raw = self.encoder.encode_docs([d.text for d in chunk], langs, batch_size=self.batch_size)
                where = f"encoder output (documents {ids[0]!r}..{ids[-1]!r})"
                if fill is not None:
                    vectors = fill.add(raw, langs, lambda r, la: transform_and_normalize(
                        r, la, "doc", self.transform, self.alpha, strict=self.strict, where=where,
                        counts=self.counts))
                else:
                    vectors = transform_and_normalize(raw, langs, "doc", self.transform, self.alpha,
                                                      strict=self.strict, where=where, counts=self.counts)
                writer.add(ids, langs, vectors, raw=raw)
                stats.lang_counts.update(langs)
                stats.documents += len(chunk)
                bar.update(len(chunk))
            if self.transform is not None:
                self._record_missing(writer, fill)
        stats.seconds = time.perf_counter() - start
        if fill is not None:
            fill.close()
        logger.info("indexed %d documents in %.1f s (%.1f docs/s) into %s", stats.documents, stats.seconds,
                    stats.docs_per_second, self.index_dir)
        return stats

    def _fills_from_corpus(self) -> bool:
        from mlirkit.transforms.hybrid import policy_of
        from mlirkit.transforms.shift_transform import ShiftTransform

        return (isinstance(self.transform, ShiftTransform) and policy_of(self.transform, self.missing) == "corpus"
                and not self.strict)

    def _record_missing(self, writer: Any, fill: "_CorpusFill | None") -> None:
        """Fill (or keep) the languages the transform lacks, store the transform used and its record."""
        from mlirkit.transforms.hybrid import fill_missing, filled_any
        from mlirkit.transforms.io import save_transform

        means, counts = (None, writer.lang_counts) if fill is None else fill.means.result()
        done = fill_missing(self.transform, counts, means, policy="corpus" if fill is not None else self.missing,
                            origin=str(self.index_dir))
        if done is self.transform:
            return
        if fill is not None:
            fill.amend(done, self.alpha)
        if filled_any(done):
            save_transform(done, writer.tmp / TRANSFORM_FILE, overwrite=True)
        writer.transform = done.describe(self.alpha)


def refuse_partial_fill(transform: LanguageTransform, doc_langs: Iterable[str | None], missing: str | None,
                        what: str) -> None:
    """Refuse, before anything is encoded, an encode that sees part of the corpus at a time (``what``: the shards,
    the Ray blocks) when ``transform`` would fill languages it lacks from the corpus: each part would fill them
    from its own documents, not the whole corpus as a single-process encode does. With every language
    covered, or ``missing="keep"``, the parts give the vectors of a single-process encode."""
    from mlirkit.transforms.hybrid import missing_languages, policy_of
    from mlirkit.transforms.shift_transform import ShiftTransform

    if not isinstance(transform, ShiftTransform) or policy_of(transform, missing) != "corpus":
        return
    lacking = missing_languages(transform, Counter(la for la in doc_langs if la))
    if lacking:
        raise MlirkitError(f"{what}: transform {transform.label} has no vector for "
                           f"{', '.join(f'{la} ({n} documents)' for la, n in lacking.items())}, which a single-process "
                           f"encode fills from the whole corpus and each part would fill from its own documents; "
                           f"encode without {option('transform')} (with {option('save_embeddings', True)}), merge and "
                           f"`python -m mlirkit.shift apply` the transform, or pass {option('missing', 'keep')}")


class _CorpusFill:
    """While an index is written: the corpus's language means, and the raw vectors of the documents whose
    language the transform lacks (their indexed vectors are placeholders until :meth:`amend`)."""

    def __init__(self, transform: LanguageTransform, writer: Any) -> None:
        from mlirkit.transforms.corpus_fit import LanguageMeans

        self.transform, self.writer = transform, writer
        self.means = LanguageMeans()
        self.rows: list[np.ndarray] = []
        self.langs: list[str] = []
        self.path = writer.tmp / "missing.f32"
        self._file = None

    def add(self, raw: np.ndarray, langs: list[str], transform_rows: Any) -> np.ndarray:
        """The vectors to index for one chunk: ``transform_rows(raw, langs)``, and for the rows of languages
        without a vector their normalised raw vector, kept aside for :meth:`amend`."""
        from mlirkit.base.langs import is_unknown, lookup
        from mlirkit.base.vectors import l2_normalize

        self.means.update(raw, langs)
        have = [*self.transform.languages, self.transform.source_lang_]
        met = {la: is_unknown(la) or lookup(la, have) is not None for la in set(langs)}  # pt-BR meets pt
        lacking = np.array([not met[la] for la in langs], dtype=bool)
        if not lacking.any():
            return transform_rows(raw, langs)
        self.writer.defer()
        raw = np.asarray(raw, dtype=np.float32)
        vectors = np.empty_like(raw)
        keep = np.flatnonzero(~lacking)
        if len(keep):
            vectors[keep] = transform_rows(raw[keep], [langs[i] for i in keep])
        vectors[lacking] = l2_normalize(raw[lacking])
        if self._file is None:
            self._file = open(self.path, "wb")
        self._file.write(np.ascontiguousarray(raw[lacking]).tobytes())
        self.rows.append(self.writer.count + np.flatnonzero(lacking))
        self.langs.extend(langs[i] for i in np.flatnonzero(lacking))
        return vectors

    def amend(self, transform: LanguageTransform, alpha: Any) -> None:
        """Index the kept-aside documents with ``transform`` (the filled one)."""
        from mlirkit.base.vectors import transform_and_normalize

        if self._file is None:
            return
        self._file.close()
        rows = np.concatenate(self.rows)
        raw = np.fromfile(self.path, dtype=np.float32).reshape(len(rows), -1)
        self.writer.amend(rows, transform_and_normalize(raw, self.langs, "doc", transform, alpha))
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self.path.unlink(missing_ok=True)


__all__ = ["IndexStats", "Indexer", "refuse_partial_fill"]
