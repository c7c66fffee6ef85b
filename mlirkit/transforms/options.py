"""Transform options shared by every CLI that applies a language transform (encode, shift apply, the Pyserini
encode wrapper): ``--transform FILE --alpha A [--langid THRESHOLD] [--strict] [--force]``, and ``--alpha``
alone (:func:`add_alpha_arg`, also for the query-time shift).

:func:`add_transform_args` declares them, :func:`transform_from_args` reads them once: the file is loaded
(once, before any model loads, so a bad file fails fast), ``--alpha`` is already an
:class:`~mlirkit.transforms.alpha.Alpha`, and the language-identification threshold is checked and switched
on. The encoder is checked where it is known (:meth:`TransformOptions.check_encoder`).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.defaults import DEFAULT_ALPHA

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

__all__ = ["TransformOptions", "add_alpha_arg", "add_missing_arg", "add_transform_args", "transform_from_args"]


@dataclass(frozen=True)
class TransformOptions:
    """The parsed transform options: ``transform`` is None when no ``--transform`` was given."""

    transform: LanguageTransform | None = None
    alpha: Alpha = Alpha()
    strict: bool = False
    force: bool = False
    langid_threshold: float | None = None
    missing: str | None = None  # languages without a vector: "corpus" or "keep" (None: the default policy)

    def check_encoder(self, fingerprint: dict[str, Any], dim: int | None = None) -> None:
        """Refuse a transform fitted with another encoder (warned with ``--force``)."""
        if self.transform is not None:
            self.transform.check_encoder(fingerprint, force=self.force, dim=dim)


def add_transform_args(parser: argparse.ArgumentParser, *, required: bool = False, langid: bool = True,
                       alpha_words: bool = True, missing: bool = True) -> None:
    """``--transform``, ``--alpha``, ``--langid`` (unless ``langid=False``), ``--missing`` (unless
    ``missing=False``), ``--strict``, ``--force``.

    ``alpha_words=False``: ``--alpha`` takes one word (``0.6,ja=1.0``), for a wrapper whose other arguments
    are positional.
    """
    g = parser.add_argument_group("language transform")
    g.add_argument("--transform", required=required, default=None, metavar="FILE",
                   help="language transform file (python -m mlirkit.shift fit), applied by document language")
    add_alpha_arg(g, words=alpha_words)
    if langid:
        g.add_argument("--langid", type=float, default=None, metavar="THRESHOLD",
                       help="predict the language of documents without one with the transform's classifier; "
                            "below this confidence they stay unchanged (documents without a language are then allowed)")
    if missing:
        add_missing_arg(g)
    g.add_argument("--strict", action="store_true", help="fail when a document language has no transform parameters")
    g.add_argument("--force", action="store_true", help="apply a transform fitted with another encoder (warned)")


def add_missing_arg(group: Any) -> None:
    """``--missing {corpus,keep}``: the documents of languages the transform has no vector for."""
    from mlirkit.transforms.defaults import DEFAULT_MISSING, MISSING_POLICIES

    group.add_argument("--missing", choices=MISSING_POLICIES, default=None,
                       help="documents of languages the shift transform has no vector for: 'corpus' fills the vector "
                            "from this corpus (mean of the language's documents minus the pivot language's, re-based "
                            "like the others), "
                            f"'keep' leaves them unshifted (default {DEFAULT_MISSING}; measured in docs/results.md)")


def transform_from_args(args: argparse.Namespace) -> TransformOptions:
    """The options of :func:`add_transform_args`, the transform file loaded once (see the module docstring)."""
    threshold = getattr(args, "langid", None)
    missing = getattr(args, "missing", None)
    if not args.transform:
        flags = ["--alpha", "--langid"] if "langid" in vars(args) else ["--alpha"]
        if args.alpha is not None or threshold is not None:
            raise MlirkitError(f"{' and '.join(flags)} need{'s' if len(flags) == 1 else ''} --transform")
        if missing is not None:
            raise MlirkitError("--missing needs --transform")
        return TransformOptions(strict=args.strict, force=args.force)
    from mlirkit.transforms.io import load_transform

    transform = load_transform(args.transform)
    transform.use_langid(threshold)
    if args.alpha is not None:
        transform.check_alpha(args.alpha)  # before any model loads
    return TransformOptions(transform, args.alpha if args.alpha is not None else Alpha(), strict=args.strict,
                            force=args.force, langid_threshold=threshold, missing=missing)


class _AlphaAction(argparse.Action):
    """Joins the words of ``--alpha 0.6 ja=1.0`` and parses them once into an :class:`Alpha` (a bad value
    raises :class:`MlirkitError`, reported by :func:`mlirkit.base.cli.run_cli` like every input error)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, Alpha.from_text(values, option_string or "--alpha"))


def add_alpha_arg(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, words: bool = True,
                  default: Alpha | None = None, help: str | None = None) -> None:
    """``--alpha`` as an :class:`Alpha` (``default`` when absent). ``words=False`` takes one word only
    (``0.6,ja=1.0``), for a wrapper whose remaining arguments are positional."""
    parser.add_argument("--alpha", nargs="+" if words else None, action=_AlphaAction, default=default,
                        metavar="A|LANG=A",
                        help=help or "transform strength in [0, 2] (default %g, the published formula): 0.8, or with per-language overrides 0.8,ja=1.0" % DEFAULT_ALPHA
                                     + (" (or 0.8 ja=1.0)" if words else "") + "; '*=' sets the default")
