"""The one ``KEY=VALUE`` parser of the command lines (``--encoder-option``, ``--index-param``, ``--alpha``, ...),
the count types (:func:`positive_int`) and the one reader of language lists (:class:`LangListAction`)."""
from __future__ import annotations

import argparse
from typing import Any, Iterable, Sequence

from mlirkit.base.errors import MlirkitError


def split_key_value(item: str, option: str, *, expected: str = "KEY=VALUE") -> tuple[str, str]:
    """``"k=v"`` -> ``("k", "v")`` (the key stripped, the value as given: it may be a prefix ending in a space);
    a missing ``=`` or key is an error naming ``option``."""
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise MlirkitError(f"{option} {item!r} is not {expected}")
    return key, value


def parse_key_values(items: Iterable[str] | None, option: str, *, expected: str = "KEY=VALUE",
                     unique: bool = False) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; a later key wins unless ``unique`` (then it is an error)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, value = split_key_value(item, option, expected=expected)
        if unique and key in out:
            raise MlirkitError(f"{option}: {key!r} given twice")
        out[key] = value
    return out


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def typed_value(text: str, kind: type, where: str) -> Any:
    """The text of a ``KEY=VALUE`` option as ``kind``: ``bool`` (true/false, yes/no, on/off, 1/0), ``int``,
    ``float``, else the text itself; a value that is not one is an error naming ``where`` (``--set lr=x``)."""
    if kind is bool:
        if text.strip().lower() not in _TRUE | _FALSE:
            raise MlirkitError(f"{where}: expected true or false")
        return text.strip().lower() in _TRUE
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            raise MlirkitError(f"{where}: expected {'an integer' if kind is int else 'a number'}") from None
    return text


def positive_int(text: str) -> int:
    """argparse ``type=`` of every count option (``--hits``, ``--chunk-size``, ``--batch-size``, ``--k``,
    shard counts, ...): an integer >= 1, else argparse's error (exit 2) naming the option."""
    return _bounded_int(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """argparse ``type=`` of an index or a number that may be 0 (``--shard-id``, ``--digits``, ``--threads`` where 0 keeps the default): an integer >= 0."""
    return _bounded_int(text, 0, "an integer >= 0")


def _bounded_int(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


#: the help suffix of every language-list option
LANG_LIST_HELP = "space- or comma-separated: de fr or de,fr"


def split_lang_list(words: Iterable[str]) -> list[str]:
    """``["de,fr", " ja ", ","]`` -> ``["de", "fr", "ja"]``: each word split on commas, stripped, empties
    dropped, the order kept, a repeated code kept once (``de,de`` is ``de``); a code outside :data:`~mlirkit.base.langs.LANG_RE` (``en_US``, ``de fr``)
    or no code at all is a ``ValueError``."""
    from mlirkit.base.langs import bcp47_case, is_lang_code

    codes = [c.strip() for w in words for c in w.split(",") if c.strip()]
    if not codes:
        raise ValueError("no language code given")
    bad = [c for c in codes if not is_lang_code(c)]
    if bad:
        raise ValueError(f"invalid language {bad[0]!r} (expected codes such as en, pt-BR or zh-Hant, "
                         "separated by spaces or commas)")
    return list(dict.fromkeys(bcp47_case(c) for c in codes))


def lang_code(text: str) -> str:
    """argparse ``type=`` of every option taking one language code (``--default-lang``,
    ``--source-lang``): the code in its BCP 47 case (:func:`mlirkit.base.langs.check_lang`: ``EN`` -> ``en``,
    ``zh-hans`` -> ``zh-Hans``; ``und`` for unknown), else argparse's one-line error (exit 2)."""
    from mlirkit.base.errors import MlirkitError
    from mlirkit.base.langs import check_lang

    try:
        return check_lang(text.strip(), "language")
    except MlirkitError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("language: ")) from None


class LangListAction(argparse.Action):
    """argparse ``action=`` of every option taking several language codes (``fit --langs``, ``mlirkit.benchmark
    --query-langs/--languages``, ``mlirkit.train --parallel-langs``): ``--langs de fr`` and ``--langs de,fr``
    give ``["de", "fr"]`` (:func:`split_lang_list`); a bad code is argparse's error (exit 2)."""

    def __init__(self, option_strings: Sequence[str], dest: str, nargs: str | None = "+", **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values,
                 option_string: str | None = None) -> None:
        try:
            codes = split_lang_list([values] if isinstance(values, str) else values)
        except ValueError as e:
            if self.nargs == "*" and not values:  # an empty list option ("--parallel-langs" alone) stays empty
                setattr(namespace, self.dest, [])
                return
            parser.error(f"argument {option_string}: {e}")
        setattr(namespace, self.dest, codes)


def add_verbosity_args(container: Any, quiet_help: str = "only warnings and errors on stderr (no INFO lines, "
                                                         "no progress bars)") -> None:
    """``-q/--quiet`` and ``-v/--verbose``, the same on every command line (docs/cli.md)."""
    container.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    container.add_argument("-v", "--verbose", action="store_true", help="debug messages")


__all__ = ["LANG_LIST_HELP", "LangListAction", "add_verbosity_args", "lang_code", "non_negative_int",
           "parse_key_values", "positive_int", "split_key_value", "split_lang_list", "typed_value"]
