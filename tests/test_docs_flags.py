"""Every ``--flag`` of a ``python -m mlirkit.*`` (or ``experiments.*``, ``perf.*``) command in the docs' code
(README.md, docs/*.md, experiments/README.md and its notes, perf/README.md) is one its command's parser knows:
an option the parser does not take cannot stay documented.

Commands are read from fenced code blocks and inline code spans (continuation lines joined); a command
ends at ``|``, ``&&``, ``;``, ``>`` or a comment. A subcommand (``python -m mlirkit.shift fit ...``) is
checked against its own parser. The Pyserini wrappers pass unknown flags on to Pyserini, so for them the
flags of Pyserini's own ``__main__`` (read as text, without starting the JVM) are allowed too.
"""
from __future__ import annotations

import argparse
import importlib
import re
import shlex
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "experiments").rglob("*.md")),
             *sorted((ROOT / "perf").glob("*.md"))]
COMMAND = re.compile(r"python -m ((?:mlirkit|experiments|perf)(?:\.[a-z_][a-z0-9_]*)+)")
END = re.compile(r"\s(?:\||&&|;|>|2>|#)\s|\s(?:python|for|done|then)\s|$")
FENCE = re.compile(r"^```.*?$(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]*python -m (?:mlirkit|experiments|perf)[^`\n]*)`")
#: wrapper module -> the Pyserini module whose own flags it passes through
PYSERINI = {"mlirkit.pyserini.search": "pyserini/search/faiss/__main__.py",
            "mlirkit.pyserini.encode": "pyserini/encode/__main__.py"}


def commands() -> list[tuple[str, str, list[str]]]:
    """``(where, module, words)`` of every ``python -m mlirkit.*`` command in the docs' code."""
    out = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        spans = [m.group(1) for m in FENCE.finditer(text)] + [m.group(1) for m in INLINE.finditer(text)]
        for span in spans:
            for line in re.sub(r"\\\n\s*", " ", span).splitlines():
                for m in COMMAND.finditer(line):
                    rest = line[m.end():]
                    rest = rest[:END.search(rest).start()]
                    try:
                        words = shlex.split(rest)
                    except ValueError:  # an unbalanced quote in an excerpt
                        words = rest.split()
                    out.append((f"{path.relative_to(ROOT)}: {line.strip()[:100]}", m.group(1), words))
    return out


def _parser(module: str, words: list[str]) -> tuple[argparse.ArgumentParser | None, list[str]]:
    """The parser of ``module``'s command line ``words`` and the words left for it (a package's ``cli``
    module, or the module itself for ``experiments.*`` and ``perf.*`` scripts with a ``build_parser``)."""
    try:
        cli = importlib.import_module(f"{module}.cli")
    except ModuleNotFoundError:
        if module.startswith("mlirkit."):
            return None, words
        cli = importlib.import_module(module)
    build = getattr(cli, "build_parser", None)
    return (build() if build is not None else None), words


def _flags(parser: argparse.ArgumentParser) -> tuple[set[str], dict[str, argparse.ArgumentParser]]:
    flags, subs = set(), {}
    for action in parser._actions:
        flags.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            subs.update(action.choices)
    return flags, subs


def _all_flags(parser: argparse.ArgumentParser) -> set[str]:
    flags, subs = _flags(parser)
    return flags.union(*(_all_flags(p) for p in subs.values()))


def _known(parser: argparse.ArgumentParser, positional: list[str]) -> set[str]:
    """The flags of the (sub)command the positional words name (``eval plot alpha``); where they name
    none, those of every subcommand below."""
    known, subs = _flags(parser)
    for word in positional:
        if word not in subs:
            break
        parser = subs[word]
        flags, subs = _flags(parser)
        known = known | flags
    return known.union(*(_all_flags(p) for p in subs.values()))


def _pyserini_flags(module: str) -> set[str] | None:
    try:
        source = Path(str(metadata.distribution("pyserini").locate_file(PYSERINI[module])))
    except metadata.PackageNotFoundError:
        return None
    return set(re.findall(r"[\"'](--[a-z0-9][a-z0-9.-]*)[\"']", source.read_text(encoding="utf-8"))) if source.is_file() else None


def test_the_docs_show_mlirkit_commands():
    found = {m for _, m, _ in commands()}
    assert {"mlirkit.shift", "mlirkit.search", "mlirkit.encode", "mlirkit.pyserini.search"} <= found


def test_every_documented_flag_is_known_to_its_command():
    unknown = []
    for where, module, words in commands():
        parser, words = _parser(module, words)
        if parser is None:
            continue
        known = _known(parser, [w for w in words if not w.startswith("-")])
        if module in PYSERINI:
            extra = _pyserini_flags(module)
            if extra is None:
                continue  # Pyserini not installed: its flags cannot be told from unknown ones
            known = known | extra
        for word in words:
            flag = word.split("=", 1)[0]
            if re.fullmatch(r"--[a-z0-9][a-z0-9-]*", flag) and flag not in known:
                unknown.append(f"{where}  ->  {flag}")
    assert not unknown, "documented flags the command does not know:\n" + "\n".join(unknown)


@pytest.mark.parametrize("module", ["perf.query_shift", "experiments.topic_variants", "experiments.alpha_criteria",
                                    "experiments.dcl_ablation", "experiments.language_vectors",
                                    "experiments.alpha_oracle", "experiments.paired_vectors"])
def test_documented_script_flags_exist(module):
    """The measurement scripts the docs and the notes run, named as a file or run with ``python -m``
    (also those that build their parser inside ``parse_args``)."""
    mod = importlib.import_module(module)
    if hasattr(mod, "build_parser"):
        known, _ = _flags(mod.build_parser())
    else:  # the script builds its parser inside parse_args: read the flags off its --help
        import contextlib
        import io

        help_text = io.StringIO()
        with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
            mod.parse_args(["--help"])
        known = set(re.findall(r"--[a-z0-9][a-z0-9-]*", help_text.getvalue()))
    names = re.compile(re.escape(f"{module.replace('.', '/')}.py") + "|" + re.escape(f"python -m {module}") + r"(?![\w.])")
    unknown, seen = [], 0
    for path in DOC_FILES:
        for line in re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8")).splitlines():
            for m in names.finditer(line):
                seen += 1
                rest = line[m.end():]
                rest = rest[:END.search(rest).start()]
                for word in rest.split():
                    flag = word.strip("`'\"(),").split("=", 1)[0]
                    if re.fullmatch(r"--[a-z0-9][a-z0-9-]*", flag) and flag not in known:
                        unknown.append(f"{path.relative_to(ROOT)}: {flag}")
    assert seen, f"{module}: no documented command names it"
    assert not unknown, f"{module}: documented flags its parser does not know:\n" + "\n".join(sorted(set(unknown)))
