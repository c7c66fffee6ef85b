"""The shared encoder options: ``--encoder NAME --encoder-option KEY=VALUE ...``, checked against the encoder
class's own constructor."""
from __future__ import annotations

import inspect

import pytest

from mlirkit.base.cli import ArgumentParser
from mlirkit.base.errors import MlirkitError
from mlirkit.encoders import ENCODER_CLASSES, encoder_class
from mlirkit.encoders.options import (add_encoder_args, class_options, encoder_options,
                                      parse_encoder_options)


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="test")
    add_encoder_args(p)
    return p


def test_the_keys_and_types_are_each_classs_own_constructor():
    for name in ENCODER_CLASSES.names():
        params = list(inspect.signature(encoder_class(name).__init__).parameters.values())[2:]
        assert set(class_options(name)) == {p.name for p in params if p.kind is not p.VAR_KEYWORD}, name
    hf = class_options("hf")
    assert (hf["max_length"], hf["normalize"], hf["doc_prefix"], hf["threads"]) == (int, bool, str, int)
    assert set(class_options("usem")) == {"batch_size", "threads", "denoise"}


def test_values_are_converted_and_a_later_key_wins():
    assert parse_encoder_options(["max_length=64", "normalize=false", "doc_prefix=passage: ", "max-length=32"], "hf") \
        == {"max_length": 32, "normalize": False, "doc_prefix": "passage: "}
    assert parse_encoder_options(["backend=openvino", "precision=bf16", "threads=2"]) == {
        "backend": "openvino", "precision": "bf16", "threads": 2}
    assert parse_encoder_options(None) == {}


@pytest.mark.parametrize("items, cls, needle", [
    (["max_lenght=3"], "hf", "the hf encoder takes no option 'max_lenght' (did you mean: max_length?)"),
    (["max_length=64"], "usem", "the usem encoder takes no option 'max_length'"),
    (["batch_size=many"], "hf", "batch_size=many: expected an integer"),
    (["normalize=perhaps"], "hf", "normalize=perhaps: expected true or false"),
    (["max_length"], None, "'max_length' is not KEY=VALUE"),
])
def test_a_bad_option_is_one_error_naming_it(items, cls, needle):
    with pytest.raises(MlirkitError, match="^--encoder-option") as e:
        parse_encoder_options(items, cls)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_the_group_checks_against_the_class_the_encoder_resolves_to():
    p = _parser()
    args = p.parse_args(["--encoder", "usem", "--encoder-option", "batch_size=8", "--threads", "2"])
    assert encoder_options(args) == {"batch_size": 8, "threads": 2}
    with pytest.raises(MlirkitError, match="the usem encoder takes no option 'max_length'"):
        encoder_options(p.parse_args(["--encoder", "usem", "--encoder-option", "max_length=8"]))
    assert encoder_options(p.parse_args(["--encoder-option", "max_length=8"])) == {"max_length": 8}  # the default: hf


def test_flags_take_their_values_through_encoder_option(capsys):
    p = _parser()
    args = p.parse_args(["--encoder-option", "max_length=64", "--encoder-option", "normalize=false",
                         "--encoder-option", "trust_remote_code=true", "--encoder-option", "doc_prefix=passage: "])
    assert encoder_options(args) == {"max_length": 64, "normalize": False, "trust_remote_code": True,
                                     "doc_prefix": "passage: "}
    assert "--encoder-option KEY=VALUE" in p.format_help()
    with pytest.raises(SystemExit):  # no flag per key
        p.parse_args(["--max-length", "64"])
    assert "unrecognized arguments: --max-length 64" in capsys.readouterr().err
