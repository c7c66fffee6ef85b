"""``python -m mlirkit.serve``: search one index over HTTP (REST API, OpenAPI document, a web page at ``/``),
free text in any language, plain and with the query-time SHIFT of each query's language. Binds 127.0.0.1
unless told otherwise; nothing in a request names a file (docs/serve.md).
"""
from __future__ import annotations

import argparse
import logging
from typing import Sequence

from mlirkit.base.cli import ArgumentParser, configure_logging, examples
from mlirkit.base.option_names import cli_main
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import add_verbosity_args, positive_int
from mlirkit.base.threads import set_threads
from mlirkit.encoders.options import add_encoder_args, encoder_from_args
from mlirkit.serve.mcp import MCP_TRANSPORTS

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)


def _port(value: str) -> int:
    port = int(value)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return port


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="python -m mlirkit.serve", description=__doc__, epilog=examples(
        "python -m mlirkit.serve --index indexes/ddtp-e5 --transform vectors/e5-gettext.shift"))
    p.add_argument("--index", required=True, help="the index directory to search (python -m mlirkit.encode), or a "
                        "Qdrant shard of one (python -m mlirkit.index qdrant)")
    p.add_argument("--transform", default=None,
                   help="SHIFT file for the query-time shift (python -m mlirkit.shift fit; needs --save-embeddings "
                        "in the index); without it requests are searched without the shift")
    p.add_argument("--lexical", default=None,
                   help="a BM25 index of python -m mlirkit.lexical to fuse with (requests with fusion: true)")
    p.add_argument("--corpus", default=None,
                   help="where the documents' texts are, for snippets and /v1/documents (default: the corpus "
                        "recorded in the index's meta.json; without either, hits have no snippet)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (0.0.0.0: every interface)")
    p.add_argument("--port", type=_port, default=8000, help="TCP port (0: any free port)")
    p.add_argument("--mcp", choices=MCP_TRANSPORTS, default=None,
                   help="serve the MCP tools search and get_document instead of REST: over stdio, or over streamable "
                        "HTTP at http://HOST:PORT/mcp")
    add_encoder_args(p, default=None)
    g = p.add_argument_group("engine (the Ray options need --engine ray)")
    g.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process; ray: replicas on Ray Serve (pip install 'mlirkit[ray]', docs/scale.md)")
    g.add_argument("--address", default=None, help="Ray cluster address (auto: this node's; default: a new local one)")
    g.add_argument("--num-workers", type=positive_int, default=None, help="replicas of the service (default: 1)")
    g.add_argument("--num-cpus-per-worker", type=float, default=None, help="CPUs reserved per replica (default: 1)")
    add_verbosity_args(p)
    return p


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.quiet)
    from mlirkit.serve.service import SearchService

    if args.engine == "ray" or _ray_flags(args):
        return _serve_on_ray(args)
    set_threads(args.threads)
    encoder = encoder_from_args(args) if args.encoder else None  # default: the index's own
    service = SearchService(args.index, transform=args.transform, lexical=args.lexical, corpus=args.corpus,
                            encoder=encoder)
    if args.mcp:
        from mlirkit.serve.mcp import run_mcp

        try:
            run_mcp(service, args.mcp, host=args.host, port=args.port)
        finally:
            service.close()
        return 0
    import uvicorn

    from mlirkit.serve.rest import create_app

    logger.info("serving %s on http://%s:%d/", args.index, args.host, args.port)
    try:
        uvicorn.run(create_app(service), host=args.host, port=args.port,
                    log_level="warning" if args.quiet else "info")
    finally:
        service.close()
    return 0


def _ray_flags(args: argparse.Namespace) -> list[str]:
    return [f for f, v in (("--address", args.address), ("--num-workers", args.num_workers),
                           ("--num-cpus-per-worker", args.num_cpus_per_worker)) if v is not None]


def _serve_on_ray(args: argparse.Namespace) -> int:
    """``--engine ray``: each replica opens the index with the index's own encoder (mlirkit.serve.ray_engine)."""
    if args.engine != "ray":
        raise MlirkitError(f"{' '.join(_ray_flags(args))} need --engine ray (the local engine serves from this process)")
    if args.mcp or args.encoder:
        raise MlirkitError(f"{'--mcp' if args.mcp else '--encoder'} serves from this process: leave out --engine ray")
    from mlirkit.search.qdrant_searcher import is_qdrant_shard
    from mlirkit.serve.ray_engine import run_ray
    from mlirkit.serve.service import open_index

    if is_qdrant_shard(args.index):
        raise MlirkitError(f"{args.index}: a Qdrant Edge shard is opened by one process at a time: serve it with the "
                           f"local engine (leave out --engine ray), or its points from a Qdrant server (docs/scale.md)")
    open_index(args.index)  # a missing or foreign index is refused here, in one line, before Ray starts
    options = {"index_dir": args.index, "transform": args.transform, "lexical": args.lexical, "corpus": args.corpus}
    run_ray(options, address=args.address, host=args.host, port=args.port, num_workers=args.num_workers or 1,
            num_cpus_per_worker=args.num_cpus_per_worker or 1.0)
    return 0
