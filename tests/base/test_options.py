"""The one KEY=VALUE parser of the command lines."""
from __future__ import annotations

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.options import parse_key_values, split_key_value


def test_split_key_value_strips_the_key_only():
    assert split_key_value("max_length=64", "--encoder-option") == ("max_length", "64")
    assert split_key_value(" doc_prefix=passage: ", "--encoder-option") == ("doc_prefix", "passage: ")
    assert split_key_value("k=a=b", "--x") == ("k", "a=b")  # the first '=' splits
    assert split_key_value("k=", "--x") == ("k", "")


@pytest.mark.parametrize("item", ["novalue", "=1", " =1", ""])
def test_split_key_value_errors_name_the_option(item):
    with pytest.raises(MlirkitError, match=r"^--index-param .* is not KEY=VALUE$"):
        split_key_value(item, "--index-param")
    with pytest.raises(MlirkitError, match=r"^--point .* is not ALPHA=REPORT"):
        split_key_value(item, "--point", expected="ALPHA=REPORT.json[:RUN]")


def test_parse_key_values():
    assert parse_key_values(["M=8", "ef_search=20"], "--index-param") == {"M": "8", "ef_search": "20"}
    assert parse_key_values(None, "--index-param") == {}
    assert parse_key_values(["a=1", "a=2"], "--x") == {"a": "2"}  # a later key wins
    with pytest.raises(MlirkitError, match="--x: 'a' given twice"):
        parse_key_values(["a=1", "a=2"], "--x", unique=True)
    with pytest.raises(MlirkitError, match="--x 'b' is not KEY=VALUE"):
        parse_key_values(["a=1", "b"], "--x")


def test_every_cli_key_value_option_uses_it():
    """--index-param, --encoder-option, --alpha, eval plot --point/--baseline: the same error wording."""
    from mlirkit.index.types import IndexSpec
    from mlirkit.encoders.options import parse_encoder_options
    from mlirkit.transforms.alpha import Alpha

    with pytest.raises(MlirkitError, match="--index-param 'M' is not KEY=VALUE"):
        IndexSpec.parse("hnsw", ["M"])
    with pytest.raises(MlirkitError, match="--encoder-option '=3' is not KEY=VALUE"):
        parse_encoder_options(["=3"])
    with pytest.raises(MlirkitError, match="--alpha '=0.5' is not A or LANG=A"):
        Alpha.from_text("=0.5", "--alpha")  # as the CLI's --alpha action calls it
    with pytest.raises(MlirkitError, match="^alpha '=0.5' is not A or LANG=A"):
        Alpha.from_text("=0.5")  # from Python: the keyword


def test_positive_int_and_non_negative_int():
    import argparse

    from mlirkit.base.options import non_negative_int, positive_int

    assert positive_int("3") == 3 and non_negative_int("0") == 0
    for bad in ("0", "-1", "x", "1.5", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="expected a positive integer"):
            positive_int(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer >= 0"):
        non_negative_int("-1")


def test_every_count_option_is_positive():
    """No CLI reads a count with a bare ``type=int`` (only seeds may be any integer)."""
    import re

    from tests.helpers import REPO

    for path in sorted((REPO / "mlirkit").rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "type=int" in line and "add_argument" in line:
                assert re.search(r'add_argument\("--seed"', line), f"{path}: {line.strip()}"
