"""The searcher a run came from, rebuilt from its provenance sidecar (mlirkit.search.replay): it scores as
the search did (plain and with the query-time shift), and everything that would make it score otherwise is
one error naming the run; and ``python -m mlirkit.eval --mrc-from-index`` on a shallow run gives the MRC@k
of a run of the whole corpus."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError

WORDS = ["ferry", "package", "file", "river", "window", "garden", "engine", "letter"]
FORMS = {"en": ("the", "is here"), "de": ("der", "ist hier"), "fr": ("le", "est ici")}


@pytest.fixture(scope="module")
def bed(tiny_encoder, tiny_model_dir, tmp_path_factory):
    """An index of 24 documents (8 words x en/de/fr) with embeddings, a shift file, topics whose questions
    are asked in the three languages (group_id), their qrels."""
    from mlirkit.encode import Indexer
    from mlirkit.io.records import Doc
    from mlirkit.transforms import save_transform
    from mlirkit.transforms.parallel import ParallelGroup
    from tests.helpers import fit_from_groups

    d = tmp_path_factory.mktemp("replay")
    groups = [ParallelGroup(str(i), {la: f"{pre} {w} {post}" for la, (pre, post) in FORMS.items()})
              for i, w in enumerate(WORDS[:5])]
    shift, _ = fit_from_groups(tiny_encoder, groups, method="shift", source_lang="en")
    save_transform(shift, d / "shift.safetensors")
    docs = [Doc(f"{w}-{la}", f"{pre} {w} {post}", la) for w in WORDS for la, (pre, post) in FORMS.items()]
    Indexer(d / "index", tiny_encoder, save_embeddings=True, show_progress=False, encoder_name=str(tiny_model_dir),
            encoder_options={"encoder_class": "hf", "max_length": 64}).index(docs)
    queries = {"en": "where is the {}", "de": "wo ist der {}", "fr": "où est le {}"}
    rows = [{"_id": f"{la}_{i}", "text": text.format(w), "lang": la, "group_id": str(i)}
            for i, w in enumerate(WORDS[:6]) for la, text in queries.items()]
    (d / "topics.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (d / "qrels.txt").write_text("".join(f"{r['_id']} 0 {WORDS[int(r['group_id'])]}-{la} 1\n"
                                         for r in rows for la in FORMS))
    return d


def _search(bed, out, hits, *extra):
    from mlirkit.search.cli import main

    assert main(["--index", str(bed / "index"), "--topics", str(bed / "topics.jsonl"), "--output", str(out),
                 "--hits", str(hits), "--quiet", *extra]) == 0
    return out


def _mrc(bed, run, capsys, *extra, metric="mrc@3"):
    from mlirkit.eval.cli import main

    report = run.with_suffix(".json")
    assert main(["--qrels", str(bed / "qrels.txt"), "--runs", str(run), "--metrics", "ndcg@10", metric,
                 "--topics", str(bed / "topics.jsonl"), "--output", str(report), "--per-query", "--overwrite",
                 "--quiet", *extra]) == 0
    capsys.readouterr()
    return json.loads(report.read_text())["_per_query"][run.stem][metric]


SHIFT = ["--query-shift", "cosine", "--alpha", "0.5"]


@pytest.mark.parametrize("shift", [None, "0.5", "0.7,de=1"], ids=["plain", "query-shift", "query-shift-per-language"])
def test_a_shallow_run_with_mrc_from_index_equals_a_run_of_the_whole_corpus(bed, tmp_path, capsys, shift):
    from mlirkit.base.cli import run_cli
    from mlirkit.eval.cli import main

    extra = [] if shift is None else ["--transform", str(bed / "shift.safetensors"), "--alpha", shift]
    deep = _search(bed, tmp_path / "deep.trec", 24, *extra)
    shallow = _search(bed, tmp_path / "shallow.trec", 2, *extra)
    want = _mrc(bed, deep, capsys)
    assert len(want) == 18 and len(set(np.round(list(want.values()), 6))) > 2  # varied values, all counted
    # without the flag a shallow run is refused, and the line names the flag
    code = run_cli(main, ["--qrels", str(bed / "qrels.txt"), "--runs", str(shallow), "--metrics", "mrc@3",
                          "--topics", str(bed / "topics.jsonl"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--mrc-from-index" in err and len(err.strip().splitlines()) == 1
    got = _mrc(bed, shallow, capsys, "--mrc-from-index")
    assert got == pytest.approx(want, abs=1e-9)


def test_the_replayed_searcher_scores_as_the_run(bed, tmp_path):
    from mlirkit.io.trec import read_run
    from mlirkit.io.topics import read_topics
    from mlirkit.search.replay import searcher_for_run

    run_path = _search(bed, tmp_path / "run.trec", 5, *SHIFT, "--transform", str(bed / "shift.safetensors"))
    searcher = searcher_for_run(run_path)
    assert searcher.shift is not None and searcher.shift_settings["alpha"] == 0.5
    replayed = searcher.search(read_topics(bed / "topics.jsonl"), k=5)
    run = read_run(run_path)
    for qid, hits in replayed.items():
        assert [h.doc_id for h in hits] == sorted(run[qid], key=lambda d: (-run[qid][d], d))
        np.testing.assert_allclose([h.score for h in hits], [run[qid][h.doc_id] for h in hits], atol=1e-6)


def test_what_would_score_otherwise_is_refused_in_one_line(bed, tmp_path, capsys, tiny_model_dir):
    import shutil

    from mlirkit.eval.cli import main
    from tests.helpers import assert_refused

    def refused(run, message, topics=bed / "topics.jsonl"):
        assert_refused(main, ["--qrels", str(bed / "qrels.txt"), "--runs", str(run), "--metrics", "mrc@3",
                              "--topics", str(topics), "--mrc-from-index", "--quiet"], capsys, tmp_path, message)

    run = _search(bed, tmp_path / "run.trec", 2)
    # other query texts under the same ids: the run's scores are not the index's for these topics
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"_id": "en_0", "text": "the engine", "lang": "en", "group_id": "0"}) + "\n"
                     + (bed / "topics.jsonl").read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    refused(run, "was not searched with these topics in this index", other)
    # searched with other encoder options than the index's meta.json holds
    odd = _search(bed, tmp_path / "odd.trec", 2, "--encoder", str(tiny_model_dir), "--encoder-class", "hf",
                  "--encoder-option", "max_length=8", "--force")
    capsys.readouterr()  # the search's own warning about --force
    refused(odd, "the index's meta.json rebuilds")
    # no mrc metric, no topics
    from mlirkit.base.cli import run_cli

    for argv, message in ((["--metrics", "ndcg@10", "--topics", str(bed / "topics.jsonl")], "add one to --metrics"),
                          (["--metrics", "mrc@3", "--query-groups", "strip-lang"], "give --topics")):
        assert run_cli(main, ["--qrels", str(bed / "qrels.txt"), "--runs", str(run), "--mrc-from-index",
                              "--quiet", *argv]) == 2
        assert message in capsys.readouterr().err
    # the sidecar replaced by another run's bytes, or gone
    sidecar = tmp_path / "run.trec.provenance.json"
    kept = sidecar.read_bytes()
    shutil.copy(tmp_path / "odd.trec.provenance.json", sidecar)
    refused(run, "was written for other bytes")
    sidecar.unlink()
    refused(run, "no provenance sidecar")
    sidecar.write_bytes(kept)
    # a query-time shift whose settings the sidecar does not hold (the Pyserini wrapper, an earlier mlirkit)
    shifted = _search(bed, tmp_path / "shifted.trec", 2, *SHIFT, "--transform", str(bed / "shift.safetensors"))
    record = json.loads((tmp_path / "shifted.trec.provenance.json").read_text())
    del record["query_shift"]["settings"]
    (tmp_path / "shifted.trec.provenance.json").write_text(json.dumps(record))
    refused(shifted, "whose settings its provenance does not record")
    # the query-time shift's transform file gone
    shutil.copy(bed / "shift.safetensors", tmp_path / "gone.safetensors")
    gone = _search(bed, tmp_path / "gone.trec", 2, *SHIFT, "--transform", str(tmp_path / "gone.safetensors"))
    (tmp_path / "gone.safetensors").unlink()
    refused(gone, "gone.safetensors is not there")
    # the index changed since the search
    copy = tmp_path / "index-copy"
    shutil.copytree(bed / "index", copy)
    from mlirkit.search.cli import main as search

    assert search(["--index", str(copy), "--topics", str(bed / "topics.jsonl"), "--output",
                   str(tmp_path / "copy.trec"), "--hits", "2", "--quiet"]) == 0
    meta = json.loads((copy / "meta.json").read_text())
    (copy / "meta.json").write_text(json.dumps({**meta, "note": "edited"}))
    refused(tmp_path / "copy.trec", "changed since the run was searched")
    shutil.rmtree(copy)
    refused(tmp_path / "copy.trec", "is not there")


def test_a_fused_or_bm25_run_is_refused(bed, tmp_path):
    from mlirkit.io.trec import write_run
    from mlirkit.search.replay import searcher_for_run

    write_run({"en_0": {"ferry-en": 1.0}}, tmp_path / "fused.trec", "fused", provenance={"fusion": {
        "method": "rrf", "norm": "rank", "params": {}, "keep_languages": False}})
    with pytest.raises(MlirkitError, match="names no index"):
        searcher_for_run(tmp_path / "fused.trec")
    from mlirkit.index.reader import index_provenance

    write_run({"en_0": {"ferry-en": 1.0}}, tmp_path / "bm25.trec", "bm25", provenance={
        "index": index_provenance(bed / "index"), "bm25": {"k1": 0.9, "b": 0.4, "statistics": "pooled"}})
    with pytest.raises(MlirkitError, match="a BM25 run"):
        searcher_for_run(tmp_path / "bm25.trec")


def test_a_sharded_index_is_scored_in_docid_order(bed, tiny_encoder, tiny_model_dir, tmp_path, capsys):
    """Two shards searched as one: their vectors are concatenated in the order of the docids."""
    from mlirkit.encode import Indexer
    from mlirkit.index import DenseIndex
    from mlirkit.io.records import Doc
    from mlirkit.search.cli import main as search

    whole = DenseIndex(bed / "index")
    docs = [Doc(d, f"{FORMS[la][0]} {d.split('-')[0]} {FORMS[la][1]}", la) for d, la in zip(whole.docids, whole.langs)]
    for i, part in enumerate((docs[1::2], docs[::2])):  # interleaved: a shard is not a prefix of the docid order
        Indexer(tmp_path / f"shard-{i}", tiny_encoder, show_progress=False, encoder_name=str(tiny_model_dir),
                encoder_options={"encoder_class": "hf", "max_length": 64}).index(part)
    runs = {}
    for name, hits in (("deep", 24), ("shallow", 2)):
        assert search(["--index", str(tmp_path / "shard-0"), str(tmp_path / "shard-1"), "--topics",
                       str(bed / "topics.jsonl"), "--output", str(tmp_path / f"{name}.trec"), "--hits", str(hits),
                       "--quiet"]) == 0
        runs[name] = tmp_path / f"{name}.trec"
    want = _mrc(bed, runs["deep"], capsys)
    assert _mrc(bed, runs["shallow"], capsys, "--mrc-from-index") == pytest.approx(want, abs=1e-9)
    assert want == pytest.approx(_mrc(bed, _search(bed, tmp_path / "one.trec", 24), capsys), abs=1e-9)


def _sidecar(run):
    return run.parent / f"{run.name}.provenance.json"


@pytest.mark.parametrize("forge", ["missing", "forged"])
def test_a_run_pointed_at_another_index_is_refused(bed, tiny_encoder, tiny_model_dir, tmp_path, capsys, forge):
    """A run of an index of some of the bed's documents, its sidecar pointed at the whole bed's index: every
    score the run holds is right there, but documents it never saw would rank in its top k."""
    from mlirkit.encode import Indexer
    from mlirkit.eval.cli import main
    from mlirkit.io.files import file_sha256
    from mlirkit.io.records import Doc
    from tests.helpers import assert_refused

    docs = [Doc(f"{w}-{la}", f"{pre} {w} {post}", la) for w in WORDS for la, (pre, post) in FORMS.items() if la != "de"]
    Indexer(tmp_path / "part", tiny_encoder, save_embeddings=True, show_progress=False, encoder_name=str(tiny_model_dir),
            encoder_options={"encoder_class": "hf", "max_length": 64}).index(docs)
    from mlirkit.search.cli import main as search

    run = tmp_path / "part.trec"
    assert search(["--index", str(tmp_path / "part"), "--topics", str(bed / "topics.jsonl"), "--output", str(run),
                   "--hits", "3", "--quiet"]) == 0
    record = json.loads(_sidecar(run).read_text())
    record["index"]["path"] = str(bed / "index")
    if forge == "missing":
        del record["index"]["meta_sha256"]
    else:
        record["index"]["meta_sha256"] = file_sha256(bed / "index" / "meta.json")
    _sidecar(run).write_text(json.dumps(record))
    message = "records no meta_sha256" if forge == "missing" else "the run was not searched in this index"
    assert_refused(main, ["--qrels", str(bed / "qrels.txt"), "--runs", str(run), "--metrics", "mrc@3",
                          "--topics", str(bed / "topics.jsonl"), "--mrc-from-index", "--quiet"], capsys, tmp_path,
                   message)


def test_a_sidecar_naming_a_device_is_not_read(bed, tmp_path, capsys):
    from mlirkit.eval.cli import main
    from tests.helpers import assert_refused

    run = _search(bed, tmp_path / "run.trec", 2, *SHIFT, "--transform", str(bed / "shift.safetensors"))
    record = json.loads(_sidecar(run).read_text())
    record["query_shift"]["settings"]["transform"] = "/dev/zero"
    _sidecar(run).write_text(json.dumps(record))
    assert_refused(main, ["--qrels", str(bed / "qrels.txt"), "--runs", str(run), "--metrics", "mrc@3",
                          "--topics", str(bed / "topics.jsonl"), "--mrc-from-index", "--quiet"], capsys, tmp_path,
                   "/dev/zero, which is not a regular file")
