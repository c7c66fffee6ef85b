"""``Alpha``: --alpha parsed once, validated once, recorded in meta.json as before."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform
from mlirkit.transforms.alpha import Alpha
from mlirkit.transforms.options import add_alpha_arg

ENC = {"model": "m", "dim": 4}


@pytest.mark.parametrize("text, default, overrides, as_json", [
    ("0.6", 0.6, {}, 0.6),
    ("1", 1.0, {}, 1.0),
    ("0.6,ja=1.0", 0.6, {"ja": 1.0}, {"*": 0.6, "ja": 1.0}),
    ("*=0.6,ja=1.0", 0.6, {"ja": 1.0}, {"*": 0.6, "ja": 1.0}),
    ("ja=1.0,*=0.6", 0.6, {"ja": 1.0}, {"*": 0.6, "ja": 1.0}),
    ("de=0.5", 1.0, {"de": 0.5}, {"*": 1.0, "de": 0.5}),
    (" 0.2 , zh=0 , de=2 ", 0.2, {"de": 2.0, "zh": 0.0}, {"*": 0.2, "de": 2.0, "zh": 0.0}),
])
def test_from_text(text, default, overrides, as_json):
    a = Alpha.from_text(text)
    assert (a.default, dict(a.overrides)) == (default, overrides)
    assert a.to_json() == as_json
    assert json.dumps(a.to_json()) == json.dumps(Alpha.coerce(as_json).to_json())
    assert Alpha.from_text(str(a)) == a == Alpha.coerce(a.to_json())  # round trips
    assert Alpha.from_text(text.split(",")) == a  # the words of --alpha 0.6 ja=1.0


def test_for_lang_and_coerce():
    a = Alpha.coerce({"*": 0.6, "ja": 1.0})
    assert a.for_lang("ja") == 1.0 and a.for_lang("de") == 0.6
    assert Alpha.coerce(0.5) == Alpha(0.5) and Alpha.coerce("0.5") == Alpha(0.5) and Alpha.coerce(a) is a
    assert Alpha() == Alpha(1.0) and Alpha().to_json() == 1.0
    assert isinstance(Alpha.coerce(1).default, float)
    assert hash(Alpha(0.5, {"de": 1})) == hash(Alpha.from_text("0.5,de=1"))
    with pytest.raises(AttributeError):
        a.default = 0.1  # frozen


def test_to_json_sorts_languages_like_meta_json_always_did():
    a = Alpha.from_text("0.5,zh=1,de=0.8")
    assert json.dumps(a.to_json()) == '{"*": 0.5, "de": 0.8, "zh": 1.0}'
    t = ShiftTransform.from_tensors({"de": np.ones(4)}, encoder=ENC, source_lang="en")
    assert t.describe(a)["alpha"] == t.describe({"zh": 1, "*": 0.5, "de": 0.8})["alpha"] == a.to_json()
    assert t.describe(0.6)["alpha"] == 0.6


@pytest.mark.parametrize("text, message", [
    ("", "^empty alpha$"),
    (" , ", "^empty alpha$"),
    ("2.5", r"alpha 2.5 for all languages is outside \[0, 2\]"),
    ("-0.1", r"alpha -0.1 for all languages is outside \[0, 2\]"),
    ("nan", "outside"),
    ("0.5,de=3", r"alpha 3.0 for 'de' is outside \[0, 2\]"),
    ("de=abc", "alpha for 'de' is not a number: 'abc'"),
    ("x", "alpha for '\\*' is not a number: 'x'"),
    ("de=1,de=2", "^alpha 'de=1,de=2': 'de' given twice"),
    ("0.5,*=0.6", "'\\*' given twice"),
    ("=0.5", "is not A or LANG=A"),
])
def test_from_text_errors(text, message):
    with pytest.raises(MlirkitError, match=message):
        Alpha.from_text(text)


@pytest.mark.parametrize("value", [-0.1, 2.01, float("nan"), {"*": 0.5, "de": 3.0}, {"de": -1}, "x", None, [1]])
def test_coerce_refuses_bad_values(value):
    with pytest.raises(MlirkitError, match="alpha"):
        Alpha.coerce(value)


def test_add_alpha_arg():
    p = argparse.ArgumentParser()
    add_alpha_arg(p, default=Alpha())
    assert p.parse_args([]).alpha == Alpha()
    assert p.parse_args(["--alpha", "0.6", "ja=1.0"]).alpha == Alpha(0.6, {"ja": 1.0})
    assert p.parse_args(["--alpha", "0.6,ja=1.0"]).alpha == Alpha(0.6, {"ja": 1.0})
    with pytest.raises(MlirkitError, match="outside"):
        p.parse_args(["--alpha", "3"])
    one = argparse.ArgumentParser()
    add_alpha_arg(one, words=False)
    args, rest = one.parse_known_args(["--alpha", "0.5,de=1", "encoder", "--x"])
    assert args.alpha == Alpha(0.5, {"de": 1.0}) and rest == ["encoder", "--x"]
    assert one.parse_args([]).alpha is None


def test_every_cli_alpha_is_an_alpha():
    """encode, shift apply, experiments' evaluate-langid, pyserini encode, eval plot projection: one type."""
    from experiments.cli import build_parser as experiments_parser
    from mlirkit.encode.cli import build_parser as encode_parser
    from mlirkit.eval.cli import build_parser as eval_parser
    from mlirkit.pyserini.encode.cli import build_parser as pyserini_parser
    from mlirkit.shift.cli import build_parser as shift_parser

    expected = Alpha(0.6, {"ja": 1.0})
    assert encode_parser().parse_args(["--corpus", "c", "--output", "i", "--alpha", "0.6", "ja=1"]).alpha == expected
    sp = shift_parser()
    assert sp.parse_args(["apply", "--index", "i", "--transform", "t", "--output", "o",
                          "--alpha", "0.6,ja=1"]).alpha == expected
    assert sp.parse_args(["apply", "--index", "i", "--transform", "t", "--output", "o"]).alpha is None
    assert experiments_parser().parse_args(["evaluate-langid", "--transform", "t", "--pairs", "p"]).alpha == Alpha()
    assert pyserini_parser().parse_known_args(["--alpha", "0.6,ja=1"])[0].alpha == expected
    assert eval_parser().parse_args(["plot", "projection", "--index", "i", "--output", "o"]).alpha == Alpha()
