"""Multilingual BM25 end to end with the real JVM: per-language analysis, Pyserini's own LuceneSearcher
returning mlirkit's top 10 on the same index, refusals in one line with nothing left behind.

Starts the JVM of the pytest process (shared with the other JVM tests; ``boot_jvm`` is idempotent).
"""
from __future__ import annotations

import json
from collections import Counter

import pytest

from mlirkit.base.cli import run_cli
from mlirkit.lexical.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.jvm]

TOY = [
    {"id": "de1", "contents": "Die Häuser sind groß und schön", "lang": "de"},
    {"id": "de2", "contents": "Der Hund läuft schnell über die Straße", "lang": "de"},
    {"id": "en1", "contents": "The houses are big and beautiful", "lang": "en"},
    {"id": "en2", "contents": "The dog runs fast across the street", "lang": "en"},
    {"id": "fr1", "contents": "Les maisons sont grandes et belles", "lang": "fr"},
    {"id": "ja1", "contents": "家はとても大きくて美しいです", "lang": "ja"},
    {"id": "vi1", "contents": "Những ngôi nhà to và đẹp", "lang": "vi"},
]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy")
    corpus = _write_jsonl(root / "corpus.jsonl", TOY)
    index = root / "index"
    assert main(["index", "--corpus", str(corpus), "--output", str(index), "--fallback-analyzer", "standard",
                 "--quiet"]) == 0
    return corpus, index


@pytest.fixture(scope="module")
def ddtp_index(tmp_path_factory):
    """600 documents of the bundled DDTP bed (14 languages; cs and sk read with the standard fallback)."""
    index = tmp_path_factory.mktemp("ddtp") / "index"
    assert main(["index", "--corpus", "mlirkit/ddtp/multi", "--max-docs", "600", "--output", str(index),
                 "--fallback-analyzer", "standard", "--quiet"]) == 0
    return index


def _search(index, topics, out, *extra):
    assert main(["search", "--index", str(index), "--topics", str(topics), "--output", str(out), "--hits", "10",
                 "--quiet", *extra]) == 0
    from mlirkit.io.trec import read_run

    return read_run(out)


def test_each_document_is_analysed_with_its_own_language(toy_index, tmp_path):
    corpus, index = toy_index
    topics = tmp_path / "topics.tsv"
    topics.write_text("q-de\tHaus\tde\nq-en\thouse\ten\nq-fr\tmaison\tfr\nq-vi\tNHÀ\tvi\nq-ja\t家\tja\n", encoding="utf-8")
    run = _search(index, topics, tmp_path / "bm25.trec")
    assert set(run["q-de"]) == {"de1"}  # German stemming: häuser -> haus (an English analyzer keeps "häuser")
    assert set(run["q-en"]) == {"en1"}  # Porter: houses -> hous
    assert set(run["q-fr"]) == {"fr1"}  # French light stemming: maisons -> maison
    assert set(run["q-vi"]) == {"vi1"}  # the standard fallback lower-cases, in documents and queries alike
    assert "ja1" in run["q-ja"]
    from mlirkit.io.provenance import read_sidecar

    side = read_sidecar(tmp_path / "bm25.trec")  # where the run came from: the Lucene index, BM25, the topics
    assert side["index"]["path"] == str(index) and side["index"]["meta_sha256"]
    assert side["bm25"]["k1"] == 0.9 and side["bm25"]["b"] == 0.4 and side["bm25"]["statistics"]
    assert side["topics"]["path"] == str(topics) and side["hits"] == 10
    assert side["command"][:4] == ["python", "-m", "mlirkit.lexical", "search"]
    meta = json.loads((index / "meta.json").read_text())
    assert {la: e["analyzer"] for la, e in meta["analyzers"].items()} == \
        {"de": "de", "en": "en", "fr": "fr", "ja": "ja", "vi": "standard"}
    assert meta["fields"] == {la: f"contents_{la}" for la in ("de", "en", "fr", "ja", "vi")}
    from mlirkit.io.doc_langs import read_doc_langs

    assert read_doc_langs(index) == {r["id"]: r["lang"] for r in TOY}


def _pyserini_analyzer(searcher, entry):
    """Select the analyzer the way a Pyserini user does, from the index's meta.json entry."""
    from pyserini.analysis import get_lucene_analyzer

    if entry["analyzer"] == "en":
        searcher.set_analyzer(get_lucene_analyzer("en"))
    elif entry["analyzer"] == "standard":
        searcher.set_analyzer(get_lucene_analyzer(stemming=False, stopwords=False))
    else:
        searcher.set_language(entry["analyzer"])


def _pick(n_per_lang: int):
    from mlirkit.io.topics import read_topics

    langs = Counter()
    picked = []
    for q in read_topics("mlirkit/ddtp/multi/test"):
        if langs[q.lang] < n_per_lang:
            langs[q.lang] += 1
            picked.append(q)
    assert len(langs) == 14
    return picked


@pytest.mark.parametrize("statistics", ["language", "pooled"])
def test_pyserini_lucene_searcher_returns_the_same_top10(ddtp_index, tmp_path, statistics):
    """Queries in all 14 languages: LuceneSearcher on the index, analyzer chosen as meta.json says, searching
    every language field (or, pooled, its default field) returns mlirkit's top 10 with the same scores."""
    from mlirkit.lexical import Bm25Searcher

    picked = _pick(6)
    with Bm25Searcher(ddtp_index, statistics=statistics) as searcher:
        ours = searcher.search(picked, k=10)
    assert sum(bool(ours[q.query_id]) for q in picked) >= 70

    from pyserini.search.lucene import LuceneSearcher

    meta = json.loads((ddtp_index / "meta.json").read_text())
    fields = {field: 1.0 for field in meta["fields"].values()} if statistics == "language" else {}
    searcher = LuceneSearcher(str(ddtp_index))
    assert searcher.num_docs == 600
    compared = 0
    for q in picked:
        _pyserini_analyzer(searcher, meta["analyzers"][q.lang])
        hits = searcher.search(q.text, k=10, fields=fields)
        mine = sorted(ours[q.query_id].items(), key=lambda x: (-x[1], x[0]))
        assert [h.docid for h in hits] == [d for d, _ in mine], q.query_id
        assert [round(h.score, 4) for h in hits] == [round(s, 4) for _, s in mine], q.query_id
        compared += bool(hits)
        raw = json.loads(searcher.doc(hits[0].docid).raw()) if hits else None
        assert raw is None or raw["lang"] == ddtp_lang(raw["id"])
    assert compared >= 70


def test_language_statistics_score_as_an_index_of_that_language_alone(ddtp_index, tmp_path):
    """The equivalence behind the default: a document's score with language statistics is its score in
    an index of its language's documents only (built from that subset)."""
    from mlirkit.io.corpus import read_corpus
    from mlirkit.lexical import Bm25Searcher

    ids = [line.strip() for line in (ddtp_index / "docid").read_text().splitlines()]
    langs = [line.strip() for line in (ddtp_index / "langs").read_text().splitlines()]
    texts = {d.doc_id: d.text for d in read_corpus("mlirkit/ddtp/multi") if d.doc_id in set(ids)}
    german = [{"id": i, "contents": texts[i], "lang": la} for i, la in zip(ids, langs) if la == "de"]
    alone = tmp_path / "de"
    assert main(["index", "--corpus", str(_write_jsonl(tmp_path / "de.jsonl", german)), "--output", str(alone),
                 "--quiet"]) == 0
    picked = _pick(4)
    with Bm25Searcher(ddtp_index) as merged, Bm25Searcher(alone, fallback_analyzer="standard") as de_index:
        everything, de_only = merged.search(picked, k=600), de_index.search(picked, k=600)
    compared = 0
    for q in picked:
        mine = {d: s for d, s in everything[q.query_id].items() if d.endswith("/de")}
        assert mine.keys() == de_only[q.query_id].keys(), q.query_id
        for d, s in mine.items():
            assert s == pytest.approx(de_only[q.query_id][d], abs=1e-4), (q.query_id, d)
        compared += len(mine)
    assert compared > 50


def ddtp_lang(doc_id: str) -> str:
    return doc_id.rsplit("/", 1)[1]


def test_set_language_picks_the_registry_class(toy_index):
    from mlirkit.lexical.analyzers import ANSERINI_LANGUAGES
    from mlirkit.lexical.java import classes

    searcher = classes().SimpleSearcher(str(toy_index[1]))
    for lang, cls in ANSERINI_LANGUAGES.items():
        searcher.set_language(lang)
        assert searcher.get_analyzer().getClass().getName() == cls, lang
    searcher.close()


def test_language_without_analyzer_is_one_line_exit_2_and_nothing_left(tmp_path, capsys):
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", TOY)
    index = tmp_path / "out" / "index"
    assert run_cli(main, ["index", "--corpus", str(corpus), "--output", str(index), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "document 'vi1', field lang: no Anserini analyzer for language 'vi'" in err, err
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]


def test_search_refuses_query_language_without_analyzer_and_existing_outputs(toy_index, tmp_path, capsys):
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", [r for r in TOY if r["lang"] != "vi"])
    index = tmp_path / "index"
    assert main(["index", "--corpus", str(corpus), "--output", str(index), "--quiet"]) == 0
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\thouse\ten\nq2\tnhà\tvi\n", encoding="utf-8")
    out = tmp_path / "run.trec"
    assert run_cli(main, ["search", "--index", str(index), "--topics", str(topics), "--output", str(out),
                          "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "query 'q2', field lang: no Anserini analyzer for language 'vi'" in err, err
    assert not out.exists()
    # the index built with a fallback reads such queries with it (toy_index: standard)
    assert set(_search(toy_index[1], topics, out)["q2"]) == {"vi1"}
    assert run_cli(main, ["index", "--corpus", str(corpus), "--output", str(index), "--quiet"]) == 2
    assert "exists" in capsys.readouterr().err


def test_a_java_failure_while_writing_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """Lucene failing inside the build (here: the merge step raising a real Java exception) is one line."""
    import mlirkit.lexical.indexer as indexer
    from mlirkit.lexical.java import classes

    def failing_merge(parts, out, threads):
        classes().SimpleSearcher(str(out / "no-such-index"))  # java.lang.IllegalArgumentException

    monkeypatch.setattr(indexer, "_merge", failing_merge)
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", [r for r in TOY if r["lang"] != "vi"])
    assert run_cli(main, ["index", "--corpus", str(corpus), "--output", str(tmp_path / "index"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot write {tmp_path / 'index'}: java.lang.IllegalArgumentException" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]


# ------------------------------------------------------------------ queries of any length, stopwords, bad values
def test_a_long_query_ranks_as_each_language_field_searched_alone(ddtp_index, tmp_path):
    """74+ distinct terms on the 14 language fields pass Lucene's 1,024-clause limit (Anserini ended the whole
    search with 'queryCount = 2 is not equal to completedTaskCount = 1'). A document has one language field,
    so the reference is each field searched alone by Pyserini's LuceneSearcher, the hits merged."""
    from pyserini.search.lucene import LuceneSearcher

    from mlirkit.io.corpus import read_corpus

    ids = set((ddtp_index / "docid").read_text().split())
    words: dict[str, None] = {}
    for d in read_corpus("mlirkit/ddtp/multi"):
        if d.doc_id in ids and d.lang == "en":
            words.update(dict.fromkeys(w for w in d.text.lower().split() if w.isalpha()))
        if len(words) >= 150:
            break
    words = list(words)[:150]
    from mlirkit.lexical import Bm25Searcher

    with Bm25Searcher(ddtp_index) as bm25:
        terms = bm25.terms(bm25._java_analyzer(bm25.analyzer("en")), " ".join(words))
    assert len(terms) * len(json.loads((ddtp_index / "meta.json").read_text())["fields"]) > 1024  # over the limit
    topics = tmp_path / "long.tsv"
    topics.write_text(f"long\t{' '.join(words[:150])}\ten\nshort\tpackage manager\ten\n", encoding="utf-8")
    run = _search(ddtp_index, topics, tmp_path / "long.trec")
    assert len(run["long"]) == 10 and run["short"]
    meta = json.loads((ddtp_index / "meta.json").read_text())
    searcher = LuceneSearcher(str(ddtp_index))
    _pyserini_analyzer(searcher, meta["analyzers"]["en"])
    merged = {}
    for field in meta["fields"].values():
        merged.update({h.docid: h.score for h in searcher.search(" ".join(words[:150]), k=10, fields={field: 1.0})})
    reference = sorted(merged.items(), key=lambda x: (-x[1], x[0]))[:10]
    mine = sorted(run["long"].items(), key=lambda x: (-x[1], x[0]))
    assert [d for d, _ in mine] == [d for d, _ in reference]
    assert [round(s, 4) for _, s in mine] == [round(s, 4) for _, s in reference]


def test_stopword_only_queries_are_counted_and_named(toy_index, tmp_path, capsys):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q-stop\tthe and of\ten\nq-en\thouse\ten\n", encoding="utf-8")
    out = tmp_path / "run.trec"
    assert run_cli(main, ["search", "--index", str(toy_index[1]), "--topics", str(topics), "--output", str(out),
                          "--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["queries_without_terms"] == 1
    assert "1 of 2 queries have no term left after analysis (only stopwords or punctuation)" in captured.err
    assert "'q-stop'" in captured.err
    topics.write_text("q-stop\tthe and of\ten\nq-punct\t, . ;\ten\n", encoding="utf-8")
    from tests.helpers import assert_refused

    (tmp_path / "run.trec").unlink()
    (tmp_path / "run.trec.provenance.json").unlink()
    line = assert_refused(main, ["search", "--index", str(toy_index[1]), "--topics", str(topics), "--output",
                                 str(out), "--quiet"], capsys, tmp_path, "none of the 2 queries has a term left")
    assert "e.g. 'q-punct'" in line or "e.g. 'q-stop'" in line


@pytest.mark.parametrize("args,message", [(["--k1", "-1"], "--k1 -1.0: BM25's k1 must be a finite number >= 0"),
                                          (["--k1", "nan"], "--k1 nan: BM25's k1 must be a finite number >= 0"),
                                          (["--b", "2"], "--b 2.0: BM25's b must be a number in [0, 1]")])
def test_bm25_parameters_out_of_range_are_one_line(toy_index, tmp_path, capsys, args, message):
    from tests.helpers import assert_refused

    (tmp_path / "t.tsv").write_text("q1\thouse\ten\n", encoding="utf-8")
    assert_refused(main, ["search", "--index", str(toy_index[1]), "--topics", str(tmp_path / "t.tsv"), "--output",
                          str(tmp_path / "run.trec"), *args], capsys, tmp_path, message)


def test_an_index_without_its_meta_json_is_refused_not_guessed(toy_index, tmp_path, capsys):
    import shutil

    from tests.helpers import assert_refused

    index = tmp_path / "index"
    shutil.copytree(toy_index[1], index)
    (index / "meta.json").unlink()
    (tmp_path / "t.tsv").write_text("q1\thouse\ten\n", encoding="utf-8")
    argv = ["search", "--index", str(index), "--topics", str(tmp_path / "t.tsv"), "--output", str(tmp_path / "r.trec")]
    assert_refused(main, argv, capsys, tmp_path, "meta.json is missing")
    (index / "docid").unlink()
    (index / "langs").unlink()
    assert_refused(main, argv, capsys, tmp_path, "has no meta.json but mlirkit's language fields (contents_de")


@pytest.mark.parametrize("change,message", [
    ({"analyzers": {"de": "de"}}, "field 'analyzers.de' must be an object, got 'de'"),
    ({"analyzers": {"de": {"analyzer": "klingon"}}}, "field 'analyzers.de.analyzer' must be an analyzer name"),
    ({"fields": {"de": "contents"}}, "field 'fields.de' must be 'contents_de', got 'contents'"),
    ({"fallback_analyzer": 3}, "field 'fallback_analyzer' must be null or a fallback analyzer"),
])
def test_meta_json_fields_of_another_type_are_one_line(toy_index, tmp_path, capsys, change, message):
    import shutil

    from tests.helpers import assert_refused

    index = tmp_path / "index"
    shutil.copytree(toy_index[1], index)
    meta = json.loads((index / "meta.json").read_text())
    (index / "meta.json").write_text(json.dumps({**meta, **change}))
    (tmp_path / "t.tsv").write_text("q1\thouse\ten\n", encoding="utf-8")
    assert_refused(main, ["search", "--index", str(index), "--topics", str(tmp_path / "t.tsv"), "--output",
                          str(tmp_path / "r.trec")], capsys, tmp_path, f"meta.json: {message}")


def _limited(limit: int, argv: list[str]):
    """``python -m mlirkit.lexical ARGV`` in a child whose files may hold at most ``limit`` bytes (ulimit -f)."""
    import resource
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "mlirkit.lexical", *argv], capture_output=True, text=True,
                          timeout=600, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                                                             (limit, resource.RLIM_INFINITY)))


@pytest.mark.parametrize("limit", [0, 600])
def test_overwrite_on_a_full_disk_keeps_the_index_and_says_one_line(tmp_path, limit):
    """A byte-less disk fails before Java starts; one of 600 bytes per file fails inside Lucene's merge, whose
    stack (70 lines from its merge thread) is no longer printed: one line, the old index as it was."""
    from tests.helpers import tree_listing

    corpus = _write_jsonl(tmp_path / "corpus.jsonl", [r for r in TOY if r["lang"] != "vi"])
    index = tmp_path / "index"
    assert main(["index", "--corpus", str(corpus), "--output", str(index), "--quiet"]) == 0
    before = {p: (tmp_path / p).read_bytes() for p in tree_listing(tmp_path) if (tmp_path / p).is_file()}
    done = _limited(limit, ["index", "--corpus", str(corpus), "--output", str(index), "--overwrite", "--quiet"])
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: cannot write {index}: "), done.stderr
    assert "File too large" in done.stderr
    assert {p: (tmp_path / p).read_bytes() for p in tree_listing(tmp_path) if (tmp_path / p).is_file()} == before


def test_a_full_disk_while_anserini_adds_documents_is_one_line_naming_the_index(tmp_path):
    """Enough documents that the file-size limit strikes inside Anserini's addRawDocuments, which counts what Lucene
    took and drops the exception ('see its log above' named a log nobody was shown): one line naming the index
    and the language field, the old index as it was."""
    from tests.helpers import tree_listing

    words = "Häuser Hund Straße Fähre Hafen Dateien Paket Verwaltung Bibliothek Werkzeug".split()
    rows = [{"id": f"de{i}", "contents": " ".join(words[j % len(words)] + str(i * j) for j in range(40)), "lang": "de"}
            for i in range(400)]
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", rows)
    index = tmp_path / "index"
    assert main(["index", "--corpus", str(corpus), "--output", str(index), "--quiet"]) == 0
    before = {p: (tmp_path / p).read_bytes() for p in tree_listing(tmp_path) if (tmp_path / p).is_file()}
    done = _limited(600, ["index", "--corpus", str(corpus), "--output", str(index), "--overwrite", "--quiet"])
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot write {index}: Anserini indexed "), done.stderr
    assert "of 400 documents of the language field contents_de" in done.stderr and "file-size limit" in done.stderr
    assert {p: (tmp_path / p).read_bytes() for p in tree_listing(tmp_path) if (tmp_path / p).is_file()} == before


def test_relative_paths_after_a_change_of_directory(toy_index, tmp_path, monkeypatch):
    """The JVM (booted by ``toy_index``) resolves a relative path against the directory it started in; mlirkit
    hands Java absolute paths, so ``index``/``search`` of relative paths work after ``os.chdir`` (the help
    examples, run in a test after another started the JVM, failed: 'No such file or directory (.../parts)')."""
    monkeypatch.chdir(tmp_path)
    _write_jsonl(tmp_path / "corpus.jsonl", TOY[:4])
    assert main(["index", "--corpus", "corpus.jsonl", "--output", "ix", "--quiet"]) == 0
    (tmp_path / "t.tsv").write_text("q1\thouses\ten\n", encoding="utf-8")
    run = _search("ix", "t.tsv", "run.trec")
    assert next(iter(run["q1"])) == "en1" and sorted(p.name for p in (tmp_path / "ix").iterdir()) != []
