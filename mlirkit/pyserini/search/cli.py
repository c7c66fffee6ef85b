"""``python -m mlirkit.pyserini.search [wrapper options] --index DIR --topics T --output RUN ...``

Runs Pyserini's own ``python -m pyserini.search.faiss`` (same flags, Pyserini's ``FaissSearcher`` and
run writer) with mlirkit's query encoders selectable by ``--encoder-class mlirkit|mlirkit-hf|...``.
Query vectors are ``normalize(T_q(g(q)))`` as in ``mlirkit.search``: ``T_q`` is the query side of the
index's language transform when it has one (centering, LIR; never SHIFT), which needs each query's
language: the topics file's own (``lang`` of BEIR ``queries.jsonl``, third TSV column) or ``--default-lang``.
With ``--query-shift cosine|ip`` (or ``--alpha`` / ``--transform``), every query is scored with the SHIFT
of its own language from the one index, exactly as ``python -m mlirkit.search --query-shift`` does
(:mod:`mlirkit.pyserini.query_shift`: Pyserini's ``FaissSearcher`` opens the index and encodes the queries,
mlirkit scores them; flat: every document, HNSW/IVF-PQ: ``--candidates`` rows re-scored exactly). It needs
an mlirkit index directory with ``embeddings.npy`` and every query's language (topics' or
``--default-lang``); Pyserini's PRF is refused with it. The run file appears only when Pyserini exits 0
(it writes a temporary sibling, :func:`staged_output`), so a failure in the middle leaves no partial run.
When the index records its encoder (``meta.json``), a different query encoder is refused unless
``--force``; an existing ``--output`` file is refused unless ``--overwrite``. ``-h`` prints the
wrapper's help (:data:`DESCRIPTION`) without starting Pyserini; ``--pyserini-help`` prints Pyserini's. Queries are encoded in batches: Pyserini's ``--batch-size`` defaults to
:data:`DEFAULT_QUERY_BATCH` here (Pyserini's own default, 1, encodes one query per forward pass), so
``FaissSearcher.batch_search`` hands them to :meth:`MlirkitQueryEncoder.encode_batch`.
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any, Callable, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import cli_command, configure_logging, examples
from mlirkit.base.options import lang_code
from mlirkit.transforms.defaults import DEFAULT_ALPHA

logger = logging.getLogger(__name__)

PYSERINI_MODULE = "pyserini.search.faiss"
#: queries per encoder call when the command line gives no ``--batch-size``
DEFAULT_QUERY_BATCH = 64

DESCRIPTION = """\
Pyserini's own dense search (python -m pyserini.search.faiss: same flags, its FaissSearcher and run
writer) with mlirkit's query encoders (--encoder-class mlirkit, mlirkit-hf, ...). The query side of the
index's language transform (centering, LIR) is applied with each query's language (the topics' own or
--default-lang); --query-shift (or --alpha / --transform) scores every query with the SHIFT of its own
language from one mlirkit index, as python -m mlirkit.search --query-shift does. A query encoder other
than the index's is refused unless --force; an existing --output file unless --overwrite; the run file
appears only when Pyserini succeeds."""


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.pyserini.wrapper import wrapper_parser
    from mlirkit.search.cli import add_query_shift_args

    p, g = wrapper_parser("python -m mlirkit.pyserini.search", "%(prog)s [wrapper options] <pyserini.search.faiss "
                          "arguments>", DESCRIPTION, PYSERINI_MODULE, "max_length, query_prefix, pooling, normalize, "
                          "batch_size, device, dtype, threads, backend, precision", examples(
                              "python -m mlirkit.pyserini.search --index indexes/ddtp-e5-shift --topics out/ddtp-en-test/topics.tsv \\\n"
                              "      --output runs/shift.txt --encoder-class mlirkit --encoder multilingual-e5-small-q4 "
                              "--hits 100"))
    g.add_argument(
        "--default-lang", dest="query_lang", type=lang_code, default=None,
        help="language of the queries without one in the topics (query-side transforms, --query-shift)")
    g.add_argument("--force", action="store_true", help="search with an encoder that differs from the index's (warned)")
    add_query_shift_args(g, words=False)
    g.add_argument("--overwrite", action="store_true", help="replace an existing --output run file")
    return p


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    from mlirkit.pyserini.wrapper import HELP_FLAGS, peek_option, split_wrapper_args

    parsed = split_wrapper_args(build_parser(), argv, (("--max-length", "max_length", int), ("--device", "device", str)))
    if parsed is None:
        return 0
    args, rest, options = parsed
    hits = peek_option(rest, "--hits", int)
    if hits is not None and hits < 1:  # Pyserini would stop on a bare AssertionError after starting the JVM
        raise MlirkitError(f"--hits {hits}: must be >= 1")
    output = peek_option(rest, "--output")
    if output and not HELP_FLAGS & set(rest):
        from mlirkit.base.fs import refuse_existing

        refuse_existing(Path(output), args.overwrite, "run")
    configure_logging(args.verbose, quiet=args.quiet)
    if peek_option(rest, "--batch-size") is None:
        rest = [*rest, "--batch-size", str(DEFAULT_QUERY_BATCH)]

    from mlirkit.pyserini.registration import EncoderSettings

    settings = EncoderSettings(options=options, query_lang=args.query_lang, force=args.force,
                               query_langs=topic_langs(peek_option(rest, "--topics"), args.query_lang))
    index = peek_option(rest, "--index")
    if index and (Path(index) / "meta.json").is_file():
        settings.index_encoder, settings.transform, settings.alpha = index_query_side(Path(index))
    from mlirkit.search.cli import query_shift_requested

    command = cli_command(__name__, argv)
    if query_shift_requested(args):
        return run(rest, settings, query_shift_plan(index, rest, args), command=command)
    return run(rest, settings, command=command)  # main refused an existing --output without --overwrite already


def query_shift_plan(index: str | None, pyserini_argv: Sequence[str], args):
    """The :class:`~mlirkit.search.query_shift.ShiftPlan` of ``--index`` (refused before the JVM starts
    when the index is not an mlirkit directory or PRF is asked for)."""
    from mlirkit.base.errors import MlirkitError
    from mlirkit.index import DenseIndex
    from mlirkit.index.layout import META_FILE
    from mlirkit.pyserini.wrapper import peek_option
    from mlirkit.search.query_shift import fill_missing_for_index, plan_for_index
    from mlirkit.transforms.defaults import DEFAULT_ALPHA

    if not index or not (Path(index) / META_FILE).is_file():
        raise MlirkitError(f"--query-shift needs an mlirkit index directory (with {META_FILE} and embeddings.npy), "
                           f"not {index!r}")
    if (peek_option(pyserini_argv, "--prf-depth", int) or 0) > 0:
        raise MlirkitError("--query-shift cannot be combined with Pyserini's PRF (--prf-depth)")
    topics = peek_option(pyserini_argv, "--topics")
    if topics and Path(topics).is_file():
        from mlirkit.io.topics import read_topics
        from mlirkit.search.query_shift import require_query_langs

        require_query_langs(read_topics(topics, default_lang=args.query_lang), topics)
    elif topics and args.query_lang is None:
        raise MlirkitError(f"--query-shift needs each query's language: Pyserini's topics {topics!r} carry none, "
                           f"give --default-lang (or a local topics file with a lang field)")
    dense, transform, alpha = DenseIndex(index), args.transform, args.alpha
    if transform is not None or args.missing is not None:  # the fit step for the languages the shift lacks
        transform = fill_missing_for_index(dense, transform, missing=args.missing, force=args.force)
        if args.transform is None and alpha is None:  # the index's own shift keeps the index's alpha
            alpha = (dense.transform or {}).get("alpha", DEFAULT_ALPHA)
    return plan_for_index(dense, args.query_shift or "cosine", alpha, transform, args.candidates, force=args.force,
                          missing=args.missing)


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

    from mlirkit.index.reader import read_meta

    meta = read_meta(index / META_FILE)  # its fields of their types, or one line naming the file and the field
    transform, alpha = None, 1.0
    if meta.get("transform"):
        from mlirkit.transforms import load_transform

        loaded = load_transform(index / TRANSFORM_FILE)
        if loaded.touches("query"):
            transform, alpha = loaded, meta["transform"].get("alpha", DEFAULT_ALPHA)
    return meta.get("encoder"), transform, alpha


def run(pyserini_argv: Sequence[str], settings, plan=None, *, overwrite: bool = True,
        command: Sequence[str] | None = None) -> int:
    """Run ``pyserini.search.faiss`` with ``pyserini_argv`` and the mlirkit classes built with ``settings``;
    with a query-time shift ``plan``, Pyserini's ``FaissSearcher`` is :mod:`mlirkit.pyserini.query_shift`'s.
    The run file appears only when Pyserini exits 0 (:func:`staged_output`); ``overwrite=False`` refuses an
    existing one (main has checked ``--overwrite`` before the JVM starts); ``command``, the command line the
    run's provenance records (:func:`mlirkit.base.cli.cli_command`)."""
    from mlirkit.pyserini.registration import register
    from mlirkit.pyserini.wrapper import run_pyserini_module

    names = register(settings)
    patches = []
    if plan is not None:
        import pyserini.search.faiss._searcher as searcher_module

        from mlirkit.pyserini.query_shift import searcher_class

        patches.append((searcher_module, "FaissSearcher",
                        searcher_class(plan, settings.query_langs, settings.query_lang)))
    rc = staged_output(pyserini_argv, overwrite, lambda argv: run_pyserini_module(PYSERINI_MODULE, argv, names, patches),
                       provenance=lambda: run_provenance(pyserini_argv, settings, plan, command))
    if plan is not None and rc == 0:
        print(json.dumps({"query_shift": {**plan.shift.describe(plan.alpha), "candidates": plan.candidates}}))
    return rc


class _NotPublished(Exception):
    """Pyserini exited non-zero: its (partial) run is discarded."""


def with_option(argv: Sequence[str], option: str, value: str) -> list[str]:
    """``argv`` with every ``option V`` / ``option=V`` given ``value`` instead."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == option and i + 1 < len(out):
            out[i + 1] = value
        elif arg.startswith(option + "="):
            out[i] = f"{option}={value}"
    return out


def run_provenance(pyserini_argv: Sequence[str], settings, plan=None,
                   command: Sequence[str] | None = None) -> dict[str, Any]:
    """What the run's provenance sidecar records (:mod:`mlirkit.io.provenance`): the index (an mlirkit or
    Pyserini index directory with its ``meta.json`` sha256, or a prebuilt index name), the query encoder
    (mlirkit's: name, digest, fingerprint; Pyserini's own: its name and class), the index's query-side
    transform, the query-time shift, the topics; and ``command``, the command line, when given."""
    from mlirkit.io.provenance import describe_source
    from mlirkit.pyserini.wrapper import peek_option
    from mlirkit.transforms.alpha import Alpha

    index = peek_option(pyserini_argv, "--index")
    if index and Path(index).is_dir():
        from mlirkit.index.reader import index_provenance

        index_record: dict[str, Any] = index_provenance(index)
    else:
        index_record = {"name": index}
    enc = settings.query_encoder
    encoder = ({"name": getattr(enc, "name", None), "digest": enc.digest, "fingerprint": enc.fingerprint}
               if enc is not None else {"name": peek_option(pyserini_argv, "--encoder"),
                                        "class": peek_option(pyserini_argv, "--encoder-class")})
    t = settings.transform
    out: dict[str, Any] = {"index": index_record, "encoder": encoder, "producer": PYSERINI_MODULE,
                           "transform": None if t is None else {"method": t.method, "sha256": t.sha256,
                                                                "alpha": Alpha.coerce(settings.alpha).to_json()},
                           "topics": describe_source(peek_option(pyserini_argv, "--topics") or "")}
    if command is not None:
        out = {"command": list(command), **out}
    if plan is not None:
        out["query_shift"] = {**plan.shift.describe(plan.alpha), "candidates": plan.candidates,
                              "transform_sha256": getattr(plan.shift.transform, "sha256", None)}
    return out


def staged_output(pyserini_argv: Sequence[str], overwrite: bool, call: Callable[[list[str]], int],
                  provenance: Callable[[], dict[str, Any]] | None = None) -> int:
    """``call(argv)`` with Pyserini's ``--output`` pointed at a temporary sibling that replaces the run
    file only when ``call`` returns 0: Pyserini writes its run query by query, so an error in the middle
    (an encoder, the query-time shift, a JVM failure) would otherwise leave a half-written run. With
    ``provenance`` (a function giving the producer's record), the run's provenance sidecar is published
    after the run, both or neither (:func:`mlirkit.base.fs.claim_outputs`)."""
    from mlirkit.base.fs import claim_outputs, fsync_file, write_durably
    from mlirkit.io.provenance import sidecar_path
    from mlirkit.pyserini.wrapper import HELP_FLAGS, peek_option

    output = peek_option(pyserini_argv, "--output")
    if not output or HELP_FLAGS & set(pyserini_argv):
        return call(list(pyserini_argv))
    rc = 1
    outputs = [(Path(output), overwrite, "run", False)]
    if provenance is not None:  # published after the run (:func:`mlirkit.base.fs.claim_outputs`)
        outputs.append((sidecar_path(output), True, "provenance", False))
    try:
        with claim_outputs(outputs) as tmps:
            rc = call(with_option(pyserini_argv, "--output", str(tmps[0])))
            if rc != 0:
                raise _NotPublished
            fsync_file(tmps[0])
            if provenance is not None:
                from mlirkit.io.files import file_sha256
                from mlirkit.io.provenance import sidecar_bytes

                write_durably(tmps[1], sidecar_bytes(output, file_sha256(tmps[0]), provenance()))
    except _NotPublished:
        logger.debug("pyserini exited %d: no run written to %s", rc, output)  # its error is the one line
    return rc


__all__ = ["DEFAULT_QUERY_BATCH", "build_parser", "main", "staged_output", "topic_langs"]
