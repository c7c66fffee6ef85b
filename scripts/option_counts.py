"""The options of every mlirkit command line, counted from its parsers (docs/architecture.md, "The command
lines"): per command and subcommand, the options ``--help`` shows (``-h`` and the hidden spellings of earlier
releases not counted; a flag with several names once).

    python scripts/option_counts.py            # a Markdown table
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands() -> list[tuple[str, argparse.ArgumentParser]]:
    """``(command, parser)`` for every CLI and subcommand, in name order."""
    out = []
    modules = sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "mlirkit").rglob("__main__.py")
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
            walk(cli.build_parser(), module.removeprefix("mlirkit."))
    return out


def shown_options(parser: argparse.ArgumentParser) -> int:
    return sum(1 for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS
               and not isinstance(a, argparse._HelpAction) and "--help" not in a.option_strings)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    rows = commands()
    print("| command | options |\n|---|---|")
    for name, parser in rows:
        print(f"| `{name}` | {shown_options(parser)} |")
    print(f"| all | {sum(shown_options(p) for _, p in rows)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
