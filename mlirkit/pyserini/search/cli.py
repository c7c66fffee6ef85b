"""``python -m mlirkit.pyserini.search [wrapper options] --index DIR --topics T --output RUN ...``

Runs Pyserini's own ``python -m pyserini.search.faiss`` (same flags, Pyserini's ``FaissSearcher`` and
run writer) with mlirkit's query encoders selectable by ``--encoder-class mlirkit|mlirkit-hf|...``.
Query vectors are ``normalize(T_q(g(q)))`` as in ``mlirkit.search``: ``T_q`` is the query side of the
index's language transform when it has one (centering, LIR; never SHIFT), which needs each query's
language: the topics file's own (``lang`` of BEIR ``queries.jsonl``, third TSV column) or ``--query-lang``.
(The query-time SHIFT for every query language is ``python -m mlirkit.search --query-shift``: Pyserini's
``FaissSearcher`` scores with the index as it is.)
When the index records its encoder (``meta.json``), a different query encoder is refused unless
``--force``; an existing ``--output`` file is refused unless ``--overwrite``. ``-h`` lists the
wrapper's options, then Pyserini's. Queries are encoded in batches: Pyserini's ``--batch-size`` defaults to
:data:`DEFAULT_QUERY_BATCH` here (Pyserini's own default, 1, encodes one query per forward pass), so
``FaissSearcher.batch_search`` hands them to :meth:`MlirkitQueryEncoder.encode_batch`.
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
#: queries per encoder call when the command line gives no ``--batch-size``
DEFAULT_QUERY_BATCH = 64


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.pyserini.wrapper import wrapper_parser

    p, g = wrapper_parser("python -m mlirkit.pyserini.search", "%(prog)s [wrapper options] <pyserini.search.faiss "
                          "arguments>", __doc__, PYSERINI_MODULE, "max_length, query_prefix, pooling, normalize, "
                          "batch_size, device, dtype, threads, backend, precision")
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
    if peek_option(rest, "--batch-size") is None:
        rest = [*rest, "--batch-size", str(DEFAULT_QUERY_BATCH)]

    from mlirkit.pyserini.registration import EncoderSettings

    settings = EncoderSettings(options=options, query_lang=args.query_lang, force=args.force,
                               query_langs=topic_langs(peek_option(rest, "--topics"), args.query_lang))
    index = peek_option(rest, "--index")
    if index and (Path(index) / "meta.json").is_file():
        settings.index_encoder, settings.transform, settings.alpha = index_query_side(Path(index))
    return run(rest, settings)


def topic_langs(topics: str | None, default_lang: str | None = None) -> dict[str, str] | None:
    """``{query text: lang}`` from a local topics file with per-query languages (BEIR ``queries.jsonl`` with
    ``lang``, TSV ``qid<TAB>text<TAB>lang``), so Pyserini's queries get their own languages; None for a
    Pyserini topics name or a file without languages. One text with two languages is refused."""
    if not topics or not Path(topics).is_file():
        return None
    from mlirkit.base.errors import MlirkitError
    from mlirkit.io.topics import read_topics
    from mlirkit.base.langs import is_known

    out: dict[str, str] = {}
    for q in read_topics(topics, default_lang=default_lang):
        if not is_known(q.lang):
            continue
        if out.setdefault(q.text, q.lang) != q.lang:
            raise MlirkitError(f"{topics}: the query text {q.text!r} occurs with languages {out[q.text]!r} and "
                               f"{q.lang!r}; Pyserini passes only the text, so they cannot be told apart")
    return out or None


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
