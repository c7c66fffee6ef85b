"""Missing files, failed downloads (no partial cache), data roots, and the list/export CLI."""
from __future__ import annotations

import contextlib
import io
import logging
import json
import os
from pathlib import Path

import ir_datasets
import pytest

import mlirkit.datasets  # noqa: F401
from mlirkit.datasets import sources, xquad_r
from mlirkit.datasets.cli import main
from mlirkit.datasets.sources import MissingDataError, SourceFile
from mlirkit.base.errors import MlirkitError

from tests.datasets.test_upstream import write_xquad
from tests.helpers import REPO


def home() -> Path:
    return Path(os.environ["IR_DATASETS_HOME"])


def test_missing_benchmark_file_names_file_source_and_place():
    with pytest.raises(MissingDataError) as e:
        list(ir_datasets.load("mlirkit/belebele/en").docs_iter())
    msg = str(e.value)
    assert "missing file belebele/data/acm_Arab.jsonl" in msg
    assert "https://huggingface.co/datasets/facebook/belebele" in msg
    assert str(home() / "mlirkit" / "belebele" / "data" / "acm_Arab.jsonl") in msg
    assert "13 more file(s)" in msg and "mlir-benchmarks/MLIR-en/Belebele_test" in msg  # the release alternative
    assert "\n" not in msg
    assert not (home() / "mlirkit").exists()  # nothing left behind


def test_missing_file_hindi_mlqa_mentions_zip():
    with pytest.raises(MissingDataError, match=r"missing file mlqa/MLQA_V1\.zip.*dl\.fbaipublicfiles\.com/MLQA"):
        list(ir_datasets.load("mlirkit/mlqa/de").queries_iter())


class _FailingStream(io.RawIOBase):
    def __init__(self):
        self.sent = False

    def readable(self):
        return True

    def readinto(self, b):
        if not self.sent:
            self.sent = True
            b[:5] = b"part-"
            return 5
        raise ConnectionError("connection reset")


def failing_downloads(monkeypatch) -> list[str]:
    """Online, with every download failing after a few bytes; the URLs asked for are appended to the list."""
    for var in sources.OFFLINE_ENVS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sources, "unreachable", lambda url: None)  # online: every host name resolves
    from ir_datasets.util.download import RequestsDownload

    calls = []

    @contextlib.contextmanager
    def stream(self):
        calls.append(self.url)
        yield io.BufferedReader(_FailingStream())

    monkeypatch.setattr(RequestsDownload, "stream", stream)
    return calls


def test_failed_download_leaves_nothing(monkeypatch):
    calls = failing_downloads(monkeypatch)
    sf = SourceFile("xquad-r/de.json", "https://example.invalid/de.json", "from https://example.invalid")
    with pytest.raises(MissingDataError, match=r"missing file xquad-r/de\.json \(download failed: ConnectionError"):
        sources.fetch(sf)
    assert calls == ["https://example.invalid/de.json"]
    assert not (home() / "mlirkit").exists()
    # a whole dataset: the first failure stops it, still no partial file anywhere
    with pytest.raises(MissingDataError):
        list(ir_datasets.load("mlirkit/belebele/en").docs_iter())
    assert not any(p.is_file() for p in home().rglob("*"))
    assert len(calls) == 2


def test_a_bundled_data_set_is_read_from_the_bundle_online_or_not(monkeypatch, caplog):
    """A bundled data set (XQuAD-R) is read from the bundled copy (the upstream bytes: MD5 checked) even online:
    no download is tried, no warning, nothing written."""
    calls = failing_downloads(monkeypatch)
    with caplog.at_level("INFO", logger="mlirkit.datasets.sources"):
        assert ir_datasets.load("mlirkit/xquad-r/en").docs_count() == 1920
    assert calls == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in caplog.records] == ["reading 8 file(s) from mlirkit's bundled copy (xquad-r.tar.xz)"]
    assert not any(p.is_file() for p in home().rglob("*"))


def test_no_network_is_one_line_and_no_attempt(monkeypatch, caplog):
    """A machine without network but without an offline variable: the host name does not resolve, so no download
    is tried (no retry lines of ir_datasets'): a bundled data set is read without a warning, a data set that is
    not bundled (Belebele) is one error line saying why."""
    import socket

    calls: list[str] = []
    for var in sources.OFFLINE_ENVS:
        monkeypatch.delenv(var, raising=False)
    for var in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    from ir_datasets.util.download import RequestsDownload

    monkeypatch.setattr(RequestsDownload, "stream", lambda self: calls.append(self.url))

    def no_dns(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with caplog.at_level("INFO"):
        assert ir_datasets.load("mlirkit/xquad-r/en").docs_count() == 1920
        with pytest.raises(MissingDataError) as e:
            list(ir_datasets.load("mlirkit/belebele/en").docs_iter())
    assert calls == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], [r.getMessage() for r in caplog.records]
    assert "download failed: no network: huggingface.co does not resolve" in str(e.value) and "\n" not in str(e.value)
    assert not [r for r in caplog.records if r.name.startswith("ir_datasets")]
    assert sources.unreachable("https://example.org/x") is not None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # a proxy resolves names itself
    assert sources.unreachable("https://example.org/x") is None


def test_successful_download_must_match_the_bundled_md5(monkeypatch):
    """Without the bundle (an install without its resources), XQuAD-R comes from upstream online, and a download
    must be the bundled file (its MD5)."""
    for var in sources.OFFLINE_ENVS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sources, "bundled_available", lambda files: False)
    monkeypatch.setattr(sources, "unreachable", lambda url: None)  # online: every host name resolves
    from ir_datasets.util.download import RequestsDownload

    bundle = sources.read_bundled(xquad_r.files(xquad_r.LANGS))

    @contextlib.contextmanager
    def stream(self):
        yield io.BytesIO(bundle[self.url.split("/master/")[1]].data)

    monkeypatch.setattr(RequestsDownload, "stream", stream)
    ds = ir_datasets.load("mlirkit/xquad-r/de")
    assert ds.docs_count() == 1920
    assert sorted(p.name for p in (home() / "mlirkit" / "xquad-r").iterdir()) == [f"{la}.json" for la in xquad_r.LANGS]
    sf = xquad_r.files(("de",))[0]
    (home() / "mlirkit" / sf.relpath).unlink()

    @contextlib.contextmanager
    def other(self):
        yield io.BytesIO(b'{"data": []}')

    monkeypatch.setattr(RequestsDownload, "stream", other)
    with pytest.raises(MissingDataError, match="download failed"):
        sources.fetch(sf)
    assert not (home() / "mlirkit" / sf.relpath).exists()


def test_successful_download_is_atomic(monkeypatch):
    for var in sources.OFFLINE_ENVS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sources, "unreachable", lambda url: None)  # online: every host name resolves
    from ir_datasets.util.download import RequestsDownload

    @contextlib.contextmanager
    def stream(self):
        yield io.BytesIO(b"hello")

    monkeypatch.setattr(RequestsDownload, "stream", stream)
    p = sources.fetch(SourceFile("x/y.txt", "https://example.invalid/y.txt"))
    assert p == home() / "mlirkit" / "x" / "y.txt" and p.read_bytes() == b"hello"
    assert not Path(f"{p}.tmp").exists()


def test_mlirkit_data_root_takes_precedence(monkeypatch, tmp_path):
    write_xquad(tmp_path / "mine")
    monkeypatch.setenv("MLIRKIT_DATA", str(tmp_path / "mine"))
    assert sources.locate("xquad-r/en.json") == tmp_path / "mine" / "xquad-r" / "en.json"
    assert ir_datasets.load("mlirkit/xquad-r/en").docs_count() == 24
    assert mlirkit.datasets.DATASETS.get("mlirkit/xquad-r/en").available_offline()
    assert not mlirkit.datasets.DATASETS.get("mlirkit/belebele/en").available_offline()


def test_cli_list(capsys):
    assert main(["list", "--json", "--family", "parallel"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["mlirkit/parallel/ddtp", "mlirkit/parallel/gettext",
                                       "mlirkit/parallel/libreoffice-help", "mlirkit/parallel/tatoeba"]
    assert all(r["offline"] for r in rows) and "uk" in rows[1]["doc_langs"]
    assert len(rows[3]["doc_langs"]) == 112 and {"de", "zh", "ar", "yue"} <= set(rows[3]["doc_langs"])
    assert rows[3]["size"] == "88,877 pairs, 112 languages"
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "mlirkit/belebele/multi" in out and "mlirkit/ddtp/uk/test" in out
    for family, langs in (("xquad-r", 8), ("xquad-r-11", 11), ("lareqa-xquad-r", 11), ("xquad-r-partial", 8)):
        assert main(["list", "--json", "--family", family]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert len(rows) == langs + 1 and f"mlirkit/{family}/multi" in {r["id"] for r in rows}
        assert all(r["offline"] for r in rows)  # the bundled copy


def test_cli_export_beir_and_trec(tmp_path, capsys):
    write_xquad(home() / "mlirkit")
    assert main(["export", "mlirkit/xquad-r/de", "--format", "beir", "--output", str(tmp_path / "b")]) == 0
    assert json.loads(capsys.readouterr().out)["docs"] == 24
    corpus = [json.loads(x) for x in (tmp_path / "b" / "corpus.jsonl").read_text().splitlines()]
    assert corpus[0] == {"_id": "ar_0_0", "title": "", "text": "[ar] paragraph 0.0. Second sentence.", "lang": "ar"}
    queries = [json.loads(x) for x in (tmp_path / "b" / "queries.jsonl").read_text().splitlines()]
    assert queries[0] == {"_id": "id1", "text": "[de] question id1?", "lang": "de", "group_id": "id1"}
    qrels = (tmp_path / "b" / "qrels" / "test.tsv").read_text().splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore" and len(qrels) == 1 + 4 * 8 and "id2\tde_0_1\t1" in qrels
    assert main(["export", "mlirkit/xquad-r/de", "--format", "trec", "--output", str(tmp_path / "t")]) == 0
    assert json.loads((tmp_path / "t" / "corpus.jsonl").read_text().splitlines()[1]) == {
        "id": "ar_0_1", "contents": "[ar] paragraph 0.1. Second sentence.", "lang": "ar"}
    assert (tmp_path / "t" / "topics.tsv").read_text().splitlines()[0] == "id1\t[de] question id1?\tde"
    assert "id3 0 zh_0_1 1" in (tmp_path / "t" / "qrels.txt").read_text().splitlines()
    with pytest.raises(MlirkitError, match="already exists"):
        main(["export", "mlirkit/xquad-r/de", "--format", "trec", "--output", str(tmp_path / "t")])


def test_cli_errors(tmp_path):
    with pytest.raises(MlirkitError, match=r"unknown dataset id 'mlirkit/xquad-r/jp'.*did you mean"):
        main(["export", "mlirkit/xquad-r/jp", "--format", "beir", "--output", str(tmp_path / "o")])
    with pytest.raises(MissingDataError):
        main(["export", "mlirkit/belebele/en", "--format", "beir", "--output", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists() and not list(tmp_path.iterdir())  # no partial export


def test_parallel_rows_errors(tmp_path):
    with pytest.raises(MlirkitError, match="not a parallel set"):
        mlirkit.datasets.parallel_rows("mlirkit/ddtp/en")
    with pytest.raises(MlirkitError, match="neither a registered parallel set nor an aligned JSONL file"):
        mlirkit.datasets.parallel_rows("mlirkit/parallel/getext")
    bad = tmp_path / "pairs.jsonl"
    bad.write_text('{"id": "g1", "lang": "en", "text": "a"}\n{"id": "g1", "lang": "de"}\n')
    with pytest.raises(MlirkitError, match=r"pairs\.jsonl:2: missing or empty string field 'text'"):
        list(mlirkit.datasets.parallel_rows(bad))


def test_module_entry_point_exit_codes(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ok = subprocess.run([sys.executable, "-m", "mlirkit.datasets", "list", "--family", "ddtp", "--json"],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and len(ok.stdout.splitlines()) == 15 * 3
    bad = subprocess.run([sys.executable, "-m", "mlirkit.datasets", "export", "mlirkit/belebele/en", "--format", "beir",
                          "--output", str(tmp_path / "o")], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: missing file belebele/data/acm_Arab.jsonl")
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("kind", ["dev-zero", "directory", "broken-link"])
def test_a_local_file_that_is_not_a_regular_file_is_refused_not_replaced_by_the_bundle(tmp_path, monkeypatch, kind):
    """The user's de.json a link to /dev/zero, a directory or a broken link: one line naming it; the bundled
    copy was read in its place without a word."""
    monkeypatch.setenv("MLIRKIT_DATA", str(tmp_path))
    path = tmp_path / "xquad-r" / "de.json"
    path.parent.mkdir()
    if kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero" if kind == "dev-zero" else tmp_path / "gone.json")
    with pytest.raises(MlirkitError, match=r"xquad-r/de\.json: not a regular file") as e:
        list(ir_datasets.load("mlirkit/xquad-r/de").docs_iter())
    assert "\n" not in str(e.value)
