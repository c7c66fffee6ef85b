"""Upstream formats -> ir_datasets registrations, on tiny synthetic files written in each format."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import ir_datasets
import pytest

import mlirkit.datasets  # noqa: F401  (registers the ids)
from mlirkit.datasets import belebele, mlqa, mmarco_pairs, multieup, xquad_r
from mlirkit.datasets.sources import MissingDataError
from mlirkit.base.errors import InputFormatError


def root() -> Path:
    return Path(os.environ["IR_DATASETS_HOME"]) / "mlirkit"


def load(dataset_id: str):
    ds = ir_datasets.load(dataset_id)
    docs = {d.doc_id: d for d in ds.docs_iter()}
    queries = {q.query_id: q for q in ds.queries_iter()} if ds.has_queries() else {}
    qrels: dict[str, set[str]] = {}
    for r in (ds.qrels_iter() if ds.has_qrels() else []):
        assert r.relevance == 1
        qrels.setdefault(r.query_id, set()).add(r.doc_id)
    return ds, docs, queries, qrels


# ---------------------------------------------------------------- Belebele
def write_belebele(base: Path, *, bad_dialect: bool = False) -> None:
    for lang, code in belebele.CONFIGS.items():
        rows = []
        for link, qn in (("https://ex.org/A", 1), ("https://ex.org/A", 2), ("https://ex.org/B", 1)):
            passage = f"{lang} passage {link[-1]}"
            if lang == "dt" and link.endswith("B"):
                passage = "de passage B"  # identical text in two languages: merged (md5 of exact text)
            rows.append({"link": link, "question_number": qn, "flores_passage": passage,
                         "question": f"{lang} question {link[-1]}{qn}", "mc_answer1": "a", "mc_answer2": "b",
                         "mc_answer3": "c", "mc_answer4": "d", "correct_answer_num": "2",
                         "dialect": "arb_Arab" if (bad_dialect and lang == "en") else code, "ds": "2023-05-03"})
        if lang == "fr":  # a question the English anchor does not have: ignored
            rows.append({**rows[0], "link": "https://ex.org/Z", "flores_passage": "fr only"})
        p = base / "belebele" / "data" / f"{code}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def h8(s: str) -> str:
    return hashlib.md5(s.encode()).hexdigest()[:8]


def test_belebele_mono():
    write_belebele(root())
    ds, docs, queries, qrels = load("mlirkit/belebele/ar")
    assert len(docs) == 27  # 14 languages x 2 passages, dt's B equals de's B
    assert docs["doc_ar_0"].text == "ar passage A" and docs["doc_ar_1"].text == "ar passage B"
    assert docs["doc_de_3"].text == "de passage B" and docs["doc_dt_4"].text == "dt passage A"
    assert docs["doc_en_5"].lang == "en" and "fr only" not in {d.text for d in docs.values()}
    qa1, qb1 = f"q_{h8('https://ex.org/A_1')}", f"q_{h8('https://ex.org/B_1')}"
    assert set(queries) == {qa1, f"q_{h8('https://ex.org/A_2')}", qb1}
    assert queries[qa1].text == "ar question A1" and queries[qa1].lang == "ar"  # "ar" is acm_Arab
    assert ds.queries_lang() == "ar" and ds.docs_lang() is None
    assert len(qrels[qa1]) == 14 and {docs[d].lang for d in qrels[qa1]} == set(belebele.LANGS)
    assert len(qrels[qb1]) == 13 and "doc_de_3" in qrels[qb1]


def test_belebele_multi_and_dialect_error():
    write_belebele(root())
    _, docs, queries, qrels = load("mlirkit/belebele/multi")
    assert len(queries) == 14 * 3 and len(docs) == 27
    q = queries[f"dt_q_{h8('https://ex.org/A_1')}"]
    assert q.lang == "dt" and q.text == "dt question A1"
    assert qrels[f"zh_q_{h8('https://ex.org/B_1')}"] == qrels[f"en_q_{h8('https://ex.org/B_1')}"]
    write_belebele(root(), bad_dialect=True)
    with pytest.raises(InputFormatError, match=r"eng_Latn\.jsonl:1: dialect 'arb_Arab'"):
        list(ir_datasets.load("mlirkit/belebele/en").docs_iter())


# ---------------------------------------------------------------- XQuAD-R
def xquad_doc(lang: str) -> dict:
    def par(i, j, ids):
        ctx = f"[{lang}] paragraph {i}.{j}. Second sentence."
        return {"context": ctx, "qas": [{"answers": [{"answer_start": 0, "text": ctx[:4]}], "id": qid,
                                         "question": f"[{lang}] question {qid}?"} for qid in ids],
                "sentence_breaks": [[0, ctx.index(".") + 1]], "sentences": [ctx[:ctx.index(".") + 1]]}
    return {"data": [{"paragraphs": [par(0, 0, ["id1"]), par(0, 1, ["id2", "id3"])], "title": "Art_0"},
                     {"paragraphs": [par(1, 0, ["id4"])], "title": "Art_1"}], "version": "1.1"}


def write_xquad(base: Path) -> None:
    for lang in xquad_r.LANGS:
        p = base / "xquad-r" / f"{lang}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(xquad_doc(lang), ensure_ascii=False), encoding="utf-8")


def test_xquad_r():
    write_xquad(root())
    _, docs, queries, qrels = load("mlirkit/xquad-r/zh")
    assert len(docs) == 24 and docs["hi_0_1"].text.startswith("[hi] paragraph 0.1") and docs["hi_0_1"].lang == "hi"
    assert set(queries) == {"id1", "id2", "id3", "id4"} and queries["id3"].text == "[zh] question id3?"
    assert qrels["id3"] == {f"{la}_0_1" for la in xquad_r.LANGS}
    _, _, mq, mqrels = load("mlirkit/xquad-r/multi")
    assert len(mq) == 32 and mq["ru_id4"].lang == "ru" and mqrels["ru_id4"] == {f"{la}_1_0" for la in xquad_r.LANGS}


def test_xquad_r_bad_structure():
    write_xquad(root())
    (root() / "xquad-r" / "de.json").write_text(json.dumps({"data": [{"paragraphs": [{"qas": []}]}]}))
    with pytest.raises(InputFormatError, match=r"de\.json: data\[0\]\.paragraphs\[0\] needs 'context'"):
        list(ir_datasets.load("mlirkit/xquad-r/en").docs_iter())


def _first_paragraph(doc: dict) -> dict:
    return doc["data"][0]["paragraphs"][0]


def _two_sentences(par: dict) -> None:
    ctx = par["context"]
    cut = ctx.index(".") + 1
    par["sentences"], par["sentence_breaks"] = [ctx[:cut], ctx[cut:]], [[0, cut], [cut, len(ctx)]]


def _reversed(par):
    _two_sentences(par)
    par["sentences"].reverse()
    par["sentence_breaks"].reverse()


def _overlapping(par):
    _two_sentences(par)
    par["sentence_breaks"][1][0] = 0


@pytest.mark.parametrize("change, message", [
    (lambda p: p.update(context=" " * len(p["context"])), r"paragraphs\[0\]\.context: empty or whitespace only"),
    (_reversed, r"paragraphs\[0\]\.sentence_breaks: breaks out of order or overlapping"),
    (_overlapping, r"paragraphs\[0\]\.sentence_breaks: breaks out of order or overlapping"),
    (lambda p: p["qas"][0].update(id="q 1"), r"paragraphs\[0\]\.qas\[0\]: invalid 'id' 'q 1'"),
    (lambda p: p["qas"][0].update(id="q\x1b1"), r"paragraphs\[0\]\.qas\[0\]: invalid 'id'"),
])
def test_xquad_r_refuses_what_would_change_the_collection_silently(change, message):
    """A blank paragraph (a document no reader takes back), sentence breaks out of order or overlapping (the
    answer's sentence is the last break starting before it: another sentence would become the relevant one),
    a question id no TREC file can hold: one line naming the file and the field, before anything is built."""
    write_xquad(root())
    doc = xquad_doc("de")
    change(_first_paragraph(doc))
    (root() / "xquad-r" / "de.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"de\.json: data\[0\]\." + message) as e:
        list(ir_datasets.load("mlirkit/lareqa-xquad-r/de").docs_iter())
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------- MLQA
X, Y = "a" * 40, "b" * 40
X_CTX = {"de": "X Kontext", "en": "X context", "es": "X contexto"}  # instance X: contexts de, en, es
Y_CTX = {"ar": "Y سياق", "en": "Y context"}                        # instance Y: contexts ar, en


def mlqa_files() -> dict[str, bytes]:
    out = {}
    for c in mlqa.LANGS:
        for q in mlqa.LANGS:
            paragraphs = []
            for inst, ctxs in ((X, X_CTX), (Y, Y_CTX)):
                if c in ctxs and not (inst == Y and q == "hi"):  # no Hindi question for Y
                    paragraphs.append({"context": ctxs[c], "qas": [
                        {"question": f"{q} question {inst[0]}" if c == "es" else f" {q} question {inst[0]} ",  # same once stripped
                         "answers": [{"text": "c", "answer_start": 0}], "id": inst}]})
            doc = {"data": [{"title": "T", "paragraphs": paragraphs}] if paragraphs else [], "version": "1.0"}
            out[mlqa.member(c, q)] = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    return out


@pytest.mark.parametrize("layout", ["zip", "extracted"])
def test_mlqa_partial_parallelism(layout):
    files = mlqa_files()
    if layout == "zip":
        (root() / "mlqa").mkdir(parents=True)
        with zipfile.ZipFile(root() / "mlqa" / "MLQA_V1.zip", "w") as zf:
            for name, data in files.items():
                zf.writestr(name, data)
    else:
        for name, data in files.items():
            p = root() / "mlqa" / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
    _, docs, queries, qrels = load("mlirkit/mlqa/en")
    # corpus over files (c, en) in context-language order ar, de, en, es, ...
    assert {d: (v.text, v.lang) for d, v in docs.items()} == {
        "doc_ar_0": ("Y سياق", "ar"), "doc_de_1": ("X Kontext", "de"), "doc_en_2": ("X context", "en"),
        "doc_en_3": ("Y context", "en"), "doc_es_4": ("X contexto", "es")}
    # queries numbered by first appearance of the stripped question text (Y first, in the ar file)
    assert queries["q_0"].text.strip() == "en question b" and queries["q_1"].text.strip() == "en question a"
    assert qrels == {"q_0": {"doc_ar_0", "doc_en_3"}, "q_1": {"doc_de_1", "doc_en_2", "doc_es_4"}}
    _, _, hq, hqrels = load("mlirkit/mlqa/hi")
    assert len(hq) == 1 and hqrels == {"q_0": {"doc_de_0", "doc_en_1", "doc_es_2"}}
    _, mdocs, mq, mqrels = load("mlirkit/mlqa/multi")
    assert len(mdocs) == 5 and f"hi_{Y}" not in mq and len(mq) == 7 + 6
    assert {mdocs[d].lang for d in mqrels[f"vi_{X}"]} == {"de", "en", "es"}
    assert {mdocs[d].lang for d in mqrels[f"de_{Y}"]} == {"ar", "en"}


# ---------------------------------------------------------------- MultiEuP-v2
EU = ["BG", "CS", "DA", "DE", "EL", "EN", "ES", "ET", "FI", "FR", "GA", "HR", "HU", "IT", "LT", "LV", "MT", "NL",
      "PL", "PT", "RO", "SK", "SL", "SV"]


def meup_row(did, text, lang, debate, titles, *, qid_en=True, ga="", ga_qid=""):
    row = {"did": did, "TEXT": text, "DATE": "2022-05-04", "LANGUAGE": lang, "NAME": "N", "MEPID": "1",
           "PARTY": "P", "country": "C", "gender": "Female"}
    for code in EU:
        row[f"title_{code}"] = titles.get(code, f"[{code}] {debate}") if code != "GA" else ga
        row[f"qid_{code}"] = f"{debate}#0" if code != "GA" else ga_qid
    if not qid_en:
        row["qid_EN"] = ""
    return row


def write_meup(base: Path) -> Path:
    rows = [
        meup_row("s1", "Frau Präsidentin, \"Wasserstoff\",\nzweite Zeile.", "DE", "D1", {"EN": "Hydrogen networks"},
                 ga="2024", ga_qid="2024"),  # numeric-looking GA cells ...
        meup_row("s2", "Madam President, hydrogen.", "EN", "D1", {"EN": "Hydrogen networks"},
                 ga="Líonraí hidrigine", ga_qid="D1#0"),  # ... and text in the same columns
        meup_row("s3", "Voorzitter, waterstof.", "NL", "D1", {}),  # NL: dropped as by SHIFT ("dt")
        meup_row("s4", "Madame la Présidente, pêche.", "FR", "D2", {"EN": "Fisheries", "DE": ""}),
        meup_row("s5", "Pani Przewodnicząca.", "PL", "D2", {}),     # not a SHIFT language
        meup_row("s6", "No debate id.", "EN", "D3", {}, qid_en=False),
    ]
    p = base / "multieup-v2" / multieup.CSV_NAME
    p.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    p.write_text(buf.getvalue(), encoding="utf-8")
    return p


def test_multieup_debate_grouping():
    write_meup(root())
    ds, docs, queries, qrels = load("mlirkit/multieup-v2/en")
    assert {d: v.lang for d, v in docs.items()} == {"s1": "de", "s2": "en", "s4": "fr"}
    assert docs["s1"].text == "Frau Präsidentin, \"Wasserstoff\",\nzweite Zeile."
    assert {q: v.text for q, v in queries.items()} == {"D1#0": "Hydrogen networks", "D2#0": "Fisheries"}
    assert qrels == {"D1#0": {"s1", "s2"}, "D2#0": {"s4"}}
    _, _, dq, dqrels = load("mlirkit/multieup-v2/de")
    assert set(dq) == {"D1#0"} and dq["D1#0"].text == "[DE] D1"  # D2 has no German title
    _, _, mq, mqrels = load("mlirkit/multieup-v2/multi")
    assert set(mq) == {f"{la}_D1" for la in multieup.LANGS} | {f"{la}_D2" for la in multieup.LANGS if la != "de"}
    assert mq["pt_D2"].lang == "pt" and mqrels["it_D1"] == {"s1", "s2"}


def test_multieup_missing_column():
    p = write_meup(root())
    p.write_text("did,TEXT,LANGUAGE\nx,y,EN\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"clean_all_with_did_qid\.MEP\.csv:1: missing column 'qid_EN'"):
        list(ir_datasets.load("mlirkit/multieup-v2/en").docs_iter())


# ---------------------------------------------------------------- SHIFT processed release
def write_release(base: Path, folder: str, bench: str, queries, corpus, qrels) -> None:
    d = base / "mlir-benchmarks" / folder / bench
    d.mkdir(parents=True, exist_ok=True)
    (d / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries))
    (d / "corpus.jsonl").write_text("".join(json.dumps({k: v}, ensure_ascii=False) + "\n" for k, v in corpus.items()))
    (d / "qrels.jsonl").write_text("".join(json.dumps({k: v}) + "\n" for k, v in qrels.items()))


def test_release_equals_raw_build(monkeypatch, tmp_path):
    """Raw XQuAD-R files and the release written from them (SHIFT's writer format) give the same collection."""
    write_xquad(root())
    for variant, dataset_id in (("MLIR-en", "mlirkit/xquad-r/en"), ("MMLIR", "mlirkit/xquad-r/multi")):
        _, docs, queries, qrels = load(dataset_id)
        multi = variant == "MMLIR"
        write_release(tmp_path, variant, "XQuAD_test",
                      [{"_id": q, "text": v.text, **({"lang": v.lang} if multi else {})} for q, v in sorted(queries.items())],
                      {d: {"text": v.text, "lang": v.lang} for d, v in sorted(docs.items())},
                      {q: {d: 1 for d in sorted(ds)} for q, ds in sorted(qrels.items())})
    raw = {i: load(i)[1:] for i in ("mlirkit/xquad-r/en", "mlirkit/xquad-r/multi")}
    monkeypatch.setenv("MLIRKIT_DATA", str(tmp_path))
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "empty_home"))  # no raw files now
    for dataset_id, (docs, queries, qrels) in raw.items():
        _, rdocs, rqueries, rqrels = load(dataset_id)
        assert rdocs == docs and rqueries == queries and rqrels == qrels


def test_release_query_forms():
    write_release(root(), "MLIR-zh", "Belebele_test", [{"q_1": "问题"}], {"doc_zh_0": {"text": "段落", "lang": "zh"}},
                  {"q_1": {"doc_zh_0": 1}})
    _, docs, queries, qrels = load("mlirkit/belebele/zh")
    assert queries == {"q_1": mlirkit.datasets.LangQuery("q_1", "问题", "zh")} and qrels == {"q_1": {"doc_zh_0"}}


# ---------------------------------------------------------------- mMARCO pairs
def write_mmarco(home: Path, langs) -> None:
    m = home / "mmarco"
    (m / "v2").mkdir(parents=True, exist_ok=True)
    (m / "triples.train.ids.small.tsv").write_text("11\t101\t900\n11\t101\t901\n12\t102\t902\n11\t103\t900\n")
    for lang in langs:
        name = mmarco_pairs.FILE_NAMES[lang]
        missing = "103" if lang == "dt" else None  # Dutch lacks one passage
        lines = [f"{pid}\t{lang} passage {pid}" for pid in ("100", "101", "102", "103", "900") if pid != missing]
        lines.append("broken line without tab")
        (m / "v2" / f"{name}_collection.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (m / "v2" / f"{name}.queries.train.tsv").write_text(f"11\t{lang} query 11\n12\t{lang} query 12\n13\tx\n")


def test_mmarco_pairs_dutch_is_dt():
    write_mmarco(Path(os.environ["IR_DATASETS_HOME"]), ["dt", "en"])
    ds, docs, queries, qrels = load("mlirkit/mmarco-pairs/dt")
    assert ds.docs_lang() == "dt" and ds.queries_lang() == "dt"
    assert list(docs) == ["101", "102"] and docs["101"] == mlirkit.datasets.LangDoc("101", "dt passage 101", "dt")
    assert set(queries) == {"11", "12"} and qrels == {"11": {"101"}, "12": {"102"}}
    _, edocs, _, eqrels = load("mlirkit/mmarco-pairs/en/10k")
    assert list(edocs) == ["101", "102", "103"] and eqrels == {"11": {"101", "103"}, "12": {"102"}}


def test_mmarco_pairs_multi_rows():
    write_mmarco(Path(os.environ["IR_DATASETS_HOME"]), mmarco_pairs.LANGS)
    rows = list(mlirkit.datasets.parallel_rows("mlirkit/mmarco-pairs/multi"))
    assert len(rows) == 3 * 14 - 1
    assert ("11-101", "dt", "dt passage 101") in rows and not any(r[0] == "11-103" and r[1] == "dt" for r in rows)
    assert [r[0] for r in rows[:14]] == ["11-101"] * 14  # grouped per unique (query, positive) pair
    docs = {d.doc_id: d for d in ir_datasets.load("mlirkit/mmarco-pairs/multi/10k").docs_iter()}
    assert docs["102/ja"].group_id == "102" and docs["102/ja"].lang == "ja"


def test_mmarco_missing_names_file():
    with pytest.raises(MissingDataError, match=r"triples\.train\.ids\.small\.tsv.*offline mode.*unicamp-dl/mmarco.*put it at"):
        list(ir_datasets.load("mlirkit/mmarco-pairs/de").docs_iter())
