"""``python -m mlirkit.shift {fit,apply,inspect,derive,select-alpha}``: fit (from parallel text or from an
index's own documents), apply post hoc, look at and re-base transforms, choose alpha without labels."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from mlirkit.base.option_names import cli_main
from mlirkit.base.cli import ArgumentParser, configure_logging, examples, with_examples
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import LANG_LIST_HELP, LangListAction, lang_code, non_negative_int, positive_int

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.transforms.options import add_transform_args
    from mlirkit.transforms.recipes import VECTOR_RECIPES

    p = ArgumentParser(prog="python -m mlirkit.shift", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    f = sub.add_parser("fit", help="fit a transform from parallel text or from an index's documents "
                                   "(or import a SHIFT .pt vector file)")
    add_fit_args(f, methods=PAIR_METHODS)
    f.add_argument("--vectors", default=None, choices=VECTOR_RECIPES.names(),
                   help="with --from-index: mined (default: SHIFT's mean difference over pairs mined in the corpus, "
                        "kept out of its topic subspace where topic leaks in) or corpus (mean of the language's "
                        "documents minus mean of the source-language documents); docs/shift.md")

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
    add_select_alpha_args(s)
    for sp in sub.choices.values():
        sp.add_argument("-q", "--quiet", action="store_true",
                        help="only warnings and errors on stderr (no INFO lines, no progress bars)")
    return with_examples(p, EXAMPLES)


EXAMPLES = {
    "": examples("python -m mlirkit.shift fit --pairs mlirkit/parallel/gettext --encoder multilingual-e5-small-q4 \\\n"
                 "      --source-lang en --max-pairs 200 --output vectors/e5-gettext.shift",
                 "python -m mlirkit.shift apply --index indexes/ddtp-e5 --transform vectors/e5-gettext.shift \\\n"
                 "      --alpha 0.6 --output indexes/ddtp-e5-shift"),
    "fit": examples("python -m mlirkit.shift fit --pairs mlirkit/parallel/gettext --encoder multilingual-e5-small-q4 \\\n"
                    "      --source-lang en --max-pairs 200 --output vectors/e5-gettext.shift"),
    "apply": examples("python -m mlirkit.shift apply --index indexes/ddtp-e5 --transform vectors/e5-gettext.shift \\\n"
                      "      --alpha 0.6 --output indexes/ddtp-e5-shift"),
    "inspect": examples("python -m mlirkit.shift inspect vectors/e5-gettext.shift"),
    "derive": examples("python -m mlirkit.shift derive --transform vectors/e5-gettext.shift --source-lang de \\\n"
                       "      --output vectors/e5-gettext-de.shift"),
    "select-alpha": examples("python -m mlirkit.shift select-alpha --index indexes/ddtp-e5 "
                             "--transform vectors/e5-gettext.shift"),
}


def add_select_alpha_args(s: argparse.ArgumentParser) -> None:
    """The options of ``select-alpha`` (also used by the experiments' CLI, which adds its own)."""
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


#: the methods ``fit`` estimates from parallel text (shift-overall vectors come from an index, in Python)
PAIR_METHODS = ("centering", "lir", "shift")


def add_fit_args(f: argparse.ArgumentParser, *, methods: Sequence[str]) -> None:
    """The options of ``fit`` shared with the experiments' CLI (which adds its research options)."""
    from mlirkit.encoders.options import add_encoder_args

    f.add_argument("--method", choices=sorted(methods), default="shift")
    f.add_argument("--pairs", default=None, metavar="SRC",
                   help="aligned JSONL(.gz) with id/lang/text, a SHIFT pairs-table directory, 'mmarco' (SHIFT recipe; "
                        "'mmarco-10k', 'mmarco-passages'), a parallel-set id (mlirkit/parallel/...), or a SHIFT "
                        "authors' .pt vector file (imported)")
    f.add_argument("--from-index", default=None, metavar="DIR",
                   help="fit SHIFT vectors from this index's own untransformed document vectors (no parallel text)")
    f.add_argument("--source-lang", type=lang_code, default=None, help="source (query) language, e.g. en (a .pt file carries its own)")
    f.add_argument("--output", required=True, help="transform file to write (exactly this path)")
    f.add_argument("--langs", action=LangListAction, default=None, metavar="LANG",
                   help=f"target languages to keep ({LANG_LIST_HELP}; default: all present)")
    f.add_argument("--max-pairs", type=positive_int, default=None,
                   help="use at most N pairs per target language (every language gets its share, also from a "
                        "file whose rows are grouped by language)")
    f.add_argument("--rank", type=positive_int, default=1, help="LIR: number of singular vectors removed (default 1)")
    f.add_argument("--text-field", default="text", help="JSONL text field(s), comma-separated (joined by a space)")
    f.add_argument("--langid", action="store_true", help="also fit a language classifier (stored in the file)")
    f.add_argument("--hybrid-with", default=None, metavar="PAIRS_TRANSFORM",
                   help="with --from-index: a pair-fitted shift transform; its vectors where it has them, the "
                        "index's for the other languages")
    f.add_argument("--min-docs", type=positive_int, default=None,
                   help="with --from-index: refuse a language with fewer documents (default %d)" % _default_min_docs())
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


def _default_min_docs() -> int:
    from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS

    return DEFAULT_MIN_DOCS


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False))


def cmd_fit(args: argparse.Namespace) -> int:
    from mlirkit.base.fs import refuse_existing

    refuse_existing(Path(args.output), args.overwrite, "transform")
    if args.from_index is not None:
        return _fit_from_index(args)
    index_only = [o for o, v in (("--vectors", getattr(args, "vectors", None)), ("--hybrid-with", args.hybrid_with),
                                 ("--min-docs", args.min_docs)) if v is not None]
    if index_only:
        raise MlirkitError(f"{', '.join(index_only)} need --from-index DIR")
    return fit_from_pairs(args)


def fit_from_pairs(args: argparse.Namespace, **fit_options: Any) -> int:
    """``fit --pairs SRC``: from parallel text, or the import of a SHIFT ``.pt`` file; ``fit_options`` go to
    :func:`~mlirkit.transforms.fit.fit_from_groups` (the experiments' CLI passes its held-out options)."""
    from mlirkit.encoders.options import encoder_from_args
    from mlirkit.transforms.io import save_transform, sniff

    if args.pairs is None:
        raise MlirkitError("give --pairs SRC (parallel text) or --from-index DIR (the index's own documents)")
    pairs = Path(args.pairs)
    if pairs.is_file() and sniff(pairs) == "torch":
        return _import_pt(args)
    if not args.source_lang:
        raise MlirkitError("--source-lang is required when fitting from parallel text")
    from mlirkit.transforms.fit import fit_from_groups
    from mlirkit.transforms.parallel import open_parallel, parallel_languages

    import itertools

    groups = open_parallel(args.pairs, text_field=args.text_field, langs=args.langs, source_lang=args.source_lang)
    first = list(itertools.islice(groups, 1))  # read before loading the model: bad input fails fast
    if not first:
        raise MlirkitError(f"{args.pairs}: no parallel rows")
    groups = itertools.chain(first, groups)
    encoder = encoder_from_args(args)
    t, report = fit_from_groups(encoder, groups, method=args.method, source_lang=args.source_lang, langs=args.langs,
                                max_pairs=args.max_pairs, batch_size=args.batch_size or 64, rank=args.rank,
                                langid=args.langid, source_name=args.pairs, show_progress=not args.quiet,
                                source_langs=parallel_languages(args.pairs),
                                **fit_options)
    t.meta["encoder_name"] = args.encoder
    save_transform(t, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": t.sha256, "method": t.method, **report.as_dict()})
    return 0


def _fit_from_index(args: argparse.Namespace) -> int:
    from mlirkit.shift.from_index import fit_from_index
    from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS
    from mlirkit.transforms.recipes import DEFAULT_VECTORS

    if args.pairs is not None:
        raise MlirkitError("give either --pairs (parallel text) or --from-index (the index's documents), not both")
    if args.method != "shift":
        raise MlirkitError(f"--from-index fits shift vectors, not {args.method} (use --method shift)")
    if not args.source_lang:
        raise MlirkitError("--source-lang is required with --from-index")
    pairs_t = load_hybrid_pairs(args)  # a bad file fails before the embeddings are read
    t = fit_from_index(args.from_index, args.source_lang, vectors=args.vectors or DEFAULT_VECTORS,
                       min_docs=DEFAULT_MIN_DOCS if args.min_docs is None else args.min_docs, only_langs=args.langs)
    return save_index_fit(args, t if pairs_t is None else hybrid_for_index(args, pairs_t, t))


def load_hybrid_pairs(args: argparse.Namespace):
    from mlirkit.transforms.io import load_transform

    return load_transform(args.hybrid_with) if args.hybrid_with is not None else None


def hybrid_for_index(args: argparse.Namespace, pairs_t: "LanguageTransform", t: "LanguageTransform",
            blend: float | None = None) -> "LanguageTransform":
    """The pair-fitted vectors of ``--hybrid-with`` where they exist, ``t``'s for every other language of the index."""
    from mlirkit.base.langs import is_unknown
    from mlirkit.index import DenseIndex
    from mlirkit.transforms.hybrid import hybrid_shift

    index_langs = sorted({l for l in DenseIndex(args.from_index).langs if not is_unknown(l)})
    return hybrid_shift(pairs_t, t, blend=blend, require_langs=index_langs if args.langs is None else args.langs)


def save_index_fit(args: argparse.Namespace, t: "LanguageTransform") -> int:
    """Write a transform fitted on an index and print what it holds (recipe, provenance, mining, topic)."""
    from mlirkit.transforms.io import save_transform

    save_transform(t, args.output, overwrite=args.overwrite)
    out: dict[str, Any] = {"output": str(args.output), "sha256": t.sha256, "method": t.method,
                           "source_lang": t.source_lang, "languages": t.languages}
    for key in ("recipe", "corpus_fit", "provenance", "hybrid", "topic_robust"):
        if key in t.meta:
            out[key] = t.meta[key]
    if "mining" in t.meta:
        info = t.meta["mining"]
        out["mining"] = {**{k: v for k, v in info.items() if k != "languages"},
                         "languages": {l: {"pairs": r["pairs"], "rounds": len(r["rounds"]), "converged": r["converged"],
                                           "fallback": r["fallback"], "margin": r["margin"]}
                                       for l, r in info["languages"].items()}}
    _print(out)
    return 0


def cmd_select_alpha(args: argparse.Namespace) -> int:
    from mlirkit.transforms.io import load_transform

    _print(select_alpha_report(args, load_transform(args.transform)))
    return 0


def select_alpha_report(args: argparse.Namespace, t: LanguageTransform) -> dict[str, Any]:
    """What ``select-alpha`` prints for the loaded transform ``t``: the index, the transform file and the
    label-free :class:`~mlirkit.transforms.alpha_select.AlphaSelection`."""
    from mlirkit.shift.from_index import select_alpha_for_index
    from mlirkit.transforms.alpha_select import DEFAULT_GRID

    sel = select_alpha_for_index(args.index, t, criterion=args.criterion, k=args.k,
                                 grid=DEFAULT_GRID if args.grid is None else args.grid,
                                 max_probes=args.max_probes, seed=args.seed)
    return {"index": str(args.index), "transform": str(args.transform), **sel.as_dict()}


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


def cmd_apply(args: argparse.Namespace) -> int:
    from mlirkit.shift.posthoc import apply_to_index
    from mlirkit.transforms.options import transform_from_args

    opts = transform_from_args(args)
    if args.alpha is None:
        logger.info("alpha %s for every language: the default, SHIFT's published strength (the best alpha measured "
                    "lies between 0.7 and 1.2 with the vectors; select-alpha chooses one without labels)", opts.alpha)
    stats = apply_to_index(args.index, opts.transform, args.output, alpha=opts.alpha, doc_langs=args.doc_langs,
                           overwrite=args.overwrite, strict=opts.strict, force=opts.force, show_progress=not args.quiet,
                           missing=opts.missing)
    _print(stats)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    import numpy as np

    from mlirkit.transforms.io import load_transform

    t = load_transform(args.transform)
    norms = {lang: round(float(np.linalg.norm(v)), 6) for lang, v in t.params.items()}
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

