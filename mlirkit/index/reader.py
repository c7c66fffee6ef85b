"""Open an index directory written by mlirkit (or by Pyserini: ``index`` + ``docid`` only)."""
from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.io.files import read_lines
from mlirkit.index.layout import DOCID_FILE, EMBEDDINGS_FILE, FAISS_FILE, LANGS_FILE, META_FILE
from mlirkit.base.langs import UNKNOWN, canonical_codes
from mlirkit.base.option_names import option


#: the types of the ``meta.json`` fields that readers use (None: the field may be null)
_META_TYPES: dict[str, tuple[type, ...]] = {
    "dim": (int,), "count": (int,), "encoder": (dict,), "transform": (dict, type(None)),
    "normalized": (bool,), "has_embeddings": (bool,), "lang_counts": (dict,), "shard": (dict, type(None)),
    "index_type": (dict, type(None)), "encoder_name": (str, type(None)), "encoder_options": (dict, type(None)),
    "format": (str,), "format_version": (int,), "mlirkit_version": (str,), "created": (str,), "metric": (str,),
    "corpus": (str, type(None)), "merged_from": (list, type(None)), "posthoc": (dict,), "rows": (list,),
}
_POSITIVE = ("dim",)


def read_meta(path: Path) -> dict[str, Any]:
    """An index's ``meta.json``: a JSON object whose known fields have their types (:data:`_META_TYPES`);
    anything else (not JSON, not UTF-8, a number where an object belongs) is one error naming the file."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise MlirkitError(f"{path}: cannot read ({e})") from None
    except (ValueError, RecursionError) as e:
        raise MlirkitError(f"{path}: not valid JSON ({str(e) or type(e).__name__})") from None
    if not isinstance(meta, dict):
        raise MlirkitError(f"{path}: expected a JSON object, got {type(meta).__name__}")
    for key, types in _META_TYPES.items():
        if key not in meta:
            continue
        value = meta[key]
        bad_bool = isinstance(value, bool) and bool not in types
        if bad_bool or not isinstance(value, types) or (key in _POSITIVE and value < 1):
            allowed = " or ".join("null" if t is type(None) else {"dict": "an object", "int": "an integer",
                                                                   "str": "a string", "bool": "a boolean",
                                                                   "list": "a list"}[t.__name__]
                                  for t in types)
            raise MlirkitError(f"{path}: field {key!r} must be {allowed}{' >= 1' if key in _POSITIVE else ''}, "
                               f"got {value!r:.60}")
    index_type = meta.get("index_type")
    if isinstance(index_type, dict) and (not isinstance(index_type.get("name"), str)
                                         or not isinstance(index_type.get("params") or {}, dict)):
        raise MlirkitError(f"{path}: field 'index_type' needs a string 'name' and an object 'params'")
    shard = meta.get("shard")
    if isinstance(shard, dict) and any(k in shard and (not isinstance(shard[k], int) or isinstance(shard[k], bool))
                                       for k in ("id", "count")):
        raise MlirkitError(f"{path}: field 'shard' needs integer 'id' and 'count'")
    return meta


class DenseIndex:
    """An index directory. ``meta`` is ``{}`` for a plain Pyserini index (no ``meta.json``).

    ``langs`` falls back to :data:`UNKNOWN` for every document when the ``langs`` file is absent.
    With ``mmap=True`` the FAISS file is memory-mapped (``IO_FLAG_MMAP_IFC``: flat codes, HNSW storage
    and IVF lists stay in the page cache instead of process memory; the index is then read-only).
    """

    def __init__(self, index_dir: str | os.PathLike, *, mmap: bool = False, threads: int | None = None) -> None:
        self.path = Path(index_dir)
        self.mmap = mmap
        self.threads = threads  # FAISS threads a search of this index uses (None: the process's; see Searcher)
        if not (self.path / FAISS_FILE).is_file() or not (self.path / DOCID_FILE).is_file():
            raise MlirkitError(f"{self.path} is not an index directory (needs '{FAISS_FILE}' and '{DOCID_FILE}')")
        meta_path = self.path / META_FILE
        self.meta: dict[str, Any] = read_meta(meta_path) if meta_path.is_file() else {}

    @cached_property
    def docids(self) -> list[str]:
        return read_lines(self.path / DOCID_FILE)

    @cached_property
    def langs(self) -> list[str]:
        """One code per document, in its canonical case (:func:`~mlirkit.base.langs.check_lang`: ``EN`` is
        ``en``); a line that is no language code (``english``) is an error naming the file and line."""
        path = self.path / LANGS_FILE
        if not path.is_file():
            return [UNKNOWN] * len(self.docids)
        langs = read_lines(path)
        if len(langs) != len(self.docids):
            raise MlirkitError(f"{path}: {len(langs)} lines but {len(self.docids)} document ids")
        return canonical_codes(langs, path)

    @cached_property
    def faiss_index(self):
        import faiss

        from mlirkit.io.binary import read_faiss_index

        flags = getattr(faiss, "IO_FLAG_MMAP_IFC", faiss.IO_FLAG_MMAP) if self.mmap else 0
        index = read_faiss_index(self.path / FAISS_FILE, flags)
        if index.ntotal != len(self.docids):
            raise MlirkitError(f"{self.path}: FAISS index has {index.ntotal} vectors but "
                               f"{len(self.docids)} document ids")
        return index

    @property
    def dim(self) -> int:
        return int(self.meta.get("dim") or self.faiss_index.d)

    @property
    def encoder(self) -> dict[str, Any] | None:
        return self.meta.get("encoder")

    @property
    def transform(self) -> dict[str, Any] | None:
        return self.meta.get("transform")

    @property
    def index_spec(self):
        """The :class:`~mlirkit.index.types.IndexSpec` (``meta.json``'s ``index_type``, else inferred)."""
        from mlirkit.index.types import spec_of

        return spec_of(self)

    @property
    def has_embeddings(self) -> bool:
        return (self.path / EMBEDDINGS_FILE).is_file()

    def embeddings(self, mmap: bool = True) -> np.ndarray:
        """The untransformed vectors from ``embeddings.npy`` (memory-mapped by default), checked: a float array of
        one row per document (:func:`mlirkit.io.binary.load_npy`: never a pickle, never cut short)."""
        from mlirkit.io.binary import load_npy

        if not self.has_embeddings:
            raise MlirkitError(f"{self.path} has no {EMBEDDINGS_FILE} (encode with {option('save_embeddings', True)})")
        path = self.path / EMBEDDINGS_FILE
        array = load_npy(path, mmap=mmap)
        if array.ndim != 2 or array.dtype.kind != "f" or len(array) != len(self.docids):
            raise MlirkitError(f"{path}: expected a float array of {len(self.docids)} rows (one per document id), "
                               f"got shape {array.shape} {array.dtype}")
        return array

    def indexed_vectors(self) -> np.ndarray:
        """The vectors stored in the FAISS index (reconstructed; flat and HNSW indexes only)."""
        require_reconstructable(self)
        index = self.faiss_index
        try:
            return index.reconstruct_n(0, index.ntotal)
        except RuntimeError as e:
            raise MlirkitError(f"{self.path}: cannot reconstruct vectors from this FAISS index ({e})") from None


def require_reconstructable(index) -> None:
    """Refuse a post-hoc transform of an index whose FAISS vectors cannot be recovered exactly.

    ``index`` is a :class:`DenseIndex` (or a path to one). Flat and HNSW indexes
    pass (HNSW keeps the full vectors; a transformed copy needs a new graph, which the caller builds
    with ``IndexWriter(index_type=spec_of(index))``). Compressed ones (ivf-pq) raise
    :class:`MlirkitError`: their codes were trained for the old vector space, so the index has to be
    rebuilt from ``embeddings.npy`` (untransformed vectors) -- or re-encoded when that file is absent.
    """
    from mlirkit.index.types import INDEX_TYPES, is_exact, spec_of

    if isinstance(index, (str, os.PathLike)):
        index = DenseIndex(index)
    recorded = index.meta.get("index_type") if index.meta else None
    if recorded and recorded.get("name") in INDEX_TYPES:
        exact = INDEX_TYPES.get(recorded["name"]).exact_vectors
        name = recorded["name"]
    else:
        exact = is_exact(index.faiss_index)
        name = spec_of(index).name
    if exact:
        return
    if index.has_embeddings:
        hint = f"rebuild from {EMBEDDINGS_FILE} (the untransformed vectors, present in {index.path})"
    else:
        hint = (f"rebuild from {EMBEDDINGS_FILE}, which this index lacks: re-encode with "
                f"{option('save_embeddings', True)} (and {option('transform')}) to get a transformed {name} index")
    raise MlirkitError(f"{index.path}: a {name} index holds compressed vectors that cannot be transformed "
                       f"after the fact; {hint}")


def index_provenance(index: Any) -> dict[str, Any]:
    """``{"path", "meta_sha256"}`` of an index directory or an open index (``DenseIndex``, or a sharded
    one: one entry per shard in ``shards``), what a run's provenance sidecar records about it."""
    from mlirkit.io.files import file_sha256

    def one(path: Path) -> dict[str, Any]:
        meta = path / META_FILE
        return {"path": str(path), "meta_sha256": file_sha256(meta) if meta.is_file() else None}

    if isinstance(index, (str, os.PathLike)):
        return one(Path(index))
    shards = getattr(index, "shards", None)
    if shards and len(shards) > 1:
        return {"shards": [one(Path(s.path)) for s in shards]}
    return one(Path(index.path))


__all__ = ["DenseIndex", "index_provenance", "read_meta", "require_reconstructable"]
