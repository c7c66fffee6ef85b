"""The trust contracts through the Pyserini wrappers (they start the JVM): a model's own code never runs
because a file names it, the run file's provenance sidecar, one line for a JVM that cannot start and for an
illegal trec_eval measure."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.pyserini.testing import write_toy_collection
from tests.helpers import REPO, crafted_model

pytestmark = [pytest.mark.slow, pytest.mark.jvm]


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return write_toy_collection(tmp_path_factory.mktemp("toy"))


@pytest.fixture(scope="module")
def index(toy, tiny_model_dir, tmp_path_factory):
    from mlirkit.encode.cli import main

    out = tmp_path_factory.mktemp("trust") / "index"
    assert run_cli(main, ["--corpus", str(toy.corpus), "--output", str(out), "--encoder", str(tiny_model_dir),
                          "--encoder-class", "hf", "--encoder-option", "max_length=64", "--quiet"]) == 0
    return out


def _search_argv(toy, index, run, encoder, encoder_class="mlirkit-hf"):
    return ["--encoder-option", "max_length=64", "--index", str(index), "--topics", str(toy.topics), "--output",
            str(run), "--encoder-class", encoder_class, "--encoder", str(encoder), "--hits", "5"]


def test_search_wrapper_writes_provenance(toy, index, tiny_model_dir, tmp_path):
    import ranx

    from mlirkit.io.provenance import read_sidecar
    from mlirkit.pyserini.search.cli import main

    run = tmp_path / "run.trec"
    assert run_cli(main, _search_argv(toy, index, run, tiny_model_dir)) == 0
    side = read_sidecar(run)
    assert side["run_sha256"] == hashlib.sha256(run.read_bytes()).hexdigest()
    assert side["producer"] == "pyserini.search.faiss"
    assert side["index"]["meta_sha256"] == hashlib.sha256((index / "meta.json").read_bytes()).hexdigest()
    index_fp = json.loads((index / "meta.json").read_text("utf-8"))["encoder"]
    assert side["encoder"]["fingerprint"] == index_fp
    assert side["command"][:3] == ["python", "-m", "mlirkit.pyserini.search"]
    assert len(ranx.Run.from_file(str(run), kind="trec").to_dict()) == 6


@pytest.mark.parametrize("encoder_class", ["mlirkit-hf", "auto"])
def test_search_wrapper_runs_no_model_code(toy, index, tiny_model_dir, tmp_path, capsys, encoder_class):
    """mlirkit's classes refuse the model in one line; with Pyserini's own class (auto) transformers, never allowed to
    ask on the terminal, loads its built-in class for the model type (or refuses): either way no code of the model
    runs."""
    from mlirkit.pyserini.search.cli import main

    model = crafted_model(tiny_model_dir, tmp_path)
    rc = run_cli(main, _search_argv(toy, index, tmp_path / "run.trec", model, encoder_class))
    err = capsys.readouterr().err
    assert "Traceback" not in err and not (tmp_path / "marker").exists(), err
    if encoder_class == "mlirkit-hf":
        assert rc == 2 and "ships its own code" in err and "--encoder-option trust_remote_code=true" in err
        assert not (tmp_path / "run.trec").exists()


def test_encode_wrapper_runs_no_model_code(toy, tiny_model_dir, tmp_path, capsys):
    from mlirkit.pyserini.encode.cli import main

    model = crafted_model(tiny_model_dir, tmp_path)
    rc = run_cli(main, ["input", "--corpus", str(toy.corpus), "--fields", "text", "lang", "output", "--embeddings",
                        str(tmp_path / "ix"), "--to-faiss", "encoder", "--encoder-class", "mlirkit-hf", "--encoder",
                        str(model), "--fields", "text", "lang"])
    err = capsys.readouterr().err
    assert rc == 2 and "ships its own code" in err and not (tmp_path / "marker").exists(), err
    assert not (tmp_path / "ix").exists()


def test_illegal_trec_eval_measure_is_one_line(toy, tmp_path, capsys):
    from mlirkit.pyserini.trec_eval.cli import main

    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1.0 r\n", "utf-8")
    assert run_cli(main, ["-m", "bogus.10", str(toy.qrels), str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: trec_eval: illegal measure 'bogus'"), err


def test_a_jvm_that_cannot_start_is_one_line(toy, tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1.0 r\n", "utf-8")
    env = {**os.environ, "JAVA_TOOL_OPTIONS": "-Xbogus",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "mlirkit.pyserini.trec_eval", "-m", "ndcg_cut.10", str(toy.qrels),
                           str(run)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "JAVA_TOOL_OPTIONS='-Xbogus'" in done.stderr and "Unrecognized option" in done.stderr
