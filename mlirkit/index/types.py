"""Index types (``flat``, ``hnsw``, ``ivf-pq``): parameters, FAISS factory strings, memory model.

All types use inner product on L2-normalised vectors (= cosine), as ``IndexFlatIP`` does.

- ``flat``: exact search, ``IndexFlatIP``; 4·d bytes per document.
- ``hnsw``: ``IndexHNSWFlat`` (Malkov & Yashunin, 2018, "Efficient and robust approximate nearest
  neighbor search using Hierarchical Navigable Small World graphs"): the full vectors plus a graph of
  ``M`` neighbours per node per level (``2·M`` on level 0); ~4·d + 8·M bytes per document. The vectors
  are kept exactly, so they can be reconstructed, but the graph cannot be updated in place.
- ``ivf-pq``: ``IndexIVFPQ`` (Jégou, Douze & Schmid, 2011, "Product quantization for nearest neighbor
  search"): a coarse k-means quantiser with ``nlist`` cells, residuals coded by ``m`` sub-quantisers of
  ``nbits`` bits; ``m·nbits/8`` code bytes + 8 id bytes per document. Needs training, so the writer
  collects the (already transformed and normalised) vectors first and trains on a sample of them: with
  SHIFT the quantiser lives in the shifted space. Codes are lossy: the vectors cannot be recovered.

Search-time settings (``ef_search``, ``nprobe``) are stored in the FAISS file, so Pyserini's
``FaissSearcher`` (which opens any FAISS index with ``faiss.read_index``) uses them too.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from mlirkit.base.options import parse_key_values
from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry, did_you_mean
from mlirkit.base.option_names import option

logger = logging.getLogger(__name__)

DEFAULT_INDEX_TYPE = "flat"


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: Any
    help: str
    minimum: float = 0


@dataclass(frozen=True)
class IndexType:
    """One index type: its parameters (0 = chosen automatically where documented) and how to build it."""

    name: str
    params: tuple[Param, ...]
    trained: bool
    #: the FAISS index stores the vectors exactly (``reconstruct`` returns what was added)
    exact_vectors: bool
    factory: Callable[[int, Mapping[str, Any]], str]
    bytes_per_doc: Callable[[int, Mapping[str, Any]], float]
    #: fixed bytes independent of the number of documents (codebooks, centroids)
    fixed_bytes: Callable[[int, Mapping[str, Any]], float] = lambda d, p: 0.0
    description: str = ""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        names = [p.name for p in self.params]
        known = ", ".join(names) if names else "none"
        raise MlirkitError(f"index type {self.name!r} has no parameter {name!r}{did_you_mean(name, names)}; "
                           f"known: {known}")


def _hnsw_factory(dim: int, p: Mapping[str, Any]) -> str:
    return f"HNSW{p['M']},Flat"


def _ivfpq_factory(dim: int, p: Mapping[str, Any]) -> str:
    return f"IVF{p['nlist']},PQ{p['m']}x{p['nbits']}"


INDEX_TYPES: Registry[IndexType] = Registry("index type")
INDEX_TYPES.register("flat", IndexType(
    "flat", (), trained=False, exact_vectors=True, factory=lambda d, p: "Flat",
    bytes_per_doc=lambda d, p: 4.0 * d, description="exact inner-product search (IndexFlatIP)"))
INDEX_TYPES.register("hnsw", IndexType(
    "hnsw", (Param("M", int, 32, "graph neighbours per node (2*M on level 0)", 2),
             Param("ef_construction", int, 200, "candidate list size while building", 1),
             Param("ef_search", int, 128, "candidate list size while searching (stored in the index)", 1)),
    trained=False, exact_vectors=True, factory=_hnsw_factory,
    # vectors + level-0 links (2M int32) + upper levels (M int32 with probability 1/M each, geometric) + level/offset arrays
    bytes_per_doc=lambda d, p: 4.0 * d + 8.0 * p["M"] + 4.0 * p["M"] / (p["M"] - 1) + 12.0,
    description="graph-based approximate search over the full vectors (IndexHNSWFlat)"))
INDEX_TYPES.register("ivf-pq", IndexType(
    "ivf-pq", (Param("nlist", int, 0, "coarse cells; 0 = 4*sqrt(n) capped at n/39"),
               Param("m", int, 0, "PQ sub-quantisers (code bytes at 8 bits); must divide the dimension; "
                                  "0 = largest divisor of d that is <= d/4"),
               Param("nbits", int, 8, "bits per sub-quantiser code", 1),
               Param("nprobe", int, 32, "cells visited per query (stored in the index; capped at nlist)", 1),
               Param("train_size", int, 100_000, "vectors sampled to train the quantisers; 0 = all")),
    trained=True, exact_vectors=False, factory=_ivfpq_factory,
    bytes_per_doc=lambda d, p: p["m"] * p["nbits"] / 8.0 + 8.0,
    fixed_bytes=lambda d, p: 4.0 * d * p["nlist"] + 4.0 * d * (1 << p["nbits"]),
    description="inverted file with product-quantised residuals (IndexIVFPQ), lossy and compact"))


def index_type_names() -> list[str]:
    return INDEX_TYPES.names()


@dataclass(frozen=True)
class IndexSpec:
    """An index type with its parameters (unset ones at their defaults); what ``meta.json`` records."""

    name: str = DEFAULT_INDEX_TYPE
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> IndexType:
        return INDEX_TYPES.get(self.name)

    @classmethod
    def create(cls, name: str = DEFAULT_INDEX_TYPE, params: Mapping[str, Any] | None = None) -> "IndexSpec":
        itype = INDEX_TYPES.get(name)
        values = {p.name: p.default for p in itype.params}
        for key, value in (params or {}).items():
            param = itype.param(key)
            try:
                number = param.type(value)
                if isinstance(value, float) and param.type is int and number != value:
                    raise ValueError
            except (TypeError, ValueError):
                raise MlirkitError(f"index parameter {key}={value!r}: expected {param.type.__name__}") from None
            if number < param.minimum:
                raise MlirkitError(f"index parameter {key}={number} must be >= {param.minimum:g}")
            values[key] = number
        return cls(name, values)

    @classmethod
    def parse(cls, name: str | None, assignments: Sequence[str] | None = None) -> "IndexSpec":
        """From the CLI: ``--index-type hnsw --index-param M=16 ef_search=64``."""
        return cls.create(name or DEFAULT_INDEX_TYPE, parse_key_values(assignments, "--index-param"))

    @classmethod
    def coerce(cls, value: "IndexSpec | str | Mapping[str, Any] | None") -> "IndexSpec":
        """An :class:`IndexSpec` from a spec, a type name, a ``meta.json`` entry, or None (flat)."""
        if value is None:
            return cls.create()
        if isinstance(value, IndexSpec):
            return value
        if isinstance(value, str):
            return cls.create(value)
        if isinstance(value, Mapping) and "name" in value:
            return cls.create(value["name"], value.get("params") or {})
        raise MlirkitError(f"not an index type: {value!r}")

    def resolve(self, dim: int, count: int) -> "IndexSpec":
        """Automatic parameters (0) replaced by values for ``dim`` and ``count`` documents; checked."""
        p = dict(self.params)
        if self.name == "ivf-pq":
            if p["nlist"] == 0:
                p["nlist"] = max(1, min(int(round(4 * math.sqrt(count))), count // 39))
            if p["m"] == 0:
                p["m"] = max(m for m in range(1, max(1, dim // 4) + 1) if dim % m == 0)
            if dim % p["m"]:
                raise MlirkitError(f"ivf-pq: m={p['m']} does not divide the dimension {dim}")
            if p["nbits"] > 16:
                raise MlirkitError(f"ivf-pq: nbits={p['nbits']} must be <= 16")
            train = count if p["train_size"] == 0 else min(count, p["train_size"])
            if p["nlist"] > train:
                raise MlirkitError(f"ivf-pq: nlist={p['nlist']} cells but only {train} training vectors "
                                   f"(lower nlist or index more documents)")
            if train < (1 << p["nbits"]):
                raise MlirkitError(f"ivf-pq: {train} training vectors for {1 << p['nbits']} codes per "
                                   f"sub-quantiser (nbits={p['nbits']}): lower nbits or use {option('index_type')} flat/hnsw")
            p["nprobe"] = min(p["nprobe"], p["nlist"])
        return IndexSpec(self.name, p)

    def factory(self, dim: int) -> str:
        return self.type.factory(dim, self.params)

    def to_meta(self, dim: int, **extra: Any) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "factory": self.factory(dim), **extra}

    def bytes_per_doc(self, dim: int) -> float:
        return self.type.bytes_per_doc(dim, self.params)

    def fixed_bytes(self, dim: int) -> float:
        return self.type.fixed_bytes(dim, self.params)

    def new_index(self, dim: int):
        """An empty FAISS index (inner product), with build- and search-time settings applied."""
        import faiss

        if self.name == "flat":
            return faiss.IndexFlatIP(dim)
        index = faiss.index_factory(dim, self.factory(dim), faiss.METRIC_INNER_PRODUCT)
        if self.name == "hnsw":
            index.hnsw.efConstruction = self.params["ef_construction"]
        if self.name == "ivf-pq":
            # polysemous training (codes ordered for Hamming filtering) is on by default, unused by
            # IVFPQ search and 20x the cost of the PQ training itself
            faiss.downcast_index(index).do_polysemous_training = False
        set_search_params(index, self)
        return index


def set_search_params(index, spec: IndexSpec | None = None, **overrides: Any) -> None:
    """Apply ``ef_search`` / ``nprobe`` (from ``spec`` and ``overrides``) to a FAISS index."""
    import faiss

    params = {**(spec.params if spec is not None else {}), **{k: v for k, v in overrides.items() if v is not None}}
    hnsw = _unwrap(index)
    if "ef_search" in params and hasattr(hnsw, "hnsw"):
        hnsw.hnsw.efSearch = int(params["ef_search"])
    if "nprobe" in params:
        try:
            ivf = faiss.extract_index_ivf(index)
        except RuntimeError:
            ivf = None
        if ivf is not None:
            ivf.nprobe = int(min(params["nprobe"], ivf.nlist))


def _unwrap(index):
    import faiss

    return faiss.downcast_index(index)


def spec_of(index) -> IndexSpec:
    """The :class:`IndexSpec` of an open :class:`~mlirkit.index.reader.DenseIndex` (from ``meta.json``;
    inferred from the FAISS class for a plain Pyserini index)."""
    recorded = index.meta.get("index_type") if getattr(index, "meta", None) else None
    if recorded:
        return IndexSpec(recorded["name"], dict(recorded.get("params") or {}))
    return infer_spec(index.faiss_index)


def infer_spec(faiss_index) -> IndexSpec:
    """Best-effort :class:`IndexSpec` of a FAISS index written by another tool."""
    import faiss

    idx = faiss.downcast_index(faiss_index)
    if isinstance(idx, faiss.IndexFlat):
        return IndexSpec("flat", {})
    if isinstance(idx, faiss.IndexHNSWFlat):
        return IndexSpec("hnsw", {"M": int(idx.hnsw.nb_neighbors(1)), "ef_construction": int(idx.hnsw.efConstruction),
                                  "ef_search": int(idx.hnsw.efSearch)})
    if isinstance(idx, faiss.IndexIVFPQ):
        return IndexSpec("ivf-pq", {"nlist": int(idx.nlist), "m": int(idx.pq.M), "nbits": int(idx.pq.nbits),
                                    "nprobe": int(idx.nprobe), "train_size": 0})
    return IndexSpec(f"faiss:{type(idx).__name__}", {})


def is_exact(faiss_index) -> bool:
    """True when the FAISS index returns exactly the added vectors from ``reconstruct``."""
    import faiss

    idx = faiss.downcast_index(faiss_index)
    if isinstance(idx, faiss.IndexFlat):
        return True
    if isinstance(idx, faiss.IndexHNSW):
        return isinstance(faiss.downcast_index(idx.storage), faiss.IndexFlat)
    return False


__all__ = ["DEFAULT_INDEX_TYPE", "INDEX_TYPES", "IndexSpec", "is_exact", "set_search_params", "spec_of"]
