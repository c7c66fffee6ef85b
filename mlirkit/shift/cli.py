"""``python -m mlirkit.shift {fit,apply,inspect,derive,select-alpha}``: fit (from parallel text or from an
index's own documents), apply post hoc, look at and re-base transforms, choose alpha without labels.

Each command is a few lines over the Python API: the estimators and their array builders
(:func:`mlirkit.transforms.fit.fit_from_pairs`, :func:`mlirkit.shift.from_index.fit_from_index`,
:func:`mlirkit.transforms.import_pt.import_shift_pt`), :func:`mlirkit.shift.posthoc.apply_to_index`,
:func:`mlirkit.shift.from_index.select_alpha_for_index`."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples, with_examples
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import (LANG_LIST_HELP, LangListAction, lang_code, non_negative_int,
                                  positive_int)
from mlirkit.transforms.defaults import DEFAULT_MIN_DOCS

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

__all__ = ["EXAMPLES", "build_parser", "main"]

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.transforms.options import add_transform_args

    p = ArgumentParser(prog="python -m mlirkit.shift", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    f = sub.add_parser("fit", help="fit a transform from parallel text or from an index's documents "
                                   "(or import a SHIFT .pt vector file)")
    _add_fit_args(f)

    a = sub.add_parser("apply", help="apply a transform to an existing index, writing a new index")
    a.add_argument("--index", required=True, help="input index directory (never modified)")
    add_transform_args(a, required=True)
    a.add_argument("--output", required=True, help="output index directory")
    a.add_argument("--doc-langs", default=None, help="docid<TAB>lang file (needed for a Pyserini index)")
    a.add_argument("--overwrite", action="store_true")

    i = sub.add_parser("inspect", help="print a transform file's metadata and vector norms as JSON")
    i.add_argument("transform")

    d = sub.add_parser("derive", help="SHIFT vectors for another source language: V_{l|s} = V_l - V_s")
    d.add_argument("--transform", required=True)
    d.add_argument("--source-lang", type=lang_code, required=True)
    d.add_argument("--output", required=True)
    d.add_argument("--overwrite", action="store_true")
    s = sub.add_parser("select-alpha", help="choose alpha without relevance labels, from an index's documents")
    s.add_argument("--index", required=True, help="index directory (embeddings.npy or untransformed vectors)")
    s.add_argument("--transform", required=True, help="transform file")
    s.add_argument("--criterion", choices=["knn", "centroid"], default="knn",
                   help="knn: documents of every language as queries of their language (the query-time shift), "
                        "the excess own-language share among their k nearest documents, alpha = where its fall "
                        "levels off; centroid: distance of language centroids")
    s.add_argument("--k", type=positive_int, default=20, help="neighbours per probe (knn)")
    s.add_argument("--grid", nargs="+", type=float, default=None, help="alphas to try (default 0.0 ... 2.0 by 0.1)")
    s.add_argument("--max-probes", type=positive_int, default=2000,
                   help="documents used as probes, shared evenly by the languages (knn)")
    s.add_argument("--seed", type=non_negative_int, default=0, help="random seed of the probes, an integer >= 0")
    for sp in sub.choices.values():
        sp.add_argument("-q", "--quiet", action="store_true",
                        help="only warnings and errors on stderr (no INFO lines, no progress bars)")
    return with_examples(p, EXAMPLES)


EXAMPLES = {
    "": examples("python -m mlirkit.shift fit --pairs mlirkit/parallel/gettext --encoder multilingual-e5-small-q4 \\\n"
                 "      --source-lang en --max-pairs 200 --output vectors/e5-gettext.shift",
                 "python -m mlirkit.shift apply --index indexes/ddtp-e5 --transform vectors/e5-gettext.shift \\\n"
                 "      --output indexes/ddtp-e5-shift"),
    "fit": examples("python -m mlirkit.shift fit --pairs mlirkit/parallel/gettext --encoder multilingual-e5-small-q4 \\\n"
                    "      --source-lang en --max-pairs 200 --output vectors/e5-gettext.shift",
                    "python -m mlirkit.shift fit --method lsar --from-index indexes/ddtp-e5 --source-lang en \\\n"
                    "      --output vectors/e5-ddtp.lsar"),
    "apply": examples("python -m mlirkit.shift apply --index indexes/ddtp-e5 --transform vectors/e5-gettext.shift \\\n"
                      "      --output indexes/ddtp-e5-shift"),
    "inspect": examples("python -m mlirkit.shift inspect vectors/e5-gettext.shift"),
    "derive": examples("python -m mlirkit.shift derive --transform vectors/e5-gettext.shift --source-lang de \\\n"
                       "      --output vectors/e5-gettext-de.shift"),
    "select-alpha": examples("python -m mlirkit.shift select-alpha --index indexes/ddtp-e5 "
                             "--transform vectors/e5-gettext.shift"),
}


def _add_fit_args(f: argparse.ArgumentParser) -> None:
    from mlirkit.encoders.options import add_encoder_args
    from mlirkit.transforms.registry import TRANSFORMS
    from mlirkit.transforms.defaults import STATISTICS

    f.add_argument("--method", choices=TRANSFORMS.names(), default="shift",
                   help="shift (default), centering, lir (these three from --pairs); lsar, leace (from --pairs or "
                        "--from-index: they need no translation pairs)")
    f.add_argument("--pairs", default=None, metavar="SRC",
                   help="aligned JSONL(.gz) with id/lang/text, a SHIFT pairs-table directory, 'mmarco' (SHIFT recipe; "
                        "'mmarco-10k', 'mmarco-passages'), a parallel-set id (mlirkit/parallel/...), or a SHIFT "
                        "authors' .pt vector file (imported)")
    f.add_argument("--from-index", default=None, metavar="DIR",
                   help="fit on this index's own untransformed document vectors (no parallel text): shift "
                        "(--vectors), lsar, leace")
    f.add_argument("--source-lang", type=lang_code, default=None, help="source (query) language, e.g. en (a .pt file carries its own)")
    f.add_argument("--output", required=True, help="transform file to write (exactly this path)")
    f.add_argument("--langs", action=LangListAction, default=None, metavar="LANG",
                   help=f"target languages to keep ({LANG_LIST_HELP}; default: all present)")
    f.add_argument("--max-pairs", type=positive_int, default=None,
                   help="use at most N pairs per target language (every language gets its share, also from a "
                        "file whose rows are grouped by language)")
    f.add_argument("--rank", type=positive_int, default=None,
                   help="lir: singular vectors removed per language (default 1); lsar: dimensions of the language "
                        "subspace (default: the number of languages, the authors' setting)")
    f.add_argument("--vectors", default=None, choices=[k for k in STATISTICS if k != "pairs"],
                   help="shift with --from-index: mined (default: SHIFT's mean difference over pairs mined in the "
                        "corpus, kept out of its topic subspace where topic leaks in) or corpus (mean of the "
                        "language's documents minus mean of the source-language documents); docs/shift.md")
    f.add_argument("--text-field", default="text", help="JSONL text field(s), comma-separated (joined by a space)")
    f.add_argument("--fit-langid", action="store_true",
                   help="also fit a language classifier (stored in the file)")
    f.add_argument("--hybrid-with", default=None, metavar="PAIRS_TRANSFORM",
                   help="with --from-index: a pair-fitted shift transform; its vectors where it has them, the "
                        "index's for the other languages")
    f.add_argument("--min-docs", type=positive_int, default=None,
                   help="with --from-index: refuse a language with fewer documents (default %d)" % DEFAULT_MIN_DOCS)
    f.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    f.add_argument("--force", action="store_true",
                   help="import a .pt vector file that records another model than the encoder's (warned)")
    add_encoder_args(f)


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    return {"fit": cmd_fit, "apply": cmd_apply, "inspect": cmd_inspect, "derive": cmd_derive,
            "select-alpha": cmd_select_alpha}[args.command](args)


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False))


def cmd_fit(args: argparse.Namespace) -> int:
    from mlirkit.base.fs import refuse_existing

    refuse_existing(Path(args.output), args.overwrite, "transform")
    if args.method != "shift" and args.vectors is not None:
        raise MlirkitError(f"--vectors chooses the statistics of shift vectors, not of {args.method}")
    if args.rank is not None and args.method not in _ranked_methods():
        raise MlirkitError(f"--rank is for {' and '.join(_ranked_methods())}, not {args.method}")
    recipe = {} if args.rank is None else {"rank": args.rank}
    if args.from_index is not None:
        return _fit_from_index(args, recipe)
    index_only = [o for o, v in (("--vectors", args.vectors), ("--hybrid-with", args.hybrid_with),
                                 ("--min-docs", args.min_docs)) if v is not None]
    if index_only:
        raise MlirkitError(f"{', '.join(index_only)} need --from-index DIR")
    if args.pairs is None:
        raise MlirkitError("give --pairs SRC (parallel text) or --from-index DIR (the index's own documents)")
    from mlirkit.transforms.io import sniff

    if Path(args.pairs).is_file() and sniff(args.pairs) == "torch":
        return _import_pt(args)
    if not args.source_lang:
        raise MlirkitError("--source-lang is required when fitting from parallel text")
    from mlirkit.encoders.options import encoder_from_args, encoder_options
    from mlirkit.transforms.fit import fit_from_pairs

    t = fit_from_pairs(lambda: encoder_from_args(args), args.pairs, source_lang=args.source_lang, method=args.method,
                       text_fields=args.text_field, langs=args.langs, max_pairs=args.max_pairs,
                       batch_size=encoder_options(args).get("batch_size", 64), fit_langid=args.fit_langid, show_progress=not args.quiet, **recipe)
    t.meta["encoder_name"] = args.encoder
    return _save(args, t, {**t.meta["fit"], "pairs": t.meta.get("pairs"),
                           "langid": None if t.langid is None else t.langid.to_meta()})


def _ranked_methods() -> list[str]:
    """The registered methods whose recipe (constructor) takes a ``rank``."""
    import inspect

    from mlirkit.transforms.registry import TRANSFORMS

    return [m for m in TRANSFORMS.names() if "rank" in inspect.signature(TRANSFORMS.get(m).__init__).parameters]


def _fit_from_index(args: argparse.Namespace, recipe: dict[str, Any]) -> int:
    from mlirkit.shift.from_index import fit_from_index
    from mlirkit.transforms.io import load_transform

    if args.pairs is not None:
        raise MlirkitError("give either --pairs (parallel text) or --from-index (the index's documents), not both")
    if not args.source_lang:
        raise MlirkitError("--source-lang is required with --from-index")
    if args.method in ("centering", "lir"):
        raise MlirkitError(f"{args.method} is fitted on translation pairs (--pairs); from an index: --method shift, "
                           f"lsar or leace")
    if args.method != "shift":
        given = [o for o, v in (("--hybrid-with", args.hybrid_with), ("--min-docs", args.min_docs),
                                ("--langs", args.langs)) if v is not None]
        if given:
            raise MlirkitError(f"{', '.join(given)}: for shift vectors, not {args.method}")
    pairs_t = load_transform(args.hybrid_with) if args.hybrid_with is not None else None  # fails before the index is read
    if args.method == "shift":
        recipe = {**({"vectors": args.vectors} if args.vectors else {}),
                  **({"min_docs": args.min_docs} if args.min_docs else {})}
    t = fit_from_index(args.from_index, args.source_lang, method=args.method, langs=args.langs, **recipe)
    if pairs_t is not None:
        from mlirkit.base.langs import is_unknown
        from mlirkit.index import DenseIndex
        from mlirkit.transforms.hybrid import hybrid_shift

        index_langs = sorted({la for la in DenseIndex(args.from_index).langs if not is_unknown(la)})
        t = hybrid_shift(pairs_t, t, require_langs=index_langs if args.langs is None else args.langs)
    out: dict[str, Any] = {"source_lang": t.source_lang, "languages": t.languages}
    for key in ("recipe", "corpus_fit", "provenance", "hybrid", "topic_robust", "docs", "rank", "directions"):
        if key in t.meta:
            out[key] = t.meta[key]
    if "mining" in t.meta:
        from mlirkit.transforms.mining import mining_summary

        out["mining"] = mining_summary(t.meta["mining"])
    return _save(args, t, out)


def _save(args: argparse.Namespace, t: "LanguageTransform", report: dict[str, Any]) -> int:
    from mlirkit.transforms.io import save_transform

    save_transform(t, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": t.sha256, "method": t.method, **report})
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    from mlirkit.shift.posthoc import apply_to_index, fill_missing_from_index, refuse_input_as_output
    from mlirkit.transforms.options import transform_from_args

    opts = transform_from_args(args)
    if args.alpha is None:
        logger.info("alpha %s for every language: the default, SHIFT's published strength (the best alpha measured "
                    "lies between 0.7 and 1.2 with the vectors; select-alpha chooses one without labels)", opts.alpha)
    refuse_input_as_output(args.index, args.output)  # before the fit step reads the index
    # the fit step for the index's languages the transform lacks, then the apply step (which never fits)
    transform = fill_missing_from_index(args.index, opts.transform, missing=opts.missing, doc_langs=args.doc_langs,
                                        force=opts.force)
    stats = apply_to_index(args.index, transform, args.output, alpha=opts.alpha, doc_langs=args.doc_langs,
                           overwrite=args.overwrite, strict=opts.strict, force=opts.force, show_progress=not args.quiet,
                           missing=opts.missing)
    _print(stats)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    import numpy as np

    from mlirkit.transforms.io import load_transform

    t = load_transform(args.transform)
    norms = {name.partition(".")[2]: round(float(np.linalg.norm(v)), 6) for name, v in t.tensors().items()}
    _print({"file": str(t.path), "sha256": t.sha256, "method": t.method, "source_lang": t.source_lang, "dim": t.dim,
            "languages": t.languages, "sides": list(t.sides), "norms": norms,
            "meta": {k: v for k, v in t.meta.items() if k not in ("languages",)}})
    return 0


def cmd_derive(args: argparse.Namespace) -> int:
    from mlirkit.transforms.io import load_transform, save_transform
    from mlirkit.transforms.shift_transform import derive_source

    t = load_transform(args.transform)
    new = derive_source(t, args.source_lang)
    new.meta.pop("created", None)
    save_transform(new, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": new.sha256, "source_lang": new.source_lang,
            "languages": new.languages})
    return 0


def cmd_select_alpha(args: argparse.Namespace) -> int:
    from mlirkit.shift.from_index import select_alpha_for_index
    from mlirkit.transforms.alpha_select import DEFAULT_GRID
    from mlirkit.transforms.io import load_transform

    sel = select_alpha_for_index(args.index, load_transform(args.transform), criterion=args.criterion, k=args.k,
                                 grid=DEFAULT_GRID if args.grid is None else args.grid,
                                 max_probes=args.max_probes, seed=args.seed)
    _print({"index": str(args.index), "transform": str(args.transform), **sel.as_dict()})
    return 0


def _import_pt(args: argparse.Namespace) -> int:
    from mlirkit.encoders.options import encoder_from_args
    from mlirkit.transforms.import_pt import import_shift_pt
    from mlirkit.transforms.io import save_transform

    if args.method != "shift":
        raise MlirkitError(f"{args.pairs} holds SHIFT vectors; use --method shift to import it")
    t = import_shift_pt(args.pairs, lambda: encoder_from_args(args), encoder_name=args.encoder,
                        source_lang=args.source_lang, langs=args.langs, force=args.force)
    save_transform(t, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": t.sha256, "method": "shift",
            "imported": t.meta["imported_from"]["model_name"], "source_lang": t.source_lang,
            "languages": t.languages, "dim": t.dim})
    return 0
