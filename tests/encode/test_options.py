"""``--engine ray`` and its options as one group: the defaults are RayOptions', and a Ray option without
``--engine ray`` is refused (none is silently ignored)."""
from __future__ import annotations

from dataclasses import fields

import pytest

from mlirkit.base.cli import ArgumentParser, run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.encode.options import _RAY_FLAGS, add_engine_args, ray_options
from mlirkit.encode.ray_engine import RayOptions


def _parse(argv):
    p = ArgumentParser(prog="test")
    add_engine_args(p)
    return p.parse_args(argv)


def test_every_ray_option_has_its_flag_and_the_defaults_are_ray_options():
    assert set(_RAY_FLAGS) == {f.name for f in fields(RayOptions)}
    assert ray_options(_parse(["--engine", "ray"])) == RayOptions()
    assert ray_options(_parse(["--engine", "ray", "--block-size", "10", "--num-cpus-per-worker", "2"])) == \
        RayOptions(block_size=10, num_cpus_per_worker=2.0)
    assert ray_options(_parse([])) is None


@pytest.mark.parametrize("flag, value", [("--address", "auto"), ("--num-workers", "2"), ("--num-gpus-per-worker", "1"),
                                         ("--num-cpus-per-worker", "2"), ("--block-size", "10"),
                                         ("--shard-root", "shards")])
def test_each_ray_option_without_engine_ray_is_refused(flag, value):
    with pytest.raises(MlirkitError, match=f"^{flag} needs --engine ray"):
        ray_options(_parse([flag, value]))


def test_the_encode_cli_refuses_before_writing(tmp_path, capsys):
    from mlirkit.encode.cli import main

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "d1", "text": "ferry", "lang": "de"}\n', encoding="utf-8")
    argv = ["--corpus", str(corpus), "--output", str(tmp_path / "idx"), "--block-size", "5", "--num-cpus-per-worker", "2"]
    assert run_cli(main, argv) == 2
    assert capsys.readouterr().err == "error: --num-cpus-per-worker --block-size need --engine ray (the local engine " \
                                      "encodes in this process)\n"
    assert not (tmp_path / "idx").exists()
