"""Attacks on the data files a benchmark collection is built from (XQuAD-R, LAReQA's sentence pool, MLQA-R) and
on ``datasets export``: each run as ``python -m mlirkit.datasets export ...`` in a child process whose
``MLIRKIT_DATA`` holds the files (XQuAD-R: the bundled files with one changed; MLQA-R: small files in LAReQA's
layout). Expected: one line naming the file and the field, exit 2, no export written."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from experiments.hostile.harness import Case, Outcome, module_cli

__all__ = ["CASES"]


def _xquad_files(root: Path) -> dict[str, dict]:
    """The bundled XQuAD-R files (all 11 languages) written under ``root/xquad-r``; their parsed JSON."""
    from mlirkit.datasets import xquad_r
    from mlirkit.datasets.sources import read_bundled

    out = {}
    for name, f in read_bundled(xquad_r.files(xquad_r.ALL_LANGS)).items():
        path = root / "xquad-r" / Path(name).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.data)
        out[path.stem] = json.loads(f.data)
    return out


def _export(ws, dataset, *needles, env=None):
    out = ws["tmp"] / "export"
    outcome = module_cli("mlirkit.datasets", ["export", dataset, "--format", "trec", "--output", str(out)], *needles,
                         env={"MLIRKIT_DATA": str(ws["tmp"] / "data"), "IR_DATASETS_HOME": str(ws["tmp"] / "home"),
                              **(env or {})})
    if out.exists():
        return Outcome(False, outcome.observed + "; an export was written")
    return outcome


def xquad_case(name, change, *needles, dataset="mlirkit/xquad-r/de", note=""):
    """``change(doc)`` edits the German file's JSON (or returns the bytes to write)."""
    def attack(ws):
        root = ws["tmp"] / "data"
        docs = _xquad_files(root)
        result = change(docs["de"])
        path = root / "xquad-r" / "de.json"
        if isinstance(result, bytes):
            path.write_bytes(result)
        elif isinstance(result, str):
            path.write_text(result, encoding="utf-8")
        else:
            path.write_text(json.dumps(docs["de"], ensure_ascii=False), encoding="utf-8")
        return _export(ws, dataset, "de.json", *needles)
    return Case("XQuAD-R files", name, attack, "exit 2, one line naming de.json" + (
        f" and {', '.join(needles)}" if needles else "") + "; no export", note)


def _qa(doc, a=0, p=0, q=0):
    return doc["data"][a]["paragraphs"][p]["qas"][q]


def _duplicate_id(doc):
    _qa(doc, 0, 1, 0)["id"] = _qa(doc, 0, 0, 0)["id"]


def _answers_object(doc):
    _qa(doc)["answers"] = {"text": "x", "answer_start": 0}


def _huge_int(doc):
    text = json.dumps(doc, ensure_ascii=False)
    start = _qa(doc)["answers"][0]["answer_start"]
    return text.replace(f'"answer_start": {start}', '"answer_start": ' + "9" * 5000, 1)


def _unsorted_breaks(doc):
    par = doc["data"][0]["paragraphs"][0]
    par["sentence_breaks"] = par["sentence_breaks"][::-1]
    par["sentences"] = par["sentences"][::-1]


def _overlapping_breaks(doc):
    par = doc["data"][0]["paragraphs"][0]
    a, b = par["sentence_breaks"][0], par["sentence_breaks"][1]
    par["sentence_breaks"][1] = [a[0], b[1]]  # the second sentence starts where the first does


def _id_with_space(doc):
    old = _qa(doc)["id"]
    _qa(doc)["id"] = "q " + old


def _blank_context(doc):
    par = doc["data"][0]["paragraphs"][0]
    par["context"] = " " * len(par["context"])


XQUAD = [
    xquad_case("two questions share an id", _duplicate_id, "id"),
    xquad_case("'answers' an object", _answers_object, "answers"),
    xquad_case("answer_start of 5,000 digits", _huge_int, "digits"),
    xquad_case("de.json nested 100,000 deep", lambda d: "[" * 100_000 + "]" * 100_000, "nested"),
    xquad_case("not UTF-8", lambda d: b"\xff\xfe" + json.dumps(d).encode("utf-16-le"), "utf-8"),
    xquad_case("truncated JSON", lambda d: json.dumps(d)[:5000], "JSON"),
    xquad_case("a question id with a space", _id_with_space, "id"),
    xquad_case("a context of spaces only", _blank_context, "context"),
    xquad_case("sentence_breaks reversed (LAReQA pool)", _unsorted_breaks, "sentence_breaks",
               dataset="mlirkit/lareqa-xquad-r/de", note="the answer's sentence is the last break starting before "
               "it: reversed breaks would make another sentence the relevant one"),
    xquad_case("sentence_breaks overlapping (LAReQA pool)", _overlapping_breaks, "sentence_breaks",
               dataset="mlirkit/lareqa-xquad-r/de"),
]


def _gzip_bomb(ws):
    root = ws["tmp"] / "data"
    _xquad_files(root)
    (root / "xquad-r" / "de.json").unlink()
    with gzip.open(root / "xquad-r" / "de.json.gz", "wb", compresslevel=9) as f:
        f.write(b'{"data": [' + b" " * (600 * 2**20) + b"]}")
    return _export(ws, "mlirkit/xquad-r/de", "de.json.gz", "MiB")


def _dev_zero(ws):
    root = ws["tmp"] / "data"
    _xquad_files(root)
    (root / "xquad-r" / "de.json").unlink()
    (root / "xquad-r" / "de.json").symlink_to("/dev/zero")
    return _export(ws, "mlirkit/xquad-r/de", "de.json")


XQUAD += [
    Case("XQuAD-R files", "de.json.gz a gzip bomb (600 MiB of spaces)", _gzip_bomb,
         "exit 2, one line naming de.json.gz and the 512 MiB limit; memory bounded"),
    Case("XQuAD-R files", "de.json a symlink to /dev/zero", _dev_zero,
         "exit 2, one line naming de.json (never read without limit, never the bundled copy in its place)"),
]


# --------------------------------------------------------------------------------------- MLQA-R
MLQA_LANGS = ("ar", "de", "en", "es", "hi", "vi", "zh")
QUESTIONS = {"q1": ("en", "de", "ar", "zh"), "q2": ("en", "hi"), "q3": ("en", "es", "vi")}


def _paragraph(lang, qids):
    s1, s2 = f"[{lang}] first sentence.", f" [{lang}] answer {'/'.join(qids)} here."
    context = s1 + s2
    return {"context": context, "sentences": [s1, s2], "sentence_breaks": [[0, len(s1)], [len(s1), len(context)]],
            "qas": [{"id": q, "question": f"[{lang}] question {q}?",
                     "answers": [{"text": "answer", "answer_start": context.index("answer")}]} for q in qids]}


def _mlqa_docs() -> dict[str, dict]:
    docs = {}
    for lang in MLQA_LANGS:
        if lang == "en":
            paragraphs = [_paragraph("en", ["q1", "q2"]), _paragraph("en", ["q3"])]
        else:
            paragraphs = [_paragraph(lang, [q]) for q, langs in QUESTIONS.items() if lang in langs]
        docs[lang] = {"version": "1.0", "data": [{"title": f"t-{lang}", "paragraphs": paragraphs}]}
    return docs


def mlqa_case(name, change, *needles, file="de", dataset="mlirkit/mlqa-r/de", expect_ok=False, note=""):
    def attack(ws):
        docs = _mlqa_docs()
        change(docs)
        for lang, doc in docs.items():
            path = ws["tmp"] / "data" / "mlqa-r" / f"{lang}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        if expect_ok:
            out = ws["tmp"] / "export"
            outcome = module_cli("mlirkit.datasets", ["export", dataset, "--format", "trec", "--output", str(out)],
                                 env={"MLIRKIT_DATA": str(ws["tmp"] / "data"),
                                      "IR_DATASETS_HOME": str(ws["tmp"] / "home")})
            return Outcome(outcome.observed.startswith("exit 0") and (out / "qrels.txt").is_file(), outcome.observed)
        return _export(ws, dataset, f"{file}.json", *needles)
    return Case("MLQA-R files", name, attack, "exit 0, exported" if expect_ok else
                f"exit 2, one line naming {file}.json and {', '.join(needles)}; no export", note)


def _mlqa_duplicate(docs):
    docs["de"]["data"][0]["paragraphs"].append(_paragraph("de", ["q1"]))  # q1 twice in German


def _mlqa_not_in_english(docs):
    docs["de"]["data"][0]["paragraphs"].append(_paragraph("de", ["q9"]))


def _mlqa_control(docs):
    pass


MLQA = [
    mlqa_case("small files in LAReQA's layout (control)", _mlqa_control, expect_ok=True),
    mlqa_case("a question id in two German paragraphs", _mlqa_duplicate, "'q1'"),
    mlqa_case("a German question English lacks (MLQA: every question is in English)", _mlqa_not_in_english,
              expect_ok=True, note="argued: built faithfully (its one relevant paragraph is the German one); "
              "MLQA's construction is a fact about the upstream files, not a property mlirkit can demand of a file"),
    mlqa_case("'qas' a string", lambda d: d["de"]["data"][0]["paragraphs"][0].update(qas="q1"), "qas"),
    mlqa_case("'data' missing", lambda d: d["de"].pop("data"), "data"),
]



def export_case(name, argv, *needles, expected=None):
    def attack(ws):
        return module_cli("mlirkit.datasets", ["export", *[a.format(tmp=ws["tmp"]) for a in argv]], *needles,
                          env={"IR_DATASETS_HOME": _home(ws)}, unchanged=ws["tmp"])
    return Case("datasets export", name, attack, expected or f"exit 2, one line naming {', '.join(needles)}; nothing written")


def _export_under_a_file(ws):
    (ws["tmp"] / "afile").write_text("x")
    return module_cli("mlirkit.datasets", ["export", "mlirkit/xquad-r/de", "--format", "trec", "--output",
                                           str(ws["tmp"] / "afile" / "out")], "is not a directory",
                      env={"IR_DATASETS_HOME": _home(ws)}, unchanged=ws["tmp"])


def _home(ws) -> str:
    """An ir_datasets home beside the case's folder (ir_datasets makes it; it is not the case's output)."""
    return str(ws["tmp"].with_name(ws["tmp"].name + "-home"))


EXPORT = [
    export_case("an unknown dataset id", ["mlirkit/xquad-r/dx", "--format", "trec", "--output", "{tmp}/o"], "did you mean"),
    export_case("--format xml", ["mlirkit/xquad-r/de", "--format", "xml", "--output", "{tmp}/o"], "--format"),
    export_case("an id that climbs out ('../../etc')", ["../../etc", "--format", "trec", "--output", "{tmp}/o"],
                "../../etc"),
    Case("datasets export", "--output under a file", _export_under_a_file, "exit 2, one line; the file untouched"),
]

CASES = [*XQUAD, *MLQA, *EXPORT]
