"""Bundled collections: counts, language coverage, splits, disjointness, reproducible build."""
from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from collections import defaultdict

import ir_datasets
import pytest

import mlirkit.datasets
from mlirkit.datasets import bundled, resources
from tests.helpers import REPO

CORE = ("en", "de", "fr", "it", "ja", "ru", "uk", "pl")


def records(rel: str) -> list[dict]:
    with gzip.open(resources.resources_dir() / rel, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_manifest_matches_files():
    man = resources.manifest()
    for rel, entry in man["files"].items():
        recs = records(rel)
        langs = defaultdict(int)
        for r in recs:
            langs[r["lang"]] += 1
        assert entry["records"] == len(recs) and entry["groups"] == len({r["id"] for r in recs})
        assert entry["langs"] == dict(langs)
        assert len({(r["id"], r["lang"]) for r in recs}) == len(recs)  # one record per (id, lang)
        assert not {"pt-BR", "zh-CN"} & set(langs)  # region variants folded to pt, zh
    total = sum(e["bytes"] for e in man["files"].values())
    assert total < 9_000_000


def test_ddtp_benchmark_counts_and_coverage():
    ds = ir_datasets.load("mlirkit/ddtp/en")
    docs = list(ds.docs_iter())
    assert 8_000 <= len(docs) <= 12_000 and len({d.doc_id for d in docs}) == len(docs)
    groups = defaultdict(set)
    for d in docs:
        group, lang = d.doc_id.rsplit("/", 1)
        assert lang == d.lang and d.text.strip() and len(d.text) <= 1000
        groups[group].add(lang)
    assert 800 <= len(groups) and all(set(CORE) <= langs for langs in groups.values())
    for lang in CORE:
        qs = list(ir_datasets.load(f"mlirkit/ddtp/{lang}").queries_iter())
        assert len(qs) == len(groups) and {q.lang for q in qs} == {lang}
    queries = {q.query_id: q for q in ds.queries_iter()}
    qrels = defaultdict(set)
    for r in ds.qrels_iter():
        assert r.relevance == 1
        qrels[r.query_id].add(r.doc_id)
    doc_ids = {d.doc_id for d in docs}
    for qid, q in queries.items():
        group = qid.split("/")[1]
        assert qid not in doc_ids  # never equal to a document id (BEIR/SHIFT drop identical ids)
        assert qrels[qid] == {f"{group}/{la}" for la in groups[group]}  # all versions relevant


def test_ddtp_splits_disjoint_by_group():
    base = {d.doc_id for d in ir_datasets.load("mlirkit/ddtp/de").docs_iter()}
    split_groups = {}
    for split in ("dev", "test"):
        ds = ir_datasets.load(f"mlirkit/ddtp/de/{split}")
        assert {d.doc_id for d in ds.docs_iter()} == base  # the corpus is the whole pool
        split_groups[split] = {q.query_id.split("/")[1] for q in ds.queries_iter()}
        for g in split_groups[split]:
            expected = "dev" if int(hashlib.sha1(f"mlirkit-ddtp-split:{g}".encode()).hexdigest(), 16) % 100 < 30 else "test"
            assert expected == split
    assert not split_groups["dev"] & split_groups["test"]
    all_groups = {q.query_id.split("/")[1] for q in ir_datasets.load("mlirkit/ddtp/de").queries_iter()}
    assert split_groups["dev"] | split_groups["test"] == all_groups
    assert 0.2 < len(split_groups["dev"]) / len(all_groups) < 0.4
    multi = list(ir_datasets.load("mlirkit/ddtp/multi/dev").queries_iter())
    assert {q.query_id.split("/")[1] for q in multi} == split_groups["dev"] and len({q.lang for q in multi}) == 14


def test_parallel_sets():
    bench_groups = {d.doc_id.rsplit("/", 1)[0] for d in ir_datasets.load("mlirkit/ddtp/en").docs_iter()}
    expect = {"ddtp": (1_000, 2_000, CORE), "gettext": (2_000, 5_000, CORE),
              "libreoffice-help": (2_000, 5_000, ("en", "de", "fr", "it", "ja", "ru", "pl"))}
    for name, (lo, hi, must) in expect.items():
        rows = list(mlirkit.datasets.parallel_rows(f"mlirkit/parallel/{name}"))
        by_group = defaultdict(dict)
        for g, lang, text in rows:
            assert text and lang not in by_group[g]
            by_group[g][lang] = text
        assert lo <= len(by_group) <= hi
        assert all("en" in langs and len(langs) >= 2 for langs in by_group.values())
        langs = {lang for _, lang, _ in rows}
        assert set(must) <= langs
        if name != "ddtp":
            assert all(set(must) <= set(v) for v in by_group.values())
        else:
            assert not set(by_group) & bench_groups  # disjoint from the benchmark
        docs = list(ir_datasets.load(f"mlirkit/parallel/{name}").docs_iter())
        assert [(d.group_id, d.lang, d.text) for d in docs] == rows
        assert all(d.doc_id == f"{d.group_id}/{d.lang}" for d in docs)


def test_parallel_ddtp_not_near_duplicate_of_benchmark(shared_data):
    bench = {d.doc_id.rsplit("/", 1)[0] for d in ir_datasets.load("mlirkit/ddtp/en").docs_iter()}
    par = {g for g, _, _ in mlirkit.datasets.parallel_rows("mlirkit/parallel/ddtp")}
    with gzip.open(shared_data / "ddtp" / "descriptions.jsonl.gz", "rt", encoding="utf-8") as f:
        en = {r["id"]: r for r in map(json.loads, f) if r["lang"] == "en"}
    assert all("near_dup_of" not in en[g] and "dup_of" not in en[g] for g in bench | par)
    shorts = {" ".join(en[g]["short"].casefold().split()) for g in bench}
    assert not any(" ".join(en[g]["short"].casefold().split()) in shorts for g in par)


def test_read_corpus_accepts_bundled_id():
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.topics import read_topics

    docs = list(read_corpus("mlirkit/ddtp/uk/test"))
    assert len(docs) == resources.manifest()["files"][bundled.DDTP_FILE]["records"] and docs[0].lang
    topics = read_topics("mlirkit/ddtp/uk/test")
    assert {q.lang for q in topics} == {"uk"}


@pytest.mark.slow
def test_build_is_reproducible(shared_data, tmp_path):
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_bundled.py"), "--data", str(shared_data),
                    "--out", str(tmp_path)], check=True, capture_output=True)
    for rel in [*resources.manifest()["files"], *resources.manifest()["upstream"], "manifest.json"]:
        assert (tmp_path / rel).read_bytes() == (resources.resources_dir() / rel).read_bytes(), rel


def test_bundled_upstream_files_equal_the_shared_files(shared_data):
    """Every member of the bundled XQuAD-R and Tatoeba archives is the shared (upstream) file byte for
    byte, no file is left out, and the manifest's checksums are those of these bytes."""
    from mlirkit.datasets import sources, tatoeba, xquad_r

    expected = {f"xquad-r/{p.name[:-3]}": p for p in (shared_data / "xquad-r").glob("*.json.gz")}
    expected |= {f"tatoeba/{p.name[:-3]}": p for p in (shared_data / "tatoeba").glob("tatoeba.*.gz")}
    assert len(expected) == 11 + 224
    files = xquad_r.files(xquad_r.ALL_LANGS) + tatoeba.files()
    assert {sf.relpath for sf in files} == set(expected)
    got = sources.read_bundled(files)  # (checks each member's MD5 against the manifest)
    members = {**resources.manifest()["upstream"]["xquad-r.tar.xz"]["members"],
               **resources.manifest()["upstream"]["tatoeba.tar.xz"]["members"]}
    for rel, path in expected.items():
        raw = gzip.decompress(path.read_bytes())
        assert got[rel].data == raw, rel
        assert members[rel] == {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(),
                                "md5": hashlib.md5(raw).hexdigest()}


def test_a_changed_bundled_member_is_refused(monkeypatch):
    from mlirkit.base.errors import MlirkitError
    from mlirkit.datasets import sources, xquad_r

    sf = xquad_r.files(("en",))[0]
    real = sources._member_info
    monkeypatch.setattr(sources, "_member_info", lambda a, r: {**real(a, r), "md5": "0" * 32})
    with pytest.raises(MlirkitError, match=r"xquad-r\.tar\.xz: member xquad-r/en\.json is not the file the manifest lists"):
        sources.read_bundled([sf])
