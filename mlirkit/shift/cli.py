"""``python -m mlirkit.shift {fit,apply,inspect,derive,select-alpha}``: fit (from parallel text or from an
index's own documents), apply post hoc, look at and re-base transforms, choose alpha without labels."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from mlirkit.base.cli import ArgumentParser, configure_logging
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import LANG_LIST_HELP, LangListAction, lang_code, positive_int

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.encoders.options import add_encoder_args
    from mlirkit.transforms.options import add_transform_args
    from mlirkit.transforms.transform import TRANSFORMS

    p = ArgumentParser(prog="python -m mlirkit.shift", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    f = sub.add_parser("fit", help="fit a transform from parallel text or from an index's documents "
                                   "(or import a SHIFT .pt vector file)")
    f.add_argument("--method", choices=TRANSFORMS.names(), default="shift")
    f.add_argument("--pairs", default=None, metavar="SRC",
                   help="aligned JSONL(.gz) with id/lang/text, a SHIFT pairs-table directory, 'mmarco' (SHIFT recipe; 'mmarco-10k', "
                        "'mmarco-passages'), "
                        "a parallel-set id (mlirkit/parallel/...), or a SHIFT authors' .pt vector file (imported)")
    f.add_argument("--source-lang", type=lang_code, default=None, help="source (query) language, e.g. en (a .pt file carries its own)")
    f.add_argument("--output", required=True, help="transform file to write (exactly this path)")
    f.add_argument("--langs", action=LangListAction, default=None, metavar="LANG",
                   help=f"target languages to keep ({LANG_LIST_HELP}; default: all present)")
    f.add_argument("--max-pairs", type=positive_int, default=None, help="use at most N ids")
    f.add_argument("--rank", type=positive_int, default=1, help="LIR: number of singular vectors removed (default 1)")
    f.add_argument("--text-field", default="text", help="JSONL text field(s), comma-separated (joined by a space)")
    f.add_argument("--langid", action="store_true", help="also fit a language classifier (stored in the file)")
    f.add_argument("--langid-max-per-lang", type=positive_int, default=5000, help="classifier training passages per language")
    f.add_argument("--heldout", type=float, default=0.0,
                   help="fraction of ids (chosen by a hash of the id) kept out of the fit; with --langid the "
                        "classifier's accuracy on them is stored")
    f.add_argument("--langid-threshold", type=float, default=0.9, help="threshold for the held-out coverage figure")
    f.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    f.add_argument("--force", action="store_true",
                   help="import a .pt vector file that records another model than the encoder's (warned)")
    c = f.add_argument_group("corpus-fitted SHIFT vectors (instead of --pairs; see docs/shift.md)")
    c.add_argument("--from-index", default=None, metavar="DIR",
                   help="fit V_l = mean(l documents) - mean(source documents) from this index's untransformed vectors")
    c.add_argument("--relative-to-overall", action="store_true",
                   help="V_l = mean(l documents) - mean(all documents), every language shifted (method shift-overall)")
    c.add_argument("--min-docs", type=positive_int, default=None,
                   help="refuse a language with fewer documents (default %d)" % _default_min_docs())
    c.add_argument("--hybrid-with", default=None, metavar="PAIRS_TRANSFORM",
                   help="a pair-fitted shift transform: its vectors where it has them, corpus vectors for the rest")
    c.add_argument("--blend", type=float, default=None, metavar="W",
                   help="with --hybrid-with: V = (1-W) V_pairs + W V_corpus where both exist")
    c.add_argument("--topic-rank", default=None, metavar="R",
                   help="keep the vectors (corpus-fitted or mined) out of the top-R eigenvectors of the documents' "
                        "pooled within-language covariance (the topic subspace); 'auto': the eigenvalues above the "
                        "Marchenko-Pastur noise edge")
    c.add_argument("--topic-test", type=float, default=None, metavar="LEVEL",
                   help="with --topic-rank: project only when the vectors hold significantly more of their energy "
                        "in the topic subspace than a random direction would (one-sided test at LEVEL, e.g. 0.01)")
    m = f.add_argument_group("vectors from pseudo-parallel pairs mined in the index (with --from-index; "
                             "see docs/shift.md)")
    m.add_argument("--mine-pairs", action="store_true",
                   help="V_l = mean of (x - y) over mutual ratio-margin nearest neighbours x in l, y in the source "
                        "language, re-mined after shifting until V_l stabilises (starts from the corpus vectors)")
    m.add_argument("--mine-k", type=positive_int, default=None,
                   help="neighbours in the ratio margin (default %d)" % _mining("DEFAULT_K"))
    m.add_argument("--mine-selection", default=None, metavar="NAME",
                   help="how a round picks its pairs: 'mutual-margin' (mutual best ratio-margin pairs, default) or "
                        "'union-knn' (every document with its --mine-k nearest documents on the other side, both "
                        "directions; no margin filter)")
    m.add_argument("--mine-threshold", type=float, default=None,
                   help="keep mutual pairs with margin >= T (default %g; mutual-margin only)"
                        % _mining("DEFAULT_THRESHOLD"))
    m.add_argument("--mine-min-pairs", type=positive_int, default=None,
                   help="fewer kept pairs: keep the corpus vector for that language (default %d)"
                        % _mining("DEFAULT_MIN_PAIRS"))
    m.add_argument("--mine-rounds", type=positive_int, default=None,
                   help="at most this many shift/re-mine/re-fit rounds (default %d)" % _mining("DEFAULT_MAX_ROUNDS"))
    m.add_argument("--mine-center", action="store_true",
                   help="remove the source-language mean from both sides before the cosine (spreads the compressed "
                        "cosines of anisotropic encoders such as e5)")
    m.add_argument("--mine-tol", type=float, default=None,
                   help="stop when ||V' - V|| <= TOL ||V|| (default %g)" % _mining("DEFAULT_TOL"))
    add_encoder_args(f)

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
    return p


def add_select_alpha_args(s: argparse.ArgumentParser) -> None:
    """The options of ``select-alpha`` (also used by the experiments' CLI, which adds its own)."""
    s.add_argument("--index", required=True, help="index directory (embeddings.npy or untransformed vectors)")
    s.add_argument("--transform", required=True, help="transform file")
    s.add_argument("--criterion", choices=["knn", "centroid"], default="knn",
                   help="knn: excess same-language share among the k nearest documents of source-language "
                        "documents; centroid: distance of language centroids")
    s.add_argument("--k", type=positive_int, default=20, help="neighbours per probe (knn)")
    s.add_argument("--grid", nargs="+", type=float, default=None, help="alphas to try (default 0.0 ... 2.0 by 0.1)")
    s.add_argument("--max-probes", type=positive_int, default=2000, help="source-language documents used as probes")
    s.add_argument("--seed", type=int, default=0)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    return {"fit": cmd_fit, "apply": cmd_apply, "inspect": cmd_inspect, "derive": cmd_derive,
            "select-alpha": cmd_select_alpha}[args.command](args)


def _mining(name: str) -> Any:
    from mlirkit.transforms import mining

    return getattr(mining, name)


def _default_min_docs() -> int:
    from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS

    return DEFAULT_MIN_DOCS


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False))


def cmd_fit(args: argparse.Namespace) -> int:
    from mlirkit.encoders.options import encoder_from_args
    from mlirkit.transforms.io import save_transform, sniff

    from mlirkit.base.fs import refuse_existing

    refuse_existing(Path(args.output), args.overwrite, "transform")
    if args.max_pairs is not None and args.max_pairs < 1:
        raise MlirkitError("--max-pairs must be at least 1")
    corpus_only = [o for o, v in (("--relative-to-overall", args.relative_to_overall), ("--min-docs", args.min_docs),
                                  ("--hybrid-with", args.hybrid_with), ("--blend", args.blend),
                                  ("--mine-pairs", args.mine_pairs), ("--topic-rank", args.topic_rank),
                                  ("--topic-test", args.topic_test))
                   if v not in (None, False)]
    if args.from_index is not None:
        return _fit_from_index(args)
    if corpus_only:
        raise MlirkitError(f"{', '.join(corpus_only)} need --from-index DIR")
    if args.pairs is None:
        raise MlirkitError("give --pairs SRC (parallel text) or --from-index DIR (corpus-fitted vectors)")
    if args.method == "shift-overall":
        raise MlirkitError("shift-overall vectors are fitted from an index: use --from-index DIR --relative-to-overall")
    pairs = Path(args.pairs)
    if pairs.is_file() and sniff(pairs) == "torch":
        return _import_pt(args)
    if not args.source_lang:
        raise MlirkitError("--source-lang is required when fitting from parallel text")
    from mlirkit.transforms.fit import fit_from_groups
    from mlirkit.transforms.parallel import open_parallel

    import itertools

    groups = open_parallel(args.pairs, text_field=args.text_field, langs=args.langs, source_lang=args.source_lang)
    first = list(itertools.islice(groups, 1))  # read before loading the model: bad input fails fast
    if not first:
        raise MlirkitError(f"{args.pairs}: no parallel rows")
    groups = itertools.chain(first, groups)
    encoder = encoder_from_args(args)
    t, report = fit_from_groups(encoder, groups, method=args.method, source_lang=args.source_lang, langs=args.langs,
                                max_pairs=args.max_pairs, batch_size=args.batch_size or 64, rank=args.rank,
                                langid=args.langid, langid_max_per_lang=args.langid_max_per_lang,
                                heldout=args.heldout, langid_threshold=args.langid_threshold,
                                source_name=args.pairs, show_progress=not args.quiet)
    t.meta["encoder_name"] = args.encoder
    save_transform(t, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": t.sha256, "method": t.method, **report.as_dict()})
    return 0


def _fit_from_index(args: argparse.Namespace) -> int:
    from mlirkit.shift.from_index import fit_corpus_shift_from_index
    from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS
    from mlirkit.transforms.io import load_transform, save_transform

    if args.pairs is not None:
        raise MlirkitError("give either --pairs (parallel text) or --from-index (the corpus), not both")
    if args.method not in ("shift", "shift-overall"):
        raise MlirkitError(f"--from-index fits shift vectors, not {args.method} (use --method shift)")
    if not args.source_lang:
        raise MlirkitError("--source-lang is required with --from-index")
    overall = args.relative_to_overall or args.method == "shift-overall"
    if args.blend is not None and args.hybrid_with is None:
        raise MlirkitError("--blend needs --hybrid-with PAIRS_TRANSFORM")
    if args.hybrid_with is not None and overall:
        raise MlirkitError("--hybrid-with combines vectors relative to the source language; drop --relative-to-overall")
    mine_opts = {o: v for o, v in (("--mine-k", args.mine_k), ("--mine-threshold", args.mine_threshold),
                                   ("--mine-min-pairs", args.mine_min_pairs), ("--mine-rounds", args.mine_rounds),
                                   ("--mine-tol", args.mine_tol), ("--mine-selection", args.mine_selection),
                                   ("--mine-center", args.mine_center or None)) if v is not None}
    if mine_opts and not args.mine_pairs:
        raise MlirkitError(f"{', '.join(mine_opts)} need --mine-pairs")
    if args.mine_selection is not None:
        _mining("SELECTIONS").get(args.mine_selection)  # unknown names fail here, with a did-you-mean
        if args.mine_selection != "mutual-margin" and args.mine_threshold is not None:
            raise MlirkitError(f"--mine-threshold filters mutual-margin pairs; --mine-selection "
                               f"{args.mine_selection} keeps every neighbour")
    if args.topic_rank is not None:
        from mlirkit.transforms.topic_subspace import parse_topic_rank

        parse_topic_rank(args.topic_rank)  # bad input fails before the embeddings are read
    if args.topic_test is not None and (args.topic_rank is None or not 0.0 < args.topic_test < 1.0):
        raise MlirkitError("--topic-test LEVEL needs --topic-rank and a level in (0, 1), e.g. 0.01")
    if args.topic_rank is not None and (overall or args.hybrid_with is not None):
        raise MlirkitError("--topic-rank is for vectors relative to the source language fitted on the index alone; "
                           "drop --relative-to-overall / --hybrid-with")
    if args.mine_pairs:
        if overall or args.hybrid_with is not None:
            raise MlirkitError("--mine-pairs fits vectors relative to the source language on their own; "
                               "drop --relative-to-overall / --hybrid-with")
        return _fit_mined(args)
    pairs_t = load_transform(args.hybrid_with) if args.hybrid_with is not None else None
    data = None
    if args.topic_rank is not None:  # the topic subspace needs the embeddings too: read them once for both
        from mlirkit.shift.from_index import index_document_embeddings

        data = index_document_embeddings(args.from_index)
    t = fit_corpus_shift_from_index(args.from_index, args.source_lang, relative_to="overall" if overall else "source",
                                    min_docs=DEFAULT_MIN_DOCS if args.min_docs is None else args.min_docs,
                                    only_langs=args.langs, embeddings=data)
    if data is not None:
        from mlirkit.transforms.topic_subspace import parse_topic_rank, remove_topic, topic_subspace

        embs, langs, _ = data
        t = remove_topic(t, topic_subspace(embs, langs, parse_topic_rank(args.topic_rank)),
                         test_level=args.topic_test)
    if pairs_t is not None:
        from mlirkit.transforms.hybrid import hybrid_shift
        from mlirkit.base.langs import is_unknown

        from mlirkit.index import DenseIndex

        index_langs = sorted({l for l in DenseIndex(args.from_index).langs if not is_unknown(l)})
        t = hybrid_shift(pairs_t, t, blend=args.blend,
                         require_langs=index_langs if args.langs is None else args.langs)
    save_transform(t, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": t.sha256, "method": t.method, "source_lang": t.source_lang,
            "languages": t.languages, "corpus_fit": t.meta.get("corpus_fit"), "provenance": t.meta.get("provenance"),
            **({"topic_robust": t.meta["topic_robust"]} if "topic_robust" in t.meta else {})})
    return 0


def _fit_mined(args: argparse.Namespace) -> int:
    from mlirkit.transforms import mining
    from mlirkit.shift.from_index import index_document_embeddings
    from mlirkit.transforms.corpus_fit import DEFAULT_MIN_DOCS
    from mlirkit.transforms.io import save_transform

    embs, langs, encoder = index_document_embeddings(args.from_index)
    from mlirkit.transforms.topic_subspace import parse_topic_rank

    opt = {"k": args.mine_k, "threshold": args.mine_threshold, "min_pairs": args.mine_min_pairs,
           "max_rounds": args.mine_rounds, "tol": args.mine_tol, "center": True if args.mine_center else None,
           "topic_rank": None if args.topic_rank is None else parse_topic_rank(args.topic_rank),
           "topic_test_level": args.topic_test, "selection": args.mine_selection}
    t = mining.fit_mined_shift(embs, langs, args.source_lang, encoder=encoder, origin=str(args.from_index),
                               min_docs=DEFAULT_MIN_DOCS if args.min_docs is None else args.min_docs,
                               only_langs=args.langs, meta={"normalized": bool(encoder.get("normalize", False))},
                               **{k: v for k, v in opt.items() if v is not None})
    save_transform(t, args.output, overwrite=args.overwrite)
    info = t.meta["mining"]
    _print({"output": str(args.output), "sha256": t.sha256, "method": t.method, "source_lang": t.source_lang,
            "languages": t.languages, "provenance": t.meta["provenance"],
            "mining": {**{k: v for k, v in info.items() if k != "languages"},
                       "languages": {l: {"pairs": r["pairs"], "rounds": len(r["rounds"]), "converged": r["converged"],
                                         "fallback": r["fallback"], "margin": r["margin"]}
                                     for l, r in info["languages"].items()}},
            **({"topic_robust": t.meta["topic_robust"]} if "topic_robust" in t.meta else {})})
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
    stats = apply_to_index(args.index, opts.transform, args.output, alpha=opts.alpha, doc_langs=args.doc_langs,
                           overwrite=args.overwrite, strict=opts.strict, force=opts.force, show_progress=not args.quiet)
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
    from mlirkit.transforms.shift import derive_source

    t = load_transform(args.transform)
    new = derive_source(t, args.source_lang)
    new.meta.pop("created", None)
    save_transform(new, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": new.sha256, "source_lang": new.source_lang,
            "languages": new.languages})
    return 0

