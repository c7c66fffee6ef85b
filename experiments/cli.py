"""``python -m experiments.cli {fit,select-alpha,evaluate-langid}``: the knobs measured and not adopted, on top
of ``python -m mlirkit.shift``.

- ``fit``: everything ``mlirkit.shift fit`` does from parallel text, and from an index every vector variant
  the investigation measured, with the knobs it measured them with (the options as they were when the notes in
  experiments/notes/ were written, so their commands run unchanged): corpus vectors (default; ``--relative-to-overall``,
  ``--hybrid-with`` with ``--blend``), the topic projection (``--topic-rank``, ``--topic-test``), mined pairs
  (``--mine-pairs`` with ``--mine-selection``, ``--mine-k``, ``--mine-threshold``, ``--mine-center``, ...; the
  defaults of that time: mutual ratio-margin pairs, no centring), and the held-out options of the language
  classifier (``--heldout``, ``--langid-threshold``, ``--langid-max-per-lang``). The product's
  ``--vectors mined`` is ``--mine-pairs --mine-selection union-knn --mine-center --topic-rank auto
  --topic-test 0.01`` where the mined vectors lie outside the topic subspace (the rule of
  ``mlirkit.transforms.mining.mined_recipe``; without the two topic options where they do not, as with USEM).
- ``select-alpha``: everything ``mlirkit.shift select-alpha`` prints, plus ``--guarded`` (per-language alphas
  that never lower a language's retrievability or pseudo-recall below alpha 0, :mod:`experiments.alpha_guard`;
  ``--probe-queries``: unlabelled query embeddings as probes) and ``--pseudo-recall`` (the global alpha of
  largest mean pseudo-recall, :mod:`experiments.pseudo_recall`). Measured in experiments/notes/: neither
  protects a language's recall, so neither became the product's rule.
- ``evaluate-langid``: the held-out accuracy of a transform's language classifier and its retrieval effect
  (:mod:`experiments.langid_eval`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.cli import ArgumentParser, configure_logging, run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import cli_main
from mlirkit.base.options import positive_int


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.base.options import LANG_LIST_HELP, LangListAction, lang_code
    from mlirkit.encoders.options import add_encoder_args
    from mlirkit.transforms import TRANSFORMS
    from mlirkit.transforms.alpha import Alpha
    from mlirkit.transforms.options import add_alpha_arg
    from mlirkit.transforms.mining import DEFAULT_K, DEFAULT_MAX_ROUNDS, DEFAULT_MIN_PAIRS, DEFAULT_TOL

    from experiments import corpus_variants  # noqa: F401 (registers shift-overall)
    from experiments.mining_variants import DEFAULT_THRESHOLD

    p = ArgumentParser(prog="python -m experiments.cli", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="mlirkit.shift fit with the knobs of the investigation")
    f.add_argument("--method", choices=TRANSFORMS.names(), default="shift")
    f.add_argument("--pairs", default=None, metavar="SRC", help="parallel text, as mlirkit.shift fit --pairs")
    f.add_argument("--from-index", default=None, metavar="DIR", help="fit on this index's untransformed document vectors")
    f.add_argument("--source-lang", type=lang_code, default=None, help="source (query) language, e.g. en")
    f.add_argument("--output", required=True, help="transform file to write (exactly this path)")
    f.add_argument("--langs", action=LangListAction, default=None, metavar="LANG",
                   help=f"target languages to keep ({LANG_LIST_HELP}; default: all present)")
    f.add_argument("--max-pairs", type=positive_int, default=None, help="at most N pairs per target language")
    f.add_argument("--rank", type=positive_int, default=None, help="lir / lsar: the rank")
    f.add_argument("--text-field", default="text", help="JSONL text field(s), comma-separated (joined by a space)")
    f.add_argument("--fit-langid", dest="langid", action="store_true", help="also fit a language classifier (stored in the file)")
    f.add_argument("--hybrid-with", default=None, metavar="PAIRS_TRANSFORM",
                   help="with --from-index: a pair-fitted shift transform, its vectors where it has them")
    f.add_argument("--min-docs", type=positive_int, default=None, help="with --from-index: fewest documents per language")
    f.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    add_encoder_args(f)
    h = f.add_argument_group("the language classifier's held-out figures (with --fit-langid)")
    h.add_argument("--langid-max-per-lang", type=positive_int, default=5000,
                   help="classifier training passages per language")
    h.add_argument("--heldout", type=float, default=0.0,
                   help="fraction of ids (chosen by a hash of the id) kept out of the fit; with --fit-langid the "
                        "classifier's accuracy on them is stored")
    h.add_argument("--langid-threshold", type=float, default=0.9, help="threshold for the held-out coverage figure")
    c = f.add_argument_group("corpus-fitted vectors (with --from-index)")
    c.add_argument("--relative-to-overall", action="store_true",
                   help="V_l = mean(l documents) - mean(all documents), every language shifted (method shift-overall)")
    c.add_argument("--blend", type=float, default=None, metavar="W",
                   help="with --hybrid-with: V = (1-W) V_pairs + W V_corpus where both exist")
    c.add_argument("--topic-rank", default=None, metavar="R",
                   help="keep the vectors (corpus-fitted or mined) out of the top-R eigenvectors of the documents' "
                        "pooled within-language covariance (the topic subspace); 'auto': the eigenvalues above the "
                        "Marchenko-Pastur noise edge")
    c.add_argument("--topic-test", type=float, default=None, metavar="LEVEL",
                   help="with --topic-rank: project only when the vectors hold significantly more of their energy "
                        "in the topic subspace than a random direction would (one-sided test at LEVEL, e.g. 0.01)")
    m = f.add_argument_group("vectors from pseudo-parallel pairs mined in the index (with --from-index)")
    m.add_argument("--mine-pairs", action="store_true",
                   help="V_l = mean of (x - y) over mined pairs x in l, y in the source language, re-mined after "
                        "shifting until V_l stabilises (starts from the corpus vectors)")
    m.add_argument("--mine-k", type=positive_int, default=None, help="neighbours in the ratio margin (default %d)" % DEFAULT_K)
    m.add_argument("--mine-selection", default=None, metavar="NAME",
                   help="how a round picks its pairs: 'mutual-margin' (mutual best ratio-margin pairs, default here) "
                        "or 'union-knn' (every document with its --mine-k nearest documents on the other side, both "
                        "directions; no margin filter)")
    m.add_argument("--mine-threshold", type=float, default=None,
                   help="keep mutual pairs with margin >= T (default %g; mutual-margin only)" % DEFAULT_THRESHOLD)
    m.add_argument("--mine-min-pairs", type=positive_int, default=None,
                   help="fewer kept pairs: keep the corpus vector for that language (default %d)" % DEFAULT_MIN_PAIRS)
    m.add_argument("--mine-rounds", type=positive_int, default=None,
                   help="at most this many shift/re-mine/re-fit rounds (default %d)" % DEFAULT_MAX_ROUNDS)
    m.add_argument("--mine-center", action="store_true",
                   help="remove the source-language mean from both sides before the cosine (spreads the compressed "
                        "cosines of anisotropic encoders such as e5)")
    m.add_argument("--mine-tol", type=float, default=None,
                   help="stop when ||V' - V|| <= TOL ||V|| (default %g)" % DEFAULT_TOL)

    s = sub.add_parser("select-alpha", help="mlirkit.shift select-alpha with the guarded and pseudo-recall rules")
    s.add_argument("--index", required=True, help="index directory (embeddings.npy or untransformed vectors)")
    s.add_argument("--transform", required=True, help="transform file")
    s.add_argument("--criterion", choices=["knn", "centroid"], default="knn", help="as mlirkit.shift select-alpha")
    s.add_argument("--k", type=positive_int, default=20, help="neighbours per probe (knn)")
    s.add_argument("--grid", nargs="+", type=float, default=None, help="alphas to try (default 0.0 ... 2.0 by 0.1)")
    s.add_argument("--max-probes", type=positive_int, default=2000, help="documents used as probes")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--guarded", action="store_true",
                   help="also choose per-language alphas that never lower a language's --guard quantity below alpha 0 "
                        "(default retrievability: share of its documents in some source-language document's top k; "
                        "output key 'guarded')")
    s.add_argument("--retrievability-k", type=positive_int, default=None,
                   help="with --guarded: the k of the guard, retrievability@k or pseudo-recall@k (default: --k)")
    s.add_argument("--guard", choices=["retrievability", "pseudo-recall"], default=None,
                   help="with --guarded: the quantity no language may lose against alpha 0: retrievability, or "
                        "pseudo-recall (share of its pseudo-relevant documents, mutual ratio-margin pairs with "
                        "source-language documents mined at alpha 0, in their probe's top k); default retrievability")
    s.add_argument("--probe-queries", default=None, metavar="FILE.npy",
                   help="with --guarded (retrievability guard): unlabelled source-language query embeddings, an "
                        "(m, d) .npy from the index's encoder, used as probes instead of source-language documents")
    s.add_argument("--pseudo-recall", action="store_true",
                   help="also choose the global alpha of largest mean pseudo-recall@k (output key 'pseudo_recall')")
    e = sub.add_parser("evaluate-langid", help="held-out language-identification accuracy and its retrieval effect")
    e.add_argument("--transform", required=True, help="transform fitted with --fit-langid --heldout")
    e.add_argument("--pairs", required=True, metavar="SRC", help="the parallel data the transform was fitted on")
    e.add_argument("--text-field", default="text")
    e.add_argument("--max-pairs", type=positive_int, default=200, help="held-out ids to use")
    e.add_argument("--heldout", type=float, default=None, help="held-out fraction (default: the one stored at fit time)")
    e.add_argument("--threshold", type=float, default=0.9, help="confidence threshold")
    add_alpha_arg(e, default=Alpha())
    add_encoder_args(e)
    for sp in sub.choices.values():
        sp.add_argument("-q", "--quiet", action="store_true",
                        help="only warnings and errors on stderr (no INFO lines, no progress bars)")
    return p


@cli_main
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    return {"fit": cmd_fit, "select-alpha": cmd_select_alpha,
            "evaluate-langid": cmd_evaluate_langid}[args.command](args)


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False))


def cmd_fit(args: argparse.Namespace) -> int:
    from mlirkit.base.fs import refuse_existing

    refuse_existing(Path(args.output), args.overwrite, "transform")
    corpus_only = [o for o, v in (("--relative-to-overall", args.relative_to_overall), ("--min-docs", args.min_docs),
                                  ("--hybrid-with", args.hybrid_with), ("--blend", args.blend),
                                  ("--mine-pairs", args.mine_pairs), ("--topic-rank", args.topic_rank),
                                  ("--topic-test", args.topic_test))
                   if v not in (None, False)]
    if args.from_index is not None:
        return _fit_from_index(args)
    if corpus_only:
        raise MlirkitError(f"{', '.join(corpus_only)} need --from-index DIR")
    if args.method == "shift-overall":
        raise MlirkitError("shift-overall vectors are fitted from an index: use --from-index DIR --relative-to-overall")
    if args.pairs is None or not args.source_lang:
        raise MlirkitError("give --pairs SRC and --source-lang")
    from mlirkit.encoders.options import encoder_from_args, encoder_options
    from mlirkit.transforms import open_parallel

    from experiments.langid_eval import fit_with_heldout

    groups = open_parallel(args.pairs, text_fields=args.text_field, langs=args.langs, source_lang=args.source_lang)
    t = fit_with_heldout(encoder_from_args(args), groups, method=args.method, source_lang=args.source_lang,
                         heldout=args.heldout, langid=args.langid, langid_max_per_lang=args.langid_max_per_lang,
                         langid_threshold=args.langid_threshold, batch_size=encoder_options(args).get("batch_size", 64),
                         langs=args.langs, max_pairs=args.max_pairs, show_progress=not args.quiet,
                         **({} if args.rank is None else {"rank": args.rank}))
    t.meta["encoder_name"] = args.encoder
    return _save(args, t, {**t.meta["fit"], "pairs": t.meta.get("pairs"),
                           "langid": None if t.langid is None else t.langid.to_meta()})


def _save(args: argparse.Namespace, t: Any, report: dict[str, Any]) -> int:
    from mlirkit.transforms import save_transform

    save_transform(t, args.output, overwrite=args.overwrite)
    _print({"output": str(args.output), "sha256": t.sha256, "method": t.method, "source_lang": t.source_lang,
            "languages": t.languages, **report})
    return 0


def _index_report(t: Any) -> dict[str, Any]:
    out = {k: t.meta[k] for k in ("recipe", "corpus_fit", "provenance", "hybrid", "topic_robust") if k in t.meta}
    if "mining" in t.meta:
        from mlirkit.transforms.mining import mining_summary

        out["mining"] = mining_summary(t.meta["mining"])
    return out


def _fit_from_index(args: argparse.Namespace) -> int:
    from mlirkit.shift.from_index import index_document_embeddings
    from mlirkit.transforms import hybrid_shift, load_transform

    from experiments.corpus_variants import DEFAULT_MIN_DOCS, blend_shift, fit_corpus_shift
    from experiments.mining_variants import SELECTIONS, fit_mined_shift
    from experiments.topic_projection import parse_topic_rank, remove_topic

    if args.pairs is not None:
        raise MlirkitError("give either --pairs (parallel text) or --from-index (the corpus), not both")
    if args.method not in ("shift", "shift-overall"):
        raise MlirkitError(f"--from-index fits shift vectors here, not {args.method} (use --method shift, or "
                           f"python -m mlirkit.shift fit for lsar and leace)")
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
        SELECTIONS.get(args.mine_selection)  # unknown names fail here, with a did-you-mean
        if args.mine_selection != "mutual-margin" and args.mine_threshold is not None:
            raise MlirkitError(f"--mine-threshold filters mutual-margin pairs; --mine-selection "
                               f"{args.mine_selection} keeps every neighbour")
    topic_rank = None if args.topic_rank is None else parse_topic_rank(args.topic_rank)  # fails before any reading
    if args.topic_test is not None and (args.topic_rank is None or not 0.0 < args.topic_test < 1.0):
        raise MlirkitError("--topic-test LEVEL needs --topic-rank and a level in (0, 1), e.g. 0.01")
    if args.topic_rank is not None and (overall or args.hybrid_with is not None):
        raise MlirkitError("--topic-rank is for vectors relative to the source language fitted on the index alone; "
                           "drop --relative-to-overall / --hybrid-with")
    min_docs = DEFAULT_MIN_DOCS if args.min_docs is None else args.min_docs
    if args.mine_pairs and (overall or args.hybrid_with is not None):
        raise MlirkitError("--mine-pairs fits vectors relative to the source language on their own; "
                           "drop --relative-to-overall / --hybrid-with")
    pairs_t = load_transform(args.hybrid_with) if args.hybrid_with is not None else None
    embs, langs, encoder = index_document_embeddings(args.from_index)
    meta = {"normalized": bool(encoder.get("normalize", False))}
    if args.mine_pairs:
        opt = {"k": args.mine_k, "threshold": args.mine_threshold, "min_pairs": args.mine_min_pairs,
               "max_rounds": args.mine_rounds, "tol": args.mine_tol, "topic_rank": topic_rank,
               "topic_test_level": args.topic_test}
        t = fit_mined_shift(embs, langs, args.source_lang, encoder=encoder, origin=str(args.from_index),
                            min_docs=min_docs, only_langs=args.langs, meta=meta,
                            selection=args.mine_selection or "mutual-margin", center=args.mine_center,
                            **{k: v for k, v in opt.items() if v is not None})
        return _save(args, t, _index_report(t))
    t = fit_corpus_shift(embs, langs, args.source_lang, encoder=encoder, relative_to="overall" if overall else "source",
                         min_docs=min_docs, only_langs=args.langs, origin=str(args.from_index), meta=meta)
    if topic_rank is not None:
        from mlirkit.transforms.topic_subspace import topic_subspace

        t = remove_topic(t, topic_subspace(embs, langs, topic_rank), test_level=args.topic_test)
    if pairs_t is not None:
        from mlirkit.base.langs import is_unknown

        require = sorted({la for la in langs if not is_unknown(la)}) if args.langs is None else args.langs
        t = (hybrid_shift(pairs_t, t, require_langs=require) if args.blend is None
             else blend_shift(pairs_t, t, args.blend, require_langs=require))
    return _save(args, t, _index_report(t))


def cmd_select_alpha(args: argparse.Namespace) -> int:
    from mlirkit.shift import select_alpha_for_index
    from mlirkit.transforms import load_transform
    from mlirkit.transforms.alpha_select import DEFAULT_GRID

    guard_only = [o for o, v in (("--guard", args.guard), ("--retrievability-k", args.retrievability_k),
                                 ("--probe-queries", args.probe_queries)) if v is not None]
    if guard_only and not args.guarded:
        raise MlirkitError(f"{', '.join(guard_only)} {'needs' if len(guard_only) == 1 else 'need'} --guarded")
    if args.probe_queries is not None and (args.guard or "retrievability") != "retrievability":
        raise MlirkitError("--probe-queries works with --guard retrievability only")
    t = load_transform(args.transform)
    grid = DEFAULT_GRID if args.grid is None else args.grid
    sel = select_alpha_for_index(args.index, t, criterion=args.criterion, k=args.k, grid=grid,
                                 max_probes=args.max_probes, seed=args.seed)
    out = {"index": str(args.index), "transform": str(args.transform), **sel.as_dict()}
    if args.guarded or args.pseudo_recall:
        from mlirkit.shift.from_index import index_document_embeddings

        embs, langs, _ = index_document_embeddings(args.index)  # read once for both
    if args.guarded:
        from experiments.alpha_guard import select_guarded_alphas

        probes = None
        if args.probe_queries is not None:
            import numpy as np

            try:
                probes = np.load(args.probe_queries, allow_pickle=False)
            except (OSError, ValueError) as e:
                raise MlirkitError(f"{args.probe_queries}: cannot read query probes as .npy ({e})") from e
        out["guarded"] = select_guarded_alphas(embs, langs, t, grid=sorted({0.0, *grid}), k=args.k,
                                               max_probes=args.max_probes, seed=args.seed,
                                               retrievability_k=args.retrievability_k,
                                               criterion=args.guard or "retrievability",
                                               probes=probes).as_dict()
        if probes is not None:
            out["guarded"]["probe_queries"] = str(args.probe_queries)
    if args.pseudo_recall:
        from experiments.pseudo_recall import select_pseudo_recall_alpha

        out["pseudo_recall"] = select_pseudo_recall_alpha(embs, langs, t, grid=grid, k=args.k,
                                                          max_probes=args.max_probes, seed=args.seed).as_dict()
    _print(out)
    return 0


def cmd_evaluate_langid(args: argparse.Namespace) -> int:
    from experiments.langid_eval import evaluate_langid
    from mlirkit.encoders.options import encoder_from_args, encoder_options
    from mlirkit.transforms import load_transform, open_parallel

    t = load_transform(args.transform)
    encoder = encoder_from_args(args)
    t.check_encoder(encoder.fingerprint, dim=encoder.dim)
    groups = open_parallel(args.pairs, text_fields=args.text_field)
    _print(evaluate_langid(encoder, t, groups, max_groups=args.max_pairs, heldout=args.heldout,
                           threshold=args.threshold, alpha=args.alpha,
                           batch_size=encoder_options(args).get("batch_size", 64)))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
