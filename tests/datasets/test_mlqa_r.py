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


@pytest.mark.parametrize("argv", [
    ["mlirkit.datasets", "export", "mlirkit/lareqa-mlqa-r/multi", "--format", "beir", "--output", "{tmp}/o"],
    ["mlirkit.eval", "--qrels", "mlirkit/mlqa-r/en", "--runs", "{tmp}/run.trec", "--metrics", "ndcg@10"],
])
def test_every_cli_naming_the_id_exits_2(argv, tmp_path):
    (tmp_path / "run.trec").write_text("q 0 d 1 1.0 r\n")
    env = {k: v for k, v in os.environ.items() if k != "MLIRKIT_DATA"}
    env.update(PYTHONPATH=str(REPO), MLIRKIT_OFFLINE="1", IR_DATASETS_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", *[a.format(tmp=tmp_path) for a in argv]], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and proc.stderr.startswith("error: missing file mlqa-r/ar.json (offline mode)")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
