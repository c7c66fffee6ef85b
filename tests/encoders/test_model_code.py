"""A model's own code runs only when the user asks for it (mlirkit.encoders.model_code): never because an
index's meta.json, a model directory or another file says so. A crafted index whose meta.json names a model
directory with custom code (a ``modeling_*.py`` that writes a marker file) and ``trust_remote_code: true``
cannot run that code through search, encode or shift; the refusal is one line saying how to allow it, and the
flag it names does allow it."""
from __future__ import annotations

import json

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.encoders.model_code import model_code_files, options_from_file
from tests.helpers import crafted_model


@pytest.fixture(scope="module")
def crafted(tmp_path_factory, tiny_model_dir):
    """A plain index whose meta.json was edited to name the crafted model with trust_remote_code."""
    from mlirkit.encode.cli import main as encode_main

    root = tmp_path_factory.mktemp("model_code")
    model = crafted_model(tiny_model_dir, root)
    (root / "c.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": f"ferry {i}", "lang": "en"}) + "\n"
                                          for i in range(4)), "utf-8")
    assert run_cli(encode_main, ["--corpus", str(root / "c.jsonl"), "--output", str(root / "index"), "--encoder",
                                 str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=32",
                                 "--save-embeddings", "--quiet"]) == 0
    meta = json.loads((root / "index" / "meta.json").read_text("utf-8"))
    meta["encoder_name"] = str(model)
    meta["encoder_options"] = {"encoder_class": "hf", "trust_remote_code": True, "max_length": 32}
    (root / "index" / "meta.json").write_text(json.dumps(meta), "utf-8")
    (root / "t.tsv").write_text("q1\tferry\ten\n", "utf-8")
    return root, model


def test_options_from_a_file_never_carry_trust_remote_code():
    assert options_from_file({"max_length": 8, "trust_remote_code": False}, "m.json") == {"max_length": 8}
    assert options_from_file({"trust_remote_code": True}, "m.json", {"trust_remote_code": True}) == {}
    with pytest.raises(MlirkitError, match=r"^m\.json: asks for encoder option trust_remote_code=true.*"
                                           r"pass --encoder-option trust_remote_code=true \(Python: trust_remote_code=True\)"):
        options_from_file({"trust_remote_code": True}, "m.json")


def test_model_code_files(tmp_path, tiny_model_dir):
    assert model_code_files(tiny_model_dir) == []
    assert model_code_files(crafted_model(tiny_model_dir, tmp_path)) == [
        "config.json auto_map modeling_evil.EvilConfig", "config.json auto_map modeling_evil.EvilModel"]
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "modules.json").write_text(json.dumps([
        {"type": "sentence_transformers.models.Transformer"}, {"type": "my_pkg.Pooling"}]), "utf-8")
    assert model_code_files(tmp_path / "st") == ["modules.json type my_pkg.Pooling"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_search_of_a_crafted_index_runs_no_code(crafted, capsys):
    from mlirkit.search.cli import main
    from mlirkit.search.searcher import Searcher

    root, _ = crafted
    cmd = ["--index", str(root / "index"), "--topics", str(root / "t.tsv"), "--output", str(root / "run.trec"), "--quiet"]
    assert run_cli(main, cmd) == 2
    err = _one_line(capsys)
    assert "meta.json: asks for encoder option trust_remote_code=true" in err and "--encoder-option trust_remote_code=true" in err
    with pytest.raises(MlirkitError, match="trust_remote_code=True"):
        Searcher(root / "index")
    assert not (root / "marker").exists() and not (root / "run.trec").exists()
    # the query-time shift reads the same meta.json
    assert run_cli(main, [*cmd, "--query-shift", "cosine", "--default-lang", "en"]) == 2
    assert not (root / "marker").exists()


def test_encode_and_shift_with_a_model_that_ships_code_run_none_of_it(crafted, tmp_path, capsys):
    import torch

    from mlirkit.encode.cli import main as encode_main
    from mlirkit.shift.cli import main as shift_main

    root, model = crafted
    assert run_cli(encode_main, ["--corpus", str(root / "c.jsonl"), "--output", str(tmp_path / "ix"),
                                 "--encoder", str(model), "--encoder-class", "hf", "--quiet"]) == 2
    err = _one_line(capsys)
    assert "the model ships its own code (config.json auto_map modeling_evil.EvilConfig" in err
    assert "pass --encoder-option trust_remote_code=true" in err and not (tmp_path / "ix").exists()
    torch.save({"source_lang": "en", "v_de": torch.ones(32)}, tmp_path / "v.pt")
    for argv in (["fit", "--pairs", str(tmp_path / "v.pt"), "--encoder", str(model), "--encoder-class", "hf",
                  "--output", str(tmp_path / "t.safetensors")],
                 ["fit", "--pairs", "mlirkit/parallel/gettext", "--max-pairs", "3", "--source-lang", "en",
                  "--encoder", str(model), "--output", str(tmp_path / "u.safetensors")]):
        assert run_cli(shift_main, argv) == 2
        assert "ships its own code" in _one_line(capsys)
    # shift operations on the crafted index itself load no encoder at all
    assert run_cli(shift_main, ["fit", "--from-index", str(root / "index"), "--source-lang", "en",
                                "--output", str(tmp_path / "c.safetensors")]) in (0, 2)
    capsys.readouterr()
    assert not (root / "marker").exists()


def test_the_flag_named_in_the_refusal_allows_the_code(crafted, tmp_path, capsys):
    """An index built with --encoder-option trust_remote_code=true records it; searching it needs the flag again, and with it
    the model's code runs (the marker) and the search succeeds."""
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.search.cli import main as search_main

    root, model = crafted
    assert run_cli(encode_main, ["--corpus", str(root / "c.jsonl"), "--output", str(tmp_path / "ix"), "--encoder",
                                 str(model), "--encoder-class", "hf", "--encoder-option", "max_length=32", "--encoder-option", "trust_remote_code=true",
                                 "--quiet"]) == 0
    assert (root / "marker").exists()
    (root / "marker").unlink()
    cmd = ["--index", str(tmp_path / "ix"), "--topics", str(root / "t.tsv"), "--output", str(tmp_path / "r.trec"),
           "--quiet"]
    capsys.readouterr()
    assert run_cli(search_main, cmd) == 2 and "--encoder-option trust_remote_code=true" in _one_line(capsys)
    assert not (root / "marker").exists()
    assert run_cli(search_main, [*cmd, "--encoder-option", "trust_remote_code=true"]) == 0
    assert (tmp_path / "r.trec").exists()
