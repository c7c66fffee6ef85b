"""Language lists on the command line: ``--langs de fr`` and ``--langs de,fr`` are the same (one action for
every option taking several language codes), and a language the data does not hold is one clear error."""
from __future__ import annotations

import argparse

import pytest

from mlirkit.base.cli import ArgumentParser
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import require_langs
from mlirkit.base.options import LangListAction, split_lang_list


def test_split_lang_list_splits_strips_and_drops_empties():
    assert split_lang_list(["de,xx"]) == ["de", "xx"]
    assert split_lang_list(["de", "fr"]) == ["de", "fr"]
    assert split_lang_list(["de, fr", " ja ", ",", "pt-BR,"]) == ["de", "fr", "ja", "pt-BR"]
    assert split_lang_list(["zh-Hant,sr-Latn-RS"]) == ["zh-Hant", "sr-Latn-RS"]
    assert split_lang_list(["ar", "de", "es", "de", "DE"]) == ["ar", "de", "es"]  # a repeated code once (the order kept)
    with pytest.raises(ValueError, match="no language code"):
        split_lang_list([",", " "])
    for bad in ("en_US", "de fr", "english", "d"):
        with pytest.raises(ValueError, match=f"invalid language '{bad}'"):
            split_lang_list(["en", bad])


def _parser(nargs="+"):
    p = ArgumentParser(prog="t")
    p.add_argument("--langs", action=LangListAction, nargs=nargs, default=None)
    return p


def test_the_action_gives_the_same_list_either_way_and_refuses_bad_codes(capsys):
    p = _parser()
    assert p.parse_args(["--langs", "de", "fr"]).langs == p.parse_args(["--langs", "de,fr"]).langs == ["de", "fr"]
    assert p.parse_args(["--langs", "de,fr", "ja"]).langs == ["de", "fr", "ja"]
    assert p.parse_args([]).langs is None
    with pytest.raises(SystemExit) as e:
        p.parse_args(["--langs", "de,en_US"])
    assert e.value.code == 2 and "argument --langs: invalid language 'en_US'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        p.parse_args(["--langs", ","])
    assert "no language code" in capsys.readouterr().err
    star = _parser("*")
    assert star.parse_args(["--langs"]).langs == [] and star.parse_args(["--langs", "de,fr"]).langs == ["de", "fr"]


def _lang_list_options(parser: argparse.ArgumentParser):
    """``(parser, option)`` of every LangListAction in ``parser`` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, LangListAction):
            yield parser, action.option_strings[0]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _lang_list_options(sub)


def test_every_cli_language_list_option_uses_the_action():
    """shift fit --langs, benchmark --query-langs/--langs, train --set parallel_langs=: commas split."""
    from mlirkit.benchmark.cli import build_parser as benchmark_parser
    from mlirkit.shift.cli import build_parser as shift_parser
    from mlirkit.train.cli import build_parser as train_parser

    found = {opt for build in (shift_parser, benchmark_parser, train_parser) for _, opt in _lang_list_options(build())}
    assert found == {"--langs", "--query-langs"}
    fit = shift_parser().parse_args(["fit", "--output", "o", "--langs", "de,fr", "ja"])
    assert fit.langs == ["de", "fr", "ja"]
    bench = benchmark_parser().parse_args(["--query-langs", "en,de", "--langs", "en", "de,fr"])
    assert bench.query_langs == ["en", "de"] and bench.languages == ["en", "de", "fr"]
    assert benchmark_parser().parse_args([]).query_langs == ["en"]
    from mlirkit.train.cli import parse_sets

    assert parse_sets(train_parser().parse_args(["--set", "parallel_langs=de,FR"]).set) == {"parallel_langs": ["de", "fr"]}
    with pytest.raises(MlirkitError, match="--set parallel_langs=de,en_US: invalid language 'en_US'"):
        parse_sets(["parallel_langs=de,en_US"])
    # no other option of these CLIs takes language codes by nargs without the action
    for build in (shift_parser, benchmark_parser, train_parser):
        stack = [build()]
        while stack:
            p = stack.pop()
            for a in p._actions:
                if isinstance(a, argparse._SubParsersAction):
                    stack.extend(a.choices.values())
                elif a.nargs in ("+", "*") and "lang" in a.dest:
                    assert isinstance(a, LangListAction), (p.prog, a.option_strings)


def test_require_langs_names_what_is_present_and_suggests():
    require_langs(["de", "fr"], ["en", "de", "fr", "und"], "documents")
    with pytest.raises(MlirkitError) as e:
        require_langs(["de", "deu", "xx", "DE"], ["en", "de", "fr", "und", None], "documents", " in idx")
    assert str(e.value) == ("no documents of deu (did you mean: de?), xx, DE (did you mean: de?) in idx "
                            "(languages present: de, en, fr)")
    with pytest.raises(MlirkitError, match=r"no vectors of pt \(did you mean: pt-BR\?\), dt \(did you mean: nl\?\) "):
        require_langs(["pt", "dt"], ["pt-BR", "nl", "en"], "vectors")
    with pytest.raises(MlirkitError, match=r"\(languages present: none\)"):
        require_langs(["de"], [], "vectors")
