"""``python -m mlirkit.pyserini.encode [wrapper options] input ... output ... encoder ...``

Runs Pyserini's own ``python -m pyserini.encode`` (same sub-commands and flags) with mlirkit's encoder
classes selectable by ``encoder --encoder-class mlirkit|mlirkit-hf|mlirkit-usem|mlirkit-dcl`` and:

- ``lang`` usable in ``--fields`` (read from each record's ``lang`` key; needed by ``--transform``);
- with ``output --to-faiss`` and an mlirkit class, a full mlirkit index directory (Pyserini's ``index``
  and ``docid`` plus ``langs``, ``meta.json``, the transform file), written atomically;
- ``--transform FILE [--alpha A]``: documents are shifted by language, so the index equals
  ``python -m mlirkit.encode --transform FILE --alpha A``.

Pyserini's ``encoder --max-length N`` and ``--prefix P`` given explicitly become the mlirkit encoder's
``max_length`` / ``doc_prefix``; other encoder options with ``--encoder-option KEY=VALUE``.
"""
from __future__ import annotations

import argparse
import logging
from functools import partial
from typing import Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import configure_logging, examples
from mlirkit.base.options import lang_code
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.options import add_transform_args, transform_from_args

logger = logging.getLogger(__name__)

PYSERINI_MODULE = "pyserini.encode"

DESCRIPTION = """\
Pyserini's own encoding pipeline (python -m pyserini.encode: same sub-commands and flags) with mlirkit's
encoder classes (encoder --encoder-class mlirkit, mlirkit-hf, mlirkit-usem, mlirkit-dcl). 'lang' may be
among --fields (each record's language, needed by --transform); with output --to-faiss and an mlirkit
class the output is a full mlirkit index directory (langs, meta.json, the transform file); --transform
FILE [--alpha A] shifts documents by language, giving the index python -m mlirkit.encode --transform
FILE --alpha A builds. Pyserini's encoder --max-length and --prefix become the mlirkit encoder's
max_length and doc_prefix; other encoder options go through --encoder-option KEY=VALUE."""


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.pyserini.wrapper import wrapper_parser

    p, g = wrapper_parser("python -m mlirkit.pyserini.encode", "%(prog)s [wrapper options] input ... output ... "
                          "encoder ...", DESCRIPTION, PYSERINI_MODULE, "max_length, doc_prefix, query_prefix, pooling, "
                          "normalize, batch_size, device, dtype, threads", examples(
                              "python -m mlirkit.pyserini.encode input --corpus out/ddtp-en-test/corpus.jsonl --fields text lang \\\n"
                              "      output --embeddings indexes/pyserini-e5 --to-faiss \\\n"
                              "      encoder --encoder-class mlirkit --encoder multilingual-e5-small-q4 --fields text lang"))
    g.add_argument("--default-lang", type=lang_code, default=None, help="language of documents without a 'lang' field")
    g.add_argument("--save-embeddings", action="store_true",
                   help="also keep the untransformed vectors in embeddings.npy (mlirkit classes, --to-faiss)")
    add_transform_args(p, langid=False, alpha_words=False, missing=False)
    return p


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    from mlirkit.pyserini.wrapper import peek_option, split_wrapper_args

    parsed = split_wrapper_args(build_parser(), argv, (("--max-length", "max_length", int),
                                                       ("--prefix", "doc_prefix", str), ("--device", "device", str)))
    if parsed is None:
        return 0
    args, rest, options = parsed
    configure_logging(args.verbose, quiet=args.quiet)
    from mlirkit.encoders.hf import pin_malloc_threshold

    pin_malloc_threshold()  # a whole corpus is encoded in this process

    from mlirkit.pyserini.registration import EncoderSettings, class_names

    chosen = peek_option(rest, "--encoder-class")
    names = class_names()
    if (args.transform or args.save_embeddings) and chosen not in names:
        raise MlirkitError(f"--transform and --save-embeddings need an mlirkit encoder class "
                           f"(encoder --encoder-class {' | '.join(names)})")
    transform = transform_from_args(args)  # loads the file: fails fast, before the JVM and the model load
    settings = EncoderSettings(options=options, transform=transform.transform, alpha=transform.alpha,
                               strict=transform.strict, force=transform.force)
    return run(rest, settings, default_lang=args.default_lang, save_embeddings=args.save_embeddings)


def run(pyserini_argv: Sequence[str], settings, *, default_lang: str | None = None,
        save_embeddings: bool = False) -> int:
    """Run ``pyserini.encode`` with ``pyserini_argv`` and the mlirkit classes built with ``settings``."""
    from mlirkit.pyserini.registration import register
    from mlirkit.pyserini.wrapper import run_pyserini_module

    created: list = []
    names = register(settings, on_document_encoder=created.append)

    import pyserini.encode as pe
    import pyserini.encode.optional as pe_optional

    from mlirkit.pyserini.pipeline import IndexDirectoryWriter, LangJsonlCollectionIterator

    iterator = partial(LangJsonlCollectionIterator, default_lang=default_lang)
    writer = partial(IndexDirectoryWriter, get_encoder=lambda: created[-1] if created else None,
                     save_embeddings=save_embeddings)
    return run_pyserini_module(PYSERINI_MODULE, pyserini_argv, names, patches=[
        (pe, "JsonlCollectionIterator", iterator),
        (pe_optional, "FaissRepresentationWriter", writer),
    ])


__all__ = ["build_parser", "main"]
