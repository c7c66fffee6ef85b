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
from mlirkit.base.options import add_verbosity_args
from mlirkit.base.threads import set_threads
from mlirkit.encoders.options import add_encoder_args, encoder_from_args

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
    p.add_argument("--index", required=True, help="the index directory to search (python -m mlirkit.encode)")
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
    add_encoder_args(p, default=None)
    add_verbosity_args(p)
    return p


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.quiet)
    from mlirkit.serve.service import SearchService

    set_threads(args.threads)
    encoder = encoder_from_args(args) if args.encoder else None  # default: the index's own
    service = SearchService(args.index, transform=args.transform, lexical=args.lexical, corpus=args.corpus,
                            encoder=encoder)
    import uvicorn

    from mlirkit.serve.rest import create_app

    logger.info("serving %s on http://%s:%d/", args.index, args.host, args.port)
    try:
        uvicorn.run(create_app(service), host=args.host, port=args.port,
                    log_level="warning" if args.quiet else "info")
    finally:
        service.close()
    return 0
