"""MLQA-R (mlirkit.datasets.mlqa_r) on files in LAReQA's layout that the test writes: the paragraph pool,
the sentence pool, partial parallelism, ``.json.gz``, and the one line (exit 2) without the files. No test
needs the real MLQA-R files (CC BY-NC 4.0, never bundled)."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

import mlirkit.datasets  # noqa: F401  (registers the ids)
from mlirkit.datasets import mlqa_r
from mlirkit.datasets.sources import MissingDataError
from tests.helpers import REPO

# question id -> the languages that have it (every question is in English, as in MLQA)
QUESTIONS = {"q1": ("en", "de", "ar", "zh"), "q2": ("en", "hi"), "q3": ("en", "es", "vi")}


def _paragraph(lang: str, qids: list[str]) -> dict:
    s1, s2 = f"[{lang}] first sentence.", f" [{lang}] answer {'/'.join(qids)} here."
    context = s1 + s2
    return {"context": context, "sentences": [s1, s2], "sentence_breaks": [[0, len(s1)], [len(s1), len(context)]],
            "qas": [{"id": q, "question": f"[{lang}] question {q}?",
                     "answers": [{"text": "answer", "answer_start": context.index("answer")}]} for q in qids]}


def write_files(root, *, gz: str | None = None) -> None:
    """One article per language; q1 and q2 share the English paragraph, every other paragraph holds one."""
    for lang in mlqa_r.LANGS:
        paragraphs = []
        if lang == "en":
            paragraphs = [_paragraph("en", ["q1", "q2"]), _paragraph("en", ["q3"])]
        else:
            paragraphs = [_paragraph(lang, [q]) for q, langs in QUESTIONS.items() if lang in langs]
        doc = {"version": "1.0", "data": [{"title": f"t-{lang}", "paragraphs": paragraphs}]}
        path = root / "mlqa-r" / f"{lang}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(doc, ensure_ascii=False)
        if lang == gz:
            with gzip.open(str(path) + ".gz", "wt", encoding="utf-8") as f:
                f.write(text)
        else:
            path.write_text(text, encoding="utf-8")


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    write_files(tmp_path, gz="de")
    monkeypatch.setenv("MLIRKIT_DATA", str(tmp_path))
    return tmp_path


def test_paragraph_pool_partly_parallel(data_root):
    import ir_datasets

    ds = ir_datasets.load("mlirkit/mlqa-r/multi")
    docs = list(ds.docs_iter())
    assert Counter(d.lang for d in docs) == {"en": 2, "de": 1, "ar": 1, "zh": 1, "hi": 1, "es": 1, "vi": 1}
    queries = list(ds.queries_iter())
    assert len(queries) == sum(len(v) for v in QUESTIONS.values())
    assert {q.query_id: q.group_id for q in queries}["zh_q1"] == "q1"
    qrels = {}
    for r in ds.qrels_iter():
        qrels.setdefault(r.query_id, set()).add(r.doc_id)
    assert qrels["de_q1"] == {"en_0_0", "de_0_0", "ar_0_0", "zh_0_0"} == qrels["en_q1"]
    assert qrels["hi_q2"] == {"en_0_0", "hi_0_0"}  # q2 shares the English paragraph with q1
    assert qrels["vi_q3"] == {"en_0_1", "es_0_0", "vi_0_0"}
    one = ir_datasets.load("mlirkit/mlqa-r/hi")
    assert [q.query_id for q in one.queries_iter()] == ["q2"] and one.queries_lang() == "hi"
    assert len(list(one.docs_iter())) == len(docs)


def test_sentence_pool(data_root):
    import ir_datasets

    ds = ir_datasets.load("mlirkit/lareqa-mlqa-r/multi")
    assert len(list(ds.docs_iter())) == 2 * 8
    qrels = {}
    for r in ds.qrels_iter():
        qrels.setdefault(r.query_id, set()).add(r.doc_id)
    assert qrels["en_q2"] == {"en_0_0_1", "hi_0_0_1"}  # the answer sentence, in each language that has q2


def test_read_from_ir_datasets_home(tmp_path, monkeypatch):
    """The second data root: ``$IR_DATASETS_HOME/mlirkit/mlqa-r/<lang>.json``, no download tried."""
    import ir_datasets

    home = tmp_path / "home"
    write_files(home / "mlirkit")
    monkeypatch.delenv("MLIRKIT_DATA", raising=False)
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    monkeypatch.setenv("MLIRKIT_OFFLINE", "1")
    assert mlirkit.datasets.DATASETS.get("mlirkit/lareqa-mlqa-r/multi").available_offline()
    assert len(list(ir_datasets.load("mlirkit/mlqa-r/multi").docs_iter())) == 8


def test_downloaded_from_lareqa_when_online_md5_checked(tmp_path, monkeypatch):
    """Online and absent: each file downloaded from LAReQA's repository at the last commit that holds it,
    into ``$IR_DATASETS_HOME/mlirkit/mlqa-r/``; a download whose MD5 is not the file's is refused and leaves
    nothing behind."""
    import contextlib
    import hashlib
    import io

    import ir_datasets
    from ir_datasets.util.download import RequestsDownload

    from mlirkit.datasets import sources

    served = tmp_path / "served"
    write_files(served)
    payload = {lang: (served / "mlqa-r" / f"{lang}.json").read_bytes() for lang in mlqa_r.LANGS}
    home = tmp_path / "home"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    monkeypatch.delenv("MLIRKIT_DATA", raising=False)
    for var in sources.OFFLINE_ENVS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sources, "unreachable", lambda url: None)  # online: every host name resolves
    urls = []

    @contextlib.contextmanager
    def stream(self):
        urls.append(self.url)
        yield io.BytesIO(payload[self.url.rsplit("/", 1)[1][:-len(".json")]])

    monkeypatch.setattr(RequestsDownload, "stream", stream)
    # the real files' MD5s: the test's files are refused
    with pytest.raises(MissingDataError, match="download failed"):
        list(ir_datasets.load("mlirkit/mlqa-r/multi").docs_iter())
    assert urls[0] == ("https://raw.githubusercontent.com/google-research-datasets/lareqa/"
                       "354d67d1cd066854cdfbf5ad0e6105528976141d/mlqa-r/ar.json")
    assert not [p for p in home.rglob("*") if p.is_file()]
    monkeypatch.setattr(mlqa_r, "MD5", {lang: hashlib.md5(b).hexdigest() for lang, b in payload.items()})
    ds = ir_datasets.load("mlirkit/mlqa-r/multi")
    assert len(list(ds.docs_iter())) == 8
    assert sorted(p.name for p in (home / "mlirkit" / "mlqa-r").iterdir()) == [f"{la}.json" for la in mlqa_r.LANGS]


def test_the_counts_of_the_done_when_clause_on_a_file_of_known_counts(data_root):
    """The counting behind docs/datasets.md's figures (documents, queries, relevant per query) on the test's
    files, whose counts are known by construction: 8 paragraphs, 16 sentences, 9 queries, 2-4 relevant."""
    import ir_datasets

    expected_relevant = {f"{lang}_{q}": len(langs) for q, langs in QUESTIONS.items() for lang in langs}
    for dataset_id, docs in (("mlirkit/mlqa-r/multi", 8), ("mlirkit/lareqa-mlqa-r/multi", 16)):
        ds = ir_datasets.load(dataset_id)
        n = Counter(r.query_id for r in ds.qrels_iter() if r.relevance > 0)
        assert ds.docs_count() == docs and len(list(ds.queries_iter())) == 9
        assert n == expected_relevant and set(n.values()) == {2, 3, 4}


def test_offline_without_the_files_one_line(tmp_path, monkeypatch):
    import ir_datasets

    monkeypatch.setenv("MLIRKIT_OFFLINE", "1")
    monkeypatch.delenv("MLIRKIT_DATA", raising=False)
    assert not mlirkit.datasets.DATASETS.get("mlirkit/mlqa-r/multi").available_offline()
    with pytest.raises(MissingDataError) as e:
        list(ir_datasets.load("mlirkit/mlqa-r/en").docs_iter())
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("missing file mlqa-r/ar.json (offline mode): get it from "
                                              "https://raw.githubusercontent.com/google-research-datasets/lareqa/354d67d")
    assert "CC BY-NC 4.0" in msg and "$MLIRKIT_DATA/mlqa-r/ar.json" in msg and "6 more file(s)" in msg


SLOW = pytest.mark.slow


@pytest.mark.parametrize("argv", [
    ["mlirkit.datasets", "export", "mlirkit/lareqa-mlqa-r/multi", "--format", "beir", "--output", "{tmp}/o"],
    ["mlirkit.eval", "--qrels", "mlirkit/mlqa-r/en", "--runs", "{tmp}/run.trec", "--metrics", "ndcg@10"],
    pytest.param(["mlirkit.datasets", "export", "mlirkit/mlqa-r/multi", "docs"], marks=SLOW),
    pytest.param(["mlirkit.datasets", "ir_datasets", "export", "mlirkit/lareqa-mlqa-r/de", "queries"], marks=SLOW),
    pytest.param(["mlirkit.eval", "--qrels", "{tmp}/qrels.txt", "--runs", "{tmp}/run.trec", "--metrics", "tlr@10",
                  "--doc-langs", "mlirkit/mlqa-r/multi", "--topics", "{tmp}/topics.tsv"], marks=SLOW),
    pytest.param(["mlirkit.eval", "--qrels", "{tmp}/qrels.txt", "--runs", "{tmp}/run.trec", "--metrics", "ndcg@10",
                  "--topics", "mlirkit/mlqa-r/multi"], marks=SLOW),
    pytest.param(["mlirkit.encode", "--corpus", "mlirkit/mlqa-r/multi", "--encoder", "multilingual-e5-small-q4",
                  "--output", "{tmp}/o"], marks=SLOW),
    pytest.param(["mlirkit.search", "--index", "{tmp}/idx", "--topics", "mlirkit/mlqa-r/de", "--output", "{tmp}/o"],
                 marks=SLOW),
    pytest.param(["mlirkit.lexical", "index", "--corpus", "mlirkit/lareqa-mlqa-r/multi", "--output", "{tmp}/o"],
                 marks=SLOW),
    pytest.param(["mlirkit.lexical", "search", "--index", "{tmp}/idx", "--topics", "mlirkit/mlqa-r/multi", "--output",
                  "{tmp}/o"], marks=SLOW),
    pytest.param(["mlirkit.fuse", "--runs", "{tmp}/run.trec", "{tmp}/run2.trec", "--tune-runs", "{tmp}/run.trec",
                  "{tmp}/run2.trec", "--qrels", "mlirkit/mlqa-r/multi", "--method", "wsum", "--output", "{tmp}/o"],
                 marks=SLOW),
])
def test_every_cli_naming_the_id_exits_2(argv, tmp_path):
    """Offline without the files, every CLI that reads an MLQA-R id (as corpus, topics, qrels or document
    languages) stops with the one line, exit 2, before writing anything (``mlirkit.benchmark --parts mlqa-r``:
    tests/benchmark/test_xquad.py)."""
    for name in ("run.trec", "run2.trec"):
        (tmp_path / name).write_text("q 0 d 1 1.0 r\n")
    (tmp_path / "qrels.txt").write_text("q 0 d 1\n")
    (tmp_path / "topics.tsv").write_text("q\tquestion\ten\n")
    env = {k: v for k, v in os.environ.items() if k != "MLIRKIT_DATA"}
    env.update(PYTHONPATH=str(REPO), MLIRKIT_OFFLINE="1", IR_DATASETS_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", *[a.format(tmp=tmp_path) for a in argv]], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and proc.stderr.startswith("error: missing file mlqa-r/ar.json (offline mode)")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


# ---------------------------------------------------------------- files the construction cannot represent faithfully
def _duplicate_id(doc):
    doc["data"][0]["paragraphs"][1]["qas"][0]["id"] = "q1"  # q3's paragraph now claims q1 as well


def _set_qa(**fields):
    return lambda doc: doc["data"][0]["paragraphs"][0]["qas"][0].update(fields)


@pytest.mark.parametrize("change, raw, message", [
    (_duplicate_id, None, "qas[0].id: 'q1' is also the id of data[0].paragraphs[0].qas"),
    (_set_qa(answers={"text": "answer", "answer_start": 3}), None, "'answers' (a list)"),
    (_set_qa(answers=[{"answer_start": True}]), None, "integer 'answer_start'"),
    (_set_qa(answers=[{"answer_start": 10**6}]), None, "answer_start: 1000000 is outside the context"),
    (_set_qa(answers=[{"answer_start": -1}]), None, "answer_start: -1 is outside the context"),
    (_set_qa(question="  "), None, "an empty 'id' or 'question'"),
    (lambda doc: doc["data"][0]["paragraphs"][0].update(sentence_breaks=[[0, 5], [5, 10**9]]), None,
     "a break outside the context"),
    (None, '{"data": [{"paragraphs": [{"context": "x", "qas": [{"id": "q", "question": "q?", "answers": '
           '[{"answer_start": ' + "9" * 5000 + '}]}]}]}]}', "invalid JSON: Exceeds the limit"),
    (None, "[" * 100_000 + "]" * 100_000, "invalid JSON: nested too deeply"),
])
def test_a_hostile_source_file_is_one_line_naming_file_and_field(data_root, change, raw, message):
    from mlirkit.base.errors import MlirkitError

    path = data_root / "mlqa-r" / "en.json"
    if change is not None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        change(doc)
        raw = json.dumps(doc)
    path.write_text(raw, encoding="utf-8")
    with pytest.raises(MlirkitError) as e:
        mlqa_r.load(None)
    text = str(e.value)
    assert "\n" not in text and str(path) in text and message in text, text
