"""``python -m experiments.cli {select-alpha,evaluate-langid}``: the measured, not adopted label-free alpha
rules and the language-identification evaluation, on top of ``python -m mlirkit.shift``.

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
from typing import Any, Sequence

from mlirkit.base.cli import ArgumentParser, configure_logging, run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import positive_int


def build_parser() -> argparse.ArgumentParser:
    from mlirkit.encoders.options import add_encoder_args
    from mlirkit.shift.cli import add_select_alpha_args
    from mlirkit.transforms.alpha import Alpha, add_alpha_arg

    p = ArgumentParser(prog="python -m experiments.cli", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("select-alpha", help="mlirkit.shift select-alpha with the guarded and pseudo-recall rules")
    add_select_alpha_args(s)
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
    e.add_argument("--transform", required=True, help="transform fitted with --langid --heldout")
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, quiet=args.quiet)
    return {"select-alpha": cmd_select_alpha, "evaluate-langid": cmd_evaluate_langid}[args.command](args)


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False))


def cmd_select_alpha(args: argparse.Namespace) -> int:
    from mlirkit.shift.cli import select_alpha_report
    from mlirkit.transforms.alpha_select import DEFAULT_GRID
    from mlirkit.transforms.io import load_transform

    guard_only = [o for o, v in (("--guard", args.guard), ("--retrievability-k", args.retrievability_k),
                                 ("--probe-queries", args.probe_queries)) if v is not None]
    if guard_only and not args.guarded:
        raise MlirkitError(f"{', '.join(guard_only)} {'needs' if len(guard_only) == 1 else 'need'} --guarded")
    if args.probe_queries is not None and (args.guard or "retrievability") != "retrievability":
        raise MlirkitError("--probe-queries works with --guard retrievability only")
    t = load_transform(args.transform)
    out = select_alpha_report(args, t)
    grid = DEFAULT_GRID if args.grid is None else args.grid
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
    from mlirkit.encoders.options import encoder_from_args
    from mlirkit.transforms.io import load_transform
    from mlirkit.transforms.parallel import open_parallel

    t = load_transform(args.transform)
    encoder = encoder_from_args(args)
    t.check_encoder(encoder.fingerprint, dim=encoder.dim)
    groups = open_parallel(args.pairs, text_field=args.text_field)
    _print(evaluate_langid(encoder, t, groups, max_groups=args.max_pairs, heldout=args.heldout,
                           threshold=args.threshold, alpha=args.alpha, batch_size=args.batch_size or 64))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
