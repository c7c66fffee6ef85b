"""``python -m mlirkit.pyserini.search [wrapper options] --index DIR --topics T --output RUN ...``

Runs Pyserini's own ``python -m pyserini.search.faiss`` (same flags, Pyserini's ``FaissSearcher`` and
run writer) with mlirkit's query encoders selectable by ``--encoder-class mlirkit|mlirkit-hf|...``.
Query vectors are ``normalize(T_q(g(q)))`` as in ``mlirkit.search``: ``T_q`` is the query side of the
index's language transform when it has one (centering, LIR; never SHIFT), which needs ``--query-lang``.
When the index records its encoder (``meta.json``), a different query encoder is refused unless
``--force``. Queries are encoded in batches: Pyserini's ``--batch-size`` defaults to
:data:`DEFAULT_QUERY_BATCH` here (Pyserini's own default, 1, encodes one query per forward pass), so
``FaissSearcher.batch_search`` hands them to :meth:`MlirkitQueryEncoder.encode_batch`.
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Sequence

from mlirkit.cli import configure_logging

logger = logging.getLogger(__name__)

PYSERINI_MODULE = "pyserini.search.faiss"
#: queries per encoder call when the command line gives no ``--batch-size``
DEFAULT_QUERY_BATCH = 64


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mlirkit.pyserini.search", add_help=False, allow_abbrev=False,
                                usage="%(prog)s [wrapper options] <pyserini.search.faiss arguments>",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("wrapper options (everything else is passed to pyserini.search.faiss; -h shows its help)")
    g.add_argument("--wrapper-help", action="store_true", help="show this help and exit")
    g.add_argument("--encoder-option", action="append", default=[], metavar="KEY=VALUE",
                   help="mlirkit encoder option (max_length, query_prefix, pooling, normalize, batch_size, "
                        "device, dtype, threads, backend, precision); repeatable")
    g.add_argument("--query-lang", default=None, help="language of the topics (for query-side transforms)")
    g.add_argument("--force", action="store_true", help="search with an encoder that differs from the index's (warned)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from mlirkit.pyserini.wrapper import peek_option, split_wrapper_args

    parsed = split_wrapper_args(build_parser(), argv, (("--max-length", "max_length", int), ("--device", "device", str)))
    if parsed is None:
        return 0
    args, rest, options = parsed
    configure_logging()
    if peek_option(rest, "--batch-size") is None:
        rest = [*rest, "--batch-size", str(DEFAULT_QUERY_BATCH)]

    from mlirkit.pyserini.registration import EncoderSettings

    settings = EncoderSettings(options=options, query_lang=args.query_lang, force=args.force)
    index = peek_option(rest, "--index")
    if index and (Path(index) / "meta.json").is_file():
        settings.index_encoder, settings.transform, settings.alpha = index_query_side(Path(index))
    return run(rest, settings)


def index_query_side(index: Path):
    """``(encoder fingerprint, query-side transform or None, alpha)`` recorded by an mlirkit index."""
    from mlirkit.index.layout import META_FILE, TRANSFORM_FILE

    meta = json.loads((index / META_FILE).read_text(encoding="utf-8"))
    transform, alpha = None, 1.0
    if meta.get("transform"):
        from mlirkit.shift import load_transform

        loaded = load_transform(index / TRANSFORM_FILE)
        if loaded.touches("query"):
            transform, alpha = loaded, meta["transform"].get("alpha", 1.0)
    return meta.get("encoder"), transform, alpha


def run(pyserini_argv: Sequence[str], settings) -> int:
    """Run ``pyserini.search.faiss`` with ``pyserini_argv`` and the mlirkit classes built with ``settings``."""
    from mlirkit.pyserini.registration import register
    from mlirkit.pyserini.wrapper import run_pyserini_module

    names = register(settings)
    return run_pyserini_module(PYSERINI_MODULE, pyserini_argv, names)
