"""``python -m mlirkit.pyserini.search [wrapper options] --index DIR --topics T --output RUN ...``

Runs Pyserini's own ``python -m pyserini.search.faiss`` (same flags, Pyserini's ``FaissSearcher`` and
run writer) with mlirkit's query encoders selectable by ``--encoder-class mlirkit|mlirkit-hf|...``.
Query vectors are ``normalize(T_q(g(q)))`` as in ``mlirkit.search``: ``T_q`` is the query side of the
index's language transform when it has one (centering, LIR; never SHIFT), which needs ``--query-lang``.
When the index records its encoder (``meta.json``), a different query encoder is refused unless
``--force``; an existing ``--output`` file is refused unless ``--overwrite``. ``-h`` lists the
wrapper's options, then Pyserini's. Use ``--batch-size N`` (Pyserini's flag) to encode queries in batches.
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Sequence

from mlirkit.base.cli import configure_logging

logger = logging.getLogger(__name__)

PYSERINI_MODULE = "pyserini.search.faiss"


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.pyserini.wrapper import wrapper_parser

    p, g = wrapper_parser("python -m mlirkit.pyserini.search", "%(prog)s [wrapper options] <pyserini.search.faiss "
                          "arguments>", __doc__, PYSERINI_MODULE, "max_length, query_prefix, pooling, normalize, "
                          "batch_size, device, dtype, threads")
    g.add_argument("--query-lang", default=None, help="language of the topics (for query-side transforms)")
    g.add_argument("--force", action="store_true", help="search with an encoder that differs from the index's (warned)")
    g.add_argument("--overwrite", action="store_true", help="replace an existing --output run file")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from mlirkit.pyserini.wrapper import HELP_FLAGS, peek_option, split_wrapper_args

    parsed = split_wrapper_args(build_parser(), argv, (("--max-length", "max_length", int), ("--device", "device", str)))
    if parsed is None:
        return 0
    args, rest, options = parsed
    output = peek_option(rest, "--output")
    if output and not HELP_FLAGS & set(rest):
        from mlirkit.base.fs import refuse_existing

        refuse_existing(Path(output), args.overwrite)
    configure_logging()

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
        from mlirkit.transforms import load_transform

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
