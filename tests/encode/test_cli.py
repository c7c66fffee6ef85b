"""``python -m mlirkit.encode`` / ``mlirkit.search`` end to end with a tiny HF model, and every bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.encode.cli import main as encode_main
from mlirkit.index import DenseIndex
from mlirkit.io.trec import read_run
from mlirkit.search.cli import main as search_main

DOCS = [
    {"_id": "d1", "title": "", "text": "The ferry leaves the harbour twice a day.", "lang": "en"},
    {"_id": "d2", "title": "", "text": "Die Fähre verlässt den Hafen zweimal am Tag.", "lang": "de"},
    {"_id": "d3", "title": "", "text": "Le traversier quitte le port deux fois par jour.", "lang": "fr"},
    {"_id": "d4", "title": "", "text": "Программа копирует файлы в каталог.", "lang": "ru"},
    {"_id": "d5", "title": "", "text": "ファイルをディレクトリにコピーします。", "lang": "ja"},
]


def write_corpus(path, rows=DOCS):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path / "corpus.jsonl")


def run(main, argv, capsys):
    code = run_cli(main, argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_encode_then_search(tmp_path, corpus, tiny_model_dir, capsys):
    index = tmp_path / "index"
    code, out, err = run(encode_main, ["--corpus", str(corpus), "--output", str(index), "--encoder", str(tiny_model_dir),
                                       "--encoder-option", "max_length=32", "--encoder-option", "batch_size=2", "--save-embeddings", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out)["documents"] == 5
    assert DenseIndex(index).langs == ["en", "de", "fr", "ru", "ja"]
    topics = tmp_path / "q.tsv"
    topics.write_text("q1\tferry harbour\ten\nq2\tcopy files\ten\n", encoding="utf-8")
    runfile = tmp_path / "run.trec"
    # encoder taken from the index's meta.json
    code, out, err = run(search_main, ["--index", str(index), "--topics", str(topics), "--output", str(runfile),
                                       "--hits", "3", "--quiet"], capsys)
    assert code == 0, err
    lines = runfile.read_text().splitlines()
    assert len(lines) == 6 and lines[0].split()[3] == "1" and lines[0].split()[5] == "run"  # the file's stem
    assert set(read_run(runfile)) == {"q1", "q2"}
    # two runs from a search are two rows in ranx.compare: the tag names the system (the output file)
    ranx = pytest.importorskip("ranx")
    other = tmp_path / "other.trec"
    code, _, err = run(search_main, ["--index", str(index), "--topics", str(topics), "--output", str(other),
                                     "--hits", "3", "--quiet"], capsys)
    assert code == 0, err
    runs = [ranx.Run.from_file(str(runfile), kind="trec"), ranx.Run.from_file(str(other), kind="trec")]
    assert [r.name for r in runs] == ["run", "other"]
    report = ranx.compare(ranx.Qrels({"q1": {"d1": 1}, "q2": {"d4": 1}}), runs, metrics=["ndcg@3"])
    assert report.model_names == ["run", "other"] and len(report.to_dataframe()) == 2
    code, _, err = run(search_main, ["--index", str(index), "--topics", str(topics), "--output", str(tmp_path / "t"),
                                     "--run-tag", "my system", "--quiet"], capsys)
    assert code == 2 and "invalid run tag" in err and not (tmp_path / "t").exists()


def test_max_docs_limits_the_corpus(tmp_path, corpus, tiny_model_dir, capsys):
    index = tmp_path / "index"
    code, out, err = run(encode_main, ["--corpus", str(corpus), "--output", str(index), "--encoder", str(tiny_model_dir),
                                       "--encoder-option", "max_length=16", "--max-docs", "2", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out)["documents"] == 2 and DenseIndex(index).docids == ["d1", "d2"]
    assert DenseIndex(index).meta["max_docs"] == 2
    with pytest.raises(SystemExit) as e:  # a usage error: argparse's positive_int type refuses it
        run(encode_main, ["--corpus", str(corpus), "--output", str(tmp_path / "i0"), "--encoder",
                          str(tiny_model_dir), "--max-docs", "0"], capsys)
    assert e.value.code == 2 and "--max-docs" in capsys.readouterr().err
    assert not (tmp_path / "i0").exists()


def test_sharded_encoding_partitions_corpus(tmp_path, corpus, tiny_model_dir, capsys):
    ids = []
    for shard in range(2):
        out = tmp_path / f"shard{shard}"
        code, _, err = run(encode_main, ["--corpus", str(corpus), "--output", str(out), "--encoder", str(tiny_model_dir),
                                         "--shard-id", str(shard), "--num-shards", "2", "--quiet"], capsys)
        assert code == 0, err
        ids.append(DenseIndex(out).docids)
    assert ids == [["d1", "d3", "d5"], ["d2", "d4"]]


@pytest.mark.parametrize("rows, extra, message", [
    ('{"_id": "d1", "text": "ok", "lang": "en"}\n{"_id": "d2", "text": "broken\n', [], "corpus.jsonl:2: invalid JSON"),
    ('{"_id": "d1", "lang": "en"}\n', [], "corpus.jsonl:1: missing field 'text'"),
    ('{"text": "x", "lang": "en"}\n', [], "corpus.jsonl:1: missing field 'id'"),
    ('{"_id": "d1", "text": "a", "lang": "en"}\n{"_id": "d1", "text": "b", "lang": "en"}\n', [],
     "corpus.jsonl:2: duplicate document id 'd1'"),
    ('{"_id": "d1", "text": "", "lang": "en"}\n', [], "corpus.jsonl:1: empty text"),
    ('{"_id": "d1", "text": "a"}\n', [], 'corpus.jsonl:1: missing field "lang"'),
    ('{"_id": "d1", "text": "a", "lang": "en"}\n', ["--encoder", "multilingual-e5-smal-q4"], "did you mean"),
    ('{"_id": "d1", "text": "a", "lang": "en"}\n', ["--alpha", "0.5"], "--alpha and --langid need --transform"),
])
def test_bad_input_clear_error_nothing_left(tmp_path, tiny_model_dir, capsys, rows, extra, message):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(rows, encoding="utf-8")
    argv = ["--corpus", str(corpus), "--output", str(tmp_path / "index"), "--encoder", str(tiny_model_dir), "--quiet", *extra]
    code, out, err = run(encode_main, argv, capsys)
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert message in last and last.startswith("error: ") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]


def test_invalid_utf8(tmp_path, tiny_model_dir, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b'{"_id": "d1", "text": "caf\xe9", "lang": "fr"}\n')
    code, _, err = run(encode_main, ["--corpus", str(corpus), "--output", str(tmp_path / "i"), "--encoder",
                                     str(tiny_model_dir), "--quiet"], capsys)
    assert code == 2 and "corpus.jsonl:1: invalid UTF-8" in err and not (tmp_path / "i").exists()


def test_existing_output_needs_overwrite(tmp_path, corpus, tiny_model_dir, capsys):
    index = tmp_path / "index"
    index.mkdir()
    (index / "keep").write_text("x")
    argv = ["--corpus", str(corpus), "--output", str(index), "--encoder", str(tiny_model_dir), "--quiet"]
    code, _, err = run(encode_main, argv, capsys)
    assert code == 2 and "already exists (use --overwrite" in err and (index / "keep").exists()
    # --overwrite replaces only what mlirkit made: this directory is not an index
    code, _, err = run(encode_main, [*argv, "--overwrite"], capsys)
    assert code == 2 and "is not an index directory written by mlirkit" in err and (index / "keep").read_text() == "x"
    (index / "keep").unlink()
    assert run(encode_main, [*argv, "--overwrite"], capsys)[0] == 0  # an empty directory is anyone's
    code, _, err = run(encode_main, [*argv, "--overwrite"], capsys)
    assert code == 0 and len(DenseIndex(index).docids) == 5


def test_search_refuses_other_encoder(tmp_path, corpus, tiny_model_dir, capsys):
    index = tmp_path / "index"
    assert run(encode_main, ["--corpus", str(corpus), "--output", str(index), "--encoder", str(tiny_model_dir),
                             "--quiet"], capsys)[0] == 0
    topics = tmp_path / "q.tsv"
    topics.write_text("q1\tferry\ten\n", encoding="utf-8")
    argv = ["--index", str(index), "--topics", str(topics), "--output", str(tmp_path / "r.trec"), "--quiet"]
    code, _, err = run(search_main, [*argv, "--encoder", str(tiny_model_dir), "--encoder-option", "pooling=cls"], capsys)
    assert code == 2 and "made with another encoder" in err and "pooling" in err
    assert not (tmp_path / "r.trec").exists()
    code, _, err = run(search_main, [*argv, "--encoder", "usem"], capsys)
    assert code == 2 and "dimension" in err


def test_module_entry_point_no_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mlirkit.encode", "--corpus", str(tmp_path / "missing.jsonl"),
                           "--output", str(tmp_path / "i")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: ") and "Traceback" not in proc.stderr


def test_tiny_index_matches_numpy(tmp_path, corpus, tiny_encoder):
    """The index holds normalize(f(d)) for the same encoder settings."""
    from mlirkit.encode import Indexer
    from mlirkit.io.corpus import read_corpus
    from mlirkit.base.vectors import l2_normalize

    docs = list(read_corpus(corpus))
    Indexer(tmp_path / "i", tiny_encoder, show_progress=False).index(docs)
    expected = l2_normalize(tiny_encoder.encode_docs([d.text for d in docs], [d.lang for d in docs]))
    np.testing.assert_allclose(DenseIndex(tmp_path / "i").indexed_vectors(), expected, atol=1e-6)


def test_outputs_follow_umask(tmp_path, corpus, tiny_model_dir, capsys):
    import os
    import stat

    old = os.umask(0o022)
    try:
        assert run(encode_main, ["--corpus", str(corpus), "--output", str(tmp_path / "i"), "--encoder",
                                 str(tiny_model_dir), "--quiet"], capsys)[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "i").stat().st_mode) == 0o755


@pytest.mark.slow
def test_sigterm_leaves_nothing(tmp_path, tiny_model_dir):
    """A terminated encode removes its temporary directory: nothing that looks finished, nothing stray."""
    import signal
    import time

    rows = [{"_id": f"d{i}", "text": f"document number {i} " * 20, "lang": "en"} for i in range(20000)]
    big = write_corpus(tmp_path / "big.jsonl", rows)
    proc = subprocess.Popen([sys.executable, "-m", "mlirkit.encode", "--corpus", str(big), "--output",
                             str(tmp_path / "idx"), "--encoder", str(tiny_model_dir), "--chunk-size", "8", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not list(tmp_path.glob(".idx.tmp-*")) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl"]
