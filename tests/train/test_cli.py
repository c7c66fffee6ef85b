"""``python -m mlirkit.train``: a config file, ``--set FIELD=VALUE`` for any field, and a few generated flags."""
from __future__ import annotations

import dataclasses
import json

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.train.cli import OVERRIDES, build_parser, field_value, main, parse_sets, resolve_config
from mlirkit.train.config import TrainConfig

BASE = ["--backbone", "b", "--output", "o", "--set", "triples=t.jsonl", "--set", "n_parallel=0", "--set",
        "n_monolingual=0"]


def _resolve(argv):
    return resolve_config(build_parser().parse_args(argv))


def test_few_own_options_and_every_field_reachable():
    p = build_parser()
    shown = [a for a in p._actions if a.option_strings and a.dest != "help"]
    assert len(shown) <= 12, [a.option_strings for a in shown]
    assert set(OVERRIDES) <= {f.name for f in dataclasses.fields(TrainConfig)}
    defaults = TrainConfig().to_dict()
    for name, value in defaults.items():  # every field through --set, read back as the dataclass's type
        text = ("none" if value is None else str(value).lower() if isinstance(value, bool)
                else ",".join(value) if isinstance(value, list) else str(value))
        assert parse_sets([f"{name}={text}"]) == {name: value}, name


@pytest.mark.parametrize("name, text, value", [
    ("lr", "1e-4", 1e-4), ("max_steps", "7", 7), ("use_ldcl", "false", False), ("use_orth", "YES", True),
    ("parallel", "a.jsonl,b.jsonl", ["a.jsonl", "b.jsonl"]), ("parallel_langs", "de, FR", ["de", "fr"]),
    ("head_dim", "none", None), ("head_dim", "64", 64), ("query_prefix", "query: ", "query: ")])
def test_field_values_read_as_the_fields_type(name, text, value):
    assert field_value(name, text) == value


@pytest.mark.parametrize("items, needle", [
    (["lamda_t=1"], "--set lamda_t: TrainConfig has no field 'lamda_t' (did you mean: lambda_t"),
    (["max_steps=ten"], "--set max_steps=ten: expected an integer"),
    (["use_ldcl=maybe"], "--set use_ldcl=maybe: expected true or false"),
    (["max_steps"], "--set 'max_steps' is not FIELD=VALUE")])
def test_a_bad_set_is_one_error(items, needle):
    with pytest.raises(MlirkitError) as e:
        parse_sets(items)
    assert needle in str(e.value)


def test_file_then_ablation_then_set_then_flags(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"backbone": "file", "output_dir": "o", "triples": "t.jsonl", "n_parallel": 0,
                                "n_monolingual": 0, "lr": 0.5, "max_steps": 3}))
    cfg = _resolve([str(path), "--ablation", "no_ldcl", "--set", "lr=0.25", "--set", "max_steps=4", "--max-steps", "5"])
    assert (cfg.backbone, cfg.lr, cfg.max_steps, cfg.use_ldcl) == ("file", 0.25, 5, False)


def test_a_yaml_config_is_the_json_config(tmp_path):
    """The config file is JSON or YAML, the dataclass's fields either way (as HfArgumentParser reads them)."""
    fields = {"backbone": "file", "output_dir": "o", "triples": "t.jsonl", "n_parallel": 0, "n_monolingual": 0,
              "lr": 0.5, "use_orth": False, "parallel_langs": ["de", "fr"]}
    (tmp_path / "c.json").write_text(json.dumps(fields))
    (tmp_path / "c.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items()))
    from_json, from_yaml = _resolve([str(tmp_path / "c.json")]), _resolve([str(tmp_path / "c.yaml")])
    assert from_json == from_yaml and (from_yaml.lr, from_yaml.use_orth, from_yaml.parallel_langs) == (0.5, False, ["de", "fr"])


@pytest.mark.parametrize("flag", [["--lr", "3e-5"], ["--no-use-orth"], ["--output-dir", "o"], ["--config", "c.json"]])
def test_a_field_is_set_with_set_not_a_flag_of_its_own(flag, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args([*BASE, *flag])
    assert e.value.code == 2 and f"unrecognized arguments: {flag[0]}" in capsys.readouterr().err


def test_print_config_shows_every_field(capsys):
    assert main([*BASE, "--print-config"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {f.name for f in dataclasses.fields(TrainConfig)}
