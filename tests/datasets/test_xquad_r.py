"""XQuAD-R from the bundled copy of the LAReQA files: the paragraph pools (8 and 11 languages), LAReQA's
sentence pool, the partly parallel bed; counts, qrels, determinism, ranx and mlirkit.eval on them."""
from __future__ import annotations

from collections import Counter, defaultdict

import ir_datasets
import pytest

import mlirkit.datasets  # noqa: F401
from mlirkit.datasets import DATASETS, sources, xquad_r

SENTENCES = {"ar": 1222, "de": 1276, "el": 1234, "en": 1180, "es": 1215, "hi": 1244, "ru": 1219, "th": 852,
             "tr": 1167, "vi": 1209, "zh": 1196}  # LAReQA's README table (candidates per language)
QUESTION = "56beb7953aeaaa14008c92ad"  # "Who won Super Bowl XLIX?", article 0, paragraph 1


def load(dataset_id: str):
    ds = ir_datasets.load(dataset_id)
    qrels = defaultdict(set)
    for r in ds.qrels_iter():
        assert r.relevance == 1
        qrels[r.query_id].add(r.doc_id)
    return list(ds.docs_iter()), {q.query_id: q for q in ds.queries_iter()}, qrels


def test_bundled_files_are_read_offline_with_their_checksums():
    assert sources.is_offline()  # tests run offline: the bundled copy is the source
    files = xquad_r.files(xquad_r.ALL_LANGS)
    assert all(sf.md5 and sf.bundled == xquad_r.ARCHIVE for sf in files)
    assert sources.bundled_available(files) and not sources.all_local(files)
    got = sources.fetch_all(files)
    assert all(isinstance(v, sources.BundledFile) for v in got.values()) and len(got) == 11


def test_paragraph_pool_8_languages():
    docs, queries, qrels = load("mlirkit/xquad-r/multi")
    assert len(docs) == 1920 and Counter(d.lang for d in docs) == {la: 240 for la in xquad_r.LANGS}
    assert len(queries) == 8 * 1190 and Counter(q.lang for q in queries.values()) == {la: 1190 for la in xquad_r.LANGS}
    i, j = 0, 1
    assert qrels[f"de_{QUESTION}"] == {f"{la}_{i}_{j}" for la in xquad_r.LANGS}
    assert all(len(r) == 8 for r in qrels.values())
    by_id = {d.doc_id: d for d in docs}
    assert by_id["en_0_1"].text.startswith("The Broncos defeated the Pittsburgh Steelers")
    mono_docs, mono_q, mono_qrels = load("mlirkit/xquad-r/zh")
    assert len(mono_docs) == 1920 and len(mono_q) == 1190 and mono_q[QUESTION].lang == "zh"
    assert mono_qrels[QUESTION] == qrels[f"de_{QUESTION}"]


def test_paragraph_pool_11_languages():
    docs, queries, qrels = load("mlirkit/xquad-r-11/th")
    assert len(docs) == 2640 and Counter(d.lang for d in docs) == {la: 240 for la in xquad_r.ALL_LANGS}
    assert len(queries) == 1190 and {q.lang for q in queries.values()} == {"th"}
    assert qrels[QUESTION] == {f"{la}_0_1" for la in xquad_r.ALL_LANGS}
    assert sum(len(r) for r in qrels.values()) == 11 * 1190


def test_lareqa_sentence_pool():
    docs, queries, qrels = load("mlirkit/lareqa-xquad-r/multi")
    assert len(docs) == 13_014 and Counter(d.lang for d in docs) == SENTENCES
    assert len(queries) == 11 * 1190
    assert all(len(r) == 11 and {d.split("_")[0] for d in r} == set(xquad_r.ALL_LANGS) for r in qrels.values())
    # hand-checked: "Who won Super Bowl XLIX?" -> "New England Patriots", in the second sentence of the
    # paragraph in every language except Thai, whose sentence breaks put the answer at the end of the first
    expected = {f"{la}_0_1_1" for la in xquad_r.ALL_LANGS if la != "th"} | {"th_0_1_0"}
    for q_lang in ("en", "th", "zh"):
        assert qrels[f"{q_lang}_{QUESTION}"] == expected
    by_id = {d.doc_id: d for d in docs}
    assert by_id["en_0_1_1"].text.startswith("They then beat the defending Super Bowl XLIX champion New England Patriots")
    assert "新英格兰爱国者队" in by_id["zh_0_1_1"].text and "นิวอิงแลนด์แพทริออตส์" in by_id["th_0_1_0"].text
    assert queries[f"th_{QUESTION}"].lang == "th" and queries[f"en_{QUESTION}"].text == "Who won Super Bowl XLIX?"


def test_answer_sentence_rule():
    par = xquad_r.Paragraph("Aa b. Cc d. Ee.", ("Aa b.", "Cc d.", "Ee."), ((0, 5), (6, 11), (12, 15)), ())
    assert [xquad_r.answer_sentence(par, s) for s in (0, 4, 5, 6, 10, 12, 14)] == [0, 0, 0, 1, 1, 2, 2]


def test_partial_bed_rule_and_determinism():
    docs, queries, qrels = load("mlirkit/xquad-r-partial/multi")
    kept = defaultdict(set)
    for d in docs:
        lang, i, j = d.doc_id.split("_")
        kept[(int(i), int(j))].add(lang)
    assert len(kept) == 240
    assert all(2 <= len(langs) <= 4 and "en" in langs for langs in kept.values())
    assert Counter(len(v) for v in kept.values()).keys() == {2, 3, 4}  # every size occurs
    assert len(docs) == sum(len(v) for v in kept.values())
    for (i, j), langs in kept.items():
        assert langs == set(xquad_r.partial_langs(i, j))
    # queries in every language; relevant = the kept versions only
    assert Counter(q.lang for q in queries.values()) == {la: 1190 for la in xquad_r.LANGS}
    full_docs, _, full_qrels = load("mlirkit/xquad-r/multi")
    doc_ids = {d.doc_id for d in docs}
    assert doc_ids < {d.doc_id for d in full_docs}
    for qid, rel in qrels.items():
        assert rel == full_qrels[qid] & doc_ids and 2 <= len(rel) <= 4
    # the same seed gives the same bed; another seed another one
    assert [xquad_r.partial_langs(i, j) for i, j in sorted(kept)] == [tuple(sorted(kept[k])) for k in sorted(kept)]
    assert [xquad_r.partial_langs(i, j, seed=1) for i, j in sorted(kept)] != [tuple(sorted(kept[k])) for k in sorted(kept)]
    assert xquad_r.partial_langs(3, 2) == xquad_r.partial_langs(3, 2, seed=xquad_r.PARTIAL_SEED)


def test_every_family_is_registered_and_offline():
    for fam in xquad_r.FAMILIES:
        ids = [f"mlirkit/{fam.name}/{q}" for q in (*fam.langs, "multi")]
        for dataset_id in ids:
            info = DATASETS.get(dataset_id)
            assert info.available_offline() and info.doc_langs == fam.langs and info.licence == "CC BY-SA 4.0"


@pytest.mark.slow
def test_every_id_loads_offline():
    for fam in xquad_r.FAMILIES:
        for q in (*fam.langs, "multi"):
            ds = ir_datasets.load(f"mlirkit/{fam.name}/{q}")
            n_langs = len(fam.langs) if q == "multi" else 1
            assert ds.queries_count() == 1190 * n_langs
            assert ds.docs_count() == {"paragraph": 240 * len(fam.langs), "sentence": 13_014}[fam.unit] or fam.partial
            assert ds.qrels_count() >= 2 * ds.queries_count()


def test_ranx_and_mlirkit_eval_read_the_sentence_qrels():
    """mAP through mlirkit.eval equals ranx's and the hand formula on a run with known ranks."""
    import ranx

    from mlirkit.eval import evaluate

    _, queries, qrels = load("mlirkit/lareqa-xquad-r/en")
    qids = sorted(qrels)[:3]
    qrels3 = {q: {d: 1 for d in qrels[q]} for q in qids}
    # relevant documents at ranks 1, 3, 5, ... (a non-relevant one between each two)
    run = {}
    for q in qids:
        ranked = []
        for n, d in enumerate(sorted(qrels3[q])):
            ranked += [d, f"filler_{q}_{n}"]
        run[q] = {d: float(len(ranked) - r) for r, d in enumerate(ranked)}
    ap = sum((k + 1) / (2 * k + 1) for k in range(11)) / 11  # precision at the k-th relevant (rank 2k+1)
    assert ranx.evaluate(ranx.Qrels(qrels3), ranx.Run(run), "map") == pytest.approx(ap)
    result = evaluate(qrels3, {"r": run}, ["map", "map@10"], significance=None)
    assert result.value("r", "map") == pytest.approx(ap)
    assert result.value("r", "map@10") == pytest.approx(sum((k + 1) / (2 * k + 1) for k in range(5)) / 11)


def test_export_cli(tmp_path, capsys):
    import json

    from mlirkit.datasets.cli import main

    assert main(["export", "mlirkit/xquad-r-partial/de", "--format", "trec", "--output", str(tmp_path / "t")]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["docs"] == 721 and counts["queries"] == 1190
    topics = (tmp_path / "t" / "topics.tsv").read_text(encoding="utf-8").splitlines()
    assert len(topics) == 1190 and all(t.endswith("\tde") for t in topics)
    qrels = (tmp_path / "t" / "qrels.txt").read_text().splitlines()
    assert f"{QUESTION} 0 en_0_1 1" in qrels and len(qrels) == counts["qrels"]


def test_queries_carry_the_question_they_translate(tmp_path, capsys):
    """Every query is a ParallelQuery whose group_id is the SQuAD id: the 8 (11) translations of a
    question form one group, for the grouped paired test; topic readers and the BEIR export keep it."""
    import json

    from mlirkit.datasets.cli import main
    from mlirkit.io.records import ParallelQuery
    from mlirkit.io.topics import read_topics

    for dataset_id, n_langs in (("mlirkit/xquad-r/multi", 8), ("mlirkit/lareqa-xquad-r/multi", 11)):
        ds = ir_datasets.load(dataset_id)
        assert ds.queries_cls() is ParallelQuery
        groups = defaultdict(set)
        for q in ds.queries_iter():
            assert q.group_id == q.query_id.split("_", 1)[1]
            groups[q.group_id].add(q.lang)
        assert len(groups) == 1190 and all(len(langs) == n_langs for langs in groups.values())
    mono = list(ir_datasets.load("mlirkit/xquad-r-partial/hi").queries_iter())
    assert all(q.group_id == q.query_id for q in mono)
    topics = read_topics("mlirkit/xquad-r-11/multi")
    assert all(isinstance(q, ParallelQuery) for q in topics) and len({q.group_id for q in topics}) == 1190
    assert main(["export", "mlirkit/xquad-r/vi", "--format", "beir", "--output", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    first = json.loads((tmp_path / "b" / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["group_id"] == first["_id"] and first["lang"] == "vi"
    assert {q.group_id for q in read_topics(tmp_path / "b")} == set(groups)
