"""Apply a transform to an existing index, writing a new index directory (the input is never modified).

Source vectors, in order of preference:

1. ``embeddings.npy`` (the untransformed encoder output saved with ``--save-embeddings``): the result
   is identical, bit for bit, to transforming at index time (same row-wise float32 operations, same
   L2 normalisation, same meta.json apart from ``created`` and ``posthoc``, same ``transform.safetensors``).
2. the vectors reconstructed from a flat FAISS index, when the index holds untransformed vectors.
   These are the *indexed* vectors, i.e. already L2-normalised by mlirkit and by Pyserini's
   ``--l2-norm`` encoders; the transform is then applied to normalised vectors. That equals
   index-time transformation only for encoders whose own output is normalised (e5, for example,
   up to float rounding); otherwise the shift acts on a rescaled vector.

An index built by Pyserini (``index`` + ``docid``, no ``langs``/``meta.json``) needs a doc-id -> language
file (``--doc-langs``: any form :func:`mlirkit.io.doc_langs.read_doc_langs` reads, e.g. ``docid<TAB>lang``
lines or JSONL ``{"id"|"docid"|"_id"|"doc_id": ..., "lang": ...}``);
its encoder cannot be verified and is recorded as the transform's.
"""
from __future__ import annotations

import logging
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from mlirkit.base.vectors import transform_and_normalize
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.option_names import option
from mlirkit.index.layout import LANGS_FILE
from mlirkit.io.doc_langs import read_doc_langs
from mlirkit.transforms.alpha import Alpha, AlphaLike
from mlirkit.transforms.defaults import DEFAULT_ALPHA

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

__all__ = ["WRITER_KEYS", "apply_to_index", "fill_missing_from_index", "refuse_input_as_output"]

logger = logging.getLogger(__name__)

WRITER_KEYS = {"format", "format_version", "mlirkit_version", "created", "encoder", "dim", "metric",
               "normalized", "transform", "count", "lang_counts", "has_embeddings"}


def fill_missing_from_index(index_dir: str | os.PathLike, transform: "LanguageTransform | str | os.PathLike", *,
                            missing: str | None = None, doc_langs: str | os.PathLike | Mapping[str, str] | None = None,
                            force: bool = False) -> "LanguageTransform":
    """The fit step for the index's languages ``transform`` has no vector for (``missing``: ``"corpus"`` fills
    them from this index's untransformed vectors, ``"keep"`` leaves them unshifted; default the transform's
    own policy, :func:`mlirkit.transforms.hybrid.fill_missing`): returns the transform to apply, whose
    ``meta["missing_languages"]`` records what was done. :func:`apply_to_index` and the query-time shift
    never fit: they apply what this step returns (``python -m mlirkit.shift apply`` runs it first)."""
    from mlirkit.transforms.hybrid import fill_missing_from_corpus

    t, src, langs, _ = _open(index_dir, transform, doc_langs, force)
    read, origin = _source_vectors(src)
    n, dim = len(src.docids), src.dim
    return fill_missing_from_corpus(t, _Rows(read, n, dim, f"{index_dir} ({origin}"), langs, policy=missing,
                                    origin=str(index_dir), explicit=missing is not None)


def apply_to_index(index_dir: str | os.PathLike, transform: "LanguageTransform | str | os.PathLike",
                   output: str | os.PathLike, *, alpha: AlphaLike = DEFAULT_ALPHA,
                   doc_langs: str | os.PathLike | Mapping[str, str] | None = None, overwrite: bool = False,
                   strict: bool = False, force: bool = False, chunk_rows: int = 65536,
                   show_progress: bool = False, missing: str | None = None) -> dict[str, Any]:
    """Write ``output`` = the index at ``index_dir`` with ``transform`` applied to its documents.

    ``missing``: the policy for the index's languages the transform has no vector for, ``"corpus"`` or
    ``"keep"``; default the transform's own (:data:`mlirkit.transforms.defaults.DEFAULT_MISSING`). Applying
    never fits: a language the corpus policy would fill needs the fit step first (:func:`fill_missing_from_index`,
    whose result is applied here and stored in the output index, ``transform.safetensors``, and described in its
    meta.json, ``missing_languages``); kept languages are recorded."""
    from tqdm.auto import tqdm

    from mlirkit.index import IndexWriter
    from mlirkit.index.layout import TRANSFORM_FILE
    from mlirkit.transforms.hybrid import filled_any, resolve_missing

    alpha = Alpha.coerce(alpha)
    index_dir, output = Path(index_dir), Path(output)
    refuse_input_as_output(index_dir, output)
    given, src, langs, encoder = _open(index_dir, transform, doc_langs, force)
    if not filled_any(given) and (given.path is None or not Path(given.path).is_file()):
        raise MlirkitError("the transform must be saved to a file before it is applied to an index")
    n, dim = len(src.docids), src.dim
    read, origin = _source_vectors(src)
    t = resolve_missing(given, Counter(langs), policy=missing, origin=str(index_dir), explicit=missing is not None)
    extra = {k: v for k, v in src.meta.items() if k not in WRITER_KEYS}
    extra["posthoc"] = {"source_index": str(index_dir), "vectors": origin}
    counts: Counter[str] = Counter()
    with IndexWriter(output, dim=dim, encoder=encoder, normalized=True, transform=t.describe(alpha),
                     save_embeddings=src.has_embeddings, overwrite=overwrite, extra_meta=extra) as writer:
        if filled_any(t):  # the filled transform is the index's own
            from mlirkit.transforms.io import save_transform

            save_transform(t, writer.tmp / TRANSFORM_FILE)
            t.path = Path(output) / TRANSFORM_FILE  # where it will be: messages name no temporary folder
        else:
            shutil.copyfile(given.path, writer.tmp / TRANSFORM_FILE)
        writer.transform = t.describe(alpha)
        for a in tqdm(range(0, n, chunk_rows), desc="apply", unit="chunk", disable=not show_progress):
            b = min(a + chunk_rows, n)
            raw = read(a, b)
            vecs = transform_and_normalize(raw, langs[a:b], "doc", t, alpha, strict=strict, counts=counts,
                                           where=f"{index_dir} ({origin}, rows {a}-{b - 1})")
            writer.add(src.docids[a:b], langs[a:b], vecs, raw=raw if src.has_embeddings else None)
    stats = {"documents": n, "vectors": origin, "output": str(output), **{k: v for k, v in sorted(counts.items())}}
    if "missing_languages" in t.meta and (t is not given or filled_any(given)):
        stats["missing_languages"] = t.meta["missing_languages"]
    logger.info("wrote %s (%d documents, %s)", output, n, ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "all transformed")
    return stats


def refuse_input_as_output(index_dir: str | os.PathLike, output: str | os.PathLike) -> None:
    """Post-hoc apply never modifies its input: ``output`` naming the input index is refused."""
    if Path(output).resolve() == Path(index_dir).resolve():
        raise MlirkitError(f"{option('output')} {output} is the input index; post-hoc apply never modifies its input")


def _open(index_dir: str | os.PathLike, transform: "LanguageTransform | str | os.PathLike",
          doc_langs: str | os.PathLike | Mapping[str, str] | None, force: bool) -> tuple[Any, Any, list, Any]:
    """``(transform, index, document languages, encoder)`` of a post-hoc step, checked against each other."""
    from mlirkit.index import DenseIndex
    from mlirkit.transforms.io import load_transform
    from mlirkit.transforms.transform import LanguageTransform

    t = transform if isinstance(transform, LanguageTransform) else load_transform(transform)
    index_dir = Path(index_dir)
    src = DenseIndex(index_dir)
    n, dim = len(src.docids), src.dim
    if dim != t.dim:
        raise MlirkitError(f"index {index_dir} has dimension {dim} but transform {t.label} has {t.dim}")
    encoder = src.encoder
    if encoder is None:
        logger.warning("%s has no meta.json: its encoder cannot be checked against the transform's", index_dir)
        encoder = t.encoder
    else:
        t.check_encoder(encoder, force=force, dim=dim)
    langs = list(src.langs)
    if doc_langs is not None:
        mapping = doc_langs if isinstance(doc_langs, Mapping) else read_doc_langs(doc_langs)
        langs = [mapping.get(d, UNKNOWN) for d in src.docids]
        absent = sum(1 for d in src.docids if d not in mapping)
        if absent:
            logger.warning("%d of %d documents have no language in %s (left unchanged)", absent, n, doc_langs)
    elif not (src.path / LANGS_FILE).is_file():
        logger.warning("%s has no langs file and no %s was given: every document is of unknown "
                       "language and stays unchanged", index_dir, option("doc_langs"))
    return t, src, langs, encoder


def _source_vectors(src: Any) -> tuple[Callable[[int, int], np.ndarray], str]:
    """``(read(a, b) -> rows [a:b] float32, origin)`` of the vectors a post-hoc step transforms (module docstring)."""
    index_dir, n, dim = src.path, len(src.docids), src.dim
    if src.has_embeddings:
        vectors = src.embeddings(mmap=True)
        if vectors.shape != (n, dim):
            raise MlirkitError(f"{index_dir}/embeddings.npy has shape {vectors.shape}, expected {(n, dim)}")
        return (lambda a, b: np.asarray(vectors[a:b], dtype=np.float32)), "embeddings.npy"
    if src.transform:
        raise MlirkitError(f"{index_dir} holds transformed vectors ({src.transform.get('method')}) and no "
                           f"embeddings.npy; re-encode with {option('save_embeddings', True)} to apply another transform")
    index = src.faiss_index
    logger.info("%s has no embeddings.npy: transforming the indexed (normalised) vectors", index_dir)

    def read(a: int, b: int) -> np.ndarray:
        try:
            return index.reconstruct_n(a, b - a)
        except RuntimeError as e:
            raise MlirkitError(f"{index_dir}: cannot reconstruct vectors from this FAISS index ({e})") from None
    return read, "reconstructed"


class _Rows:
    """Rows ``[a:b]`` of an index's source vectors through its chunk reader (what ``language_means`` reads),
    checked finite with the rows named as apply names them."""

    ndim = 2

    def __init__(self, read: Any, n: int, dim: int, where: str) -> None:
        self.read, self.shape, self.where = read, (n, dim), where

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: slice) -> np.ndarray:
        from mlirkit.base.vectors import check_finite

        a, b, _ = rows.indices(self.shape[0])
        block = self.read(a, b)
        check_finite("doc vectors", block, f"{self.where}, rows {a}-{b - 1})")
        return block
