"""The options of every mlirkit command line, counted from its parsers (docs/architecture.md, "The command
lines"): per command and subcommand, the options ``--help`` shows (``-h`` not counted, nor an option hidden
from ``--help``, which only earlier trees have; an option with several names once), and its **own** options, as a reader meets them:
those outside a titled section of ``--help``, plus one per titled section (the shared ones: ``encoder``,
``language transform``, ``index type``, ``engine``, query-time SHIFT; a command's own: eval's paired test, fuse's
tuning), with ``-q/--quiet`` and ``-v/--verbose`` (every command line's) one; the Pyserini wrappers' section of their
own options (apart from Pyserini's) counts in full.

    python scripts/option_counts.py                    # a Markdown table of this checkout's command lines
    python scripts/option_counts.py --root DIR         # ... of another checkout (an earlier commit's tree)
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: sections whose options each count: argparse's own, and the Pyserini wrappers' list of their own options
PLAIN_SECTIONS = ("options", "optional arguments", "positional arguments", "wrapper options")


def commands(root: Path = ROOT) -> list[tuple[str, argparse.ArgumentParser]]:
    """``(command, parser)`` for every CLI and subcommand, in name order (the ``mlirkit`` under ``root``)."""
    out = []
    modules = sorted(".".join(p.parent.relative_to(root).parts) for p in (root / "mlirkit").rglob("__main__.py")
                     if (p.parent / "cli.py").is_file())

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        out.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(sub, f"{name} {sub_name}")

    for module in modules:
        cli = importlib.import_module(f"{module}.cli")
        if hasattr(cli, "build_parser"):
            parser = cli.build_parser()
            walk(parser[0] if isinstance(parser, tuple) else parser, module.removeprefix("mlirkit."))
    return out


def _shown(action: argparse.Action) -> bool:
    return bool(action.option_strings) and action.help != argparse.SUPPRESS and not isinstance(
        action, argparse._HelpAction) and "--help" not in action.option_strings


def shown_options(parser: argparse.ArgumentParser) -> int:
    """The options ``--help`` lists."""
    return sum(1 for a in parser._actions if _shown(a))


def own_options(parser: argparse.ArgumentParser) -> int:
    """The options ``--help`` lists, each titled section and the ``-q``/``-v`` pair counted once."""
    plain, sections = 0, 0
    for group in parser._action_groups:
        shown = sum(1 for a in group._group_actions if _shown(a))
        if group.title is None or group.title.startswith(PLAIN_SECTIONS):
            plain += shown
        elif shown:
            sections += 1
    verbosity = {"--quiet", "--verbose"} <= {o for a in parser._actions if _shown(a) for o in a.option_strings}
    return plain + sections - verbosity


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout whose command lines are counted")
    args = p.parse_args(argv)
    sys.path.insert(0, str(args.root.resolve()))
    rows = commands(args.root.resolve())
    print("| command | options shown | own (a section, -q/-v once) |\n|---|---|---|")
    for name, parser in rows:
        print(f"| `{name}` | {shown_options(parser)} | {own_options(parser)} |")
    print(f"| all | {sum(shown_options(q) for _, q in rows)} | {sum(own_options(q) for _, q in rows)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
