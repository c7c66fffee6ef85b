"""The index-type options of the command lines that build an index (``encode``, ``index merge``):
``--index-type NAME [--index-param KEY=VALUE ...]``, read into an :class:`~mlirkit.index.types.IndexSpec`."""
from __future__ import annotations

from mlirkit.base.errors import MlirkitError
from mlirkit.index.types import DEFAULT_INDEX_TYPE, INDEX_TYPES, IndexSpec


def add_index_type_args(parser, *, default: str | None = DEFAULT_INDEX_TYPE) -> None:
    """``--index-type`` (choices from :data:`INDEX_TYPES`) and ``--index-param KEY=VALUE ...``."""
    params = "; ".join(f"{t}: " + (", ".join(f"{p.name}={p.default}" for p in INDEX_TYPES.get(t).params) or "none")
                       for t in INDEX_TYPES.names())
    g = parser.add_argument_group("index type")
    g.add_argument("--index-type", choices=INDEX_TYPES.names(), default=default,
                   help=f"FAISS index type (default: {default or 'the shards type'})")
    g.add_argument("--index-param", nargs="+", default=None, metavar="KEY=VALUE",
                   help=f"index parameters (defaults {params}; 0 = automatic)")


def index_spec_from_args(args) -> IndexSpec | None:
    if args.index_type is None:
        if args.index_param:
            raise MlirkitError("--index-param needs --index-type")
        return None
    return IndexSpec.parse(args.index_type, args.index_param)


__all__ = ["add_index_type_args", "index_spec_from_args"]
