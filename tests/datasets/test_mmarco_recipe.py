"""The SHIFT authors' mMARCO recipe end to end, on synthetic files in the exact upstream layout
(``data/triples.train.ids.small.tsv``, ``data/google/collections/{name}_collection.tsv``,
``data/google/queries/train/{name}_queries.train.tsv``; no header, tab-separated, as mMARCO ships them)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mlirkit.datasets
from mlirkit.datasets import mmarco_pairs
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical

# (qid, pos, neg): (11, 101) twice (one unique pair), passage 101 is also the positive of query 13,
# 103 is missing from the Dutch collection, 104 from the English one (no source row: skipped).
TRIPLES = [("11", "101", "900"), ("11", "101", "901"), ("12", "102", "902"), ("13", "101", "903"),
           ("11", "103", "900"), ("14", "104", "905"), ("15", "105", "906")]
WORDS = {"ar": "alpha", "zh": "beta", "dt": "gamma", "en": "delta", "fr": "epsilon", "de": "zeta", "hi": "eta",
         "id": "theta", "it": "iota", "ja": "kappa", "pt": "lambda", "ru": "mu", "es": "nu", "vi": "xi"}


def passage(lang: str, pid: str) -> str:
    return f"{WORDS[lang]} {lang} passage {pid} about topic {int(pid) % 7}"


def missing(lang: str, pid: str) -> bool:
    return (lang, pid) in {("dt", "103"), ("en", "104")}


def write_upstream(base: Path) -> Path:
    """``base/mmarco`` = a snapshot of the HF repo's files the recipe needs (collection lines in a
    non-sorted order, a broken line, an unneeded passage)."""
    data = base / "mmarco" / "data"
    (data / "google" / "collections").mkdir(parents=True)
    (data / "google" / "queries" / "train").mkdir(parents=True)
    (data / "triples.train.ids.small.tsv").write_text("".join("\t".join(t) + "\n" for t in TRIPLES))
    for lang, name in mmarco_pairs.FILE_NAMES.items():
        pids = ["105", "900", "103", "101", "104", "102", "100"]
        lines = [f"{pid}\t{passage(lang, pid)}" for pid in pids if not missing(lang, pid)]
        lines.insert(2, "broken line without a tab")
        (data / "google" / "collections" / f"{name}_collection.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (data / "google" / "queries" / "train" / f"{name}_queries.train.tsv").write_text(
            "".join(f"{q}\t{lang} query {q}\n" for q in ("11", "12", "13", "14", "15")), encoding="utf-8")
    return base


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRKIT_DATA", str(write_upstream(tmp_path / "data")))
    monkeypatch.setenv("IR_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("MLIRKIT_OFFLINE", "1")
    return tmp_path


def unique_pairs() -> list[tuple[str, str]]:
    return list(dict.fromkeys((q, p) for q, p, _ in TRIPLES))


def test_recipe_rows_are_grouped_per_pair(upstream):
    rows = list(mmarco_pairs.recipe_rows())
    groups: list[str] = []
    for gid, _, _ in rows:
        if not groups or groups[-1] != gid:
            assert gid not in groups, "rows of a group must be contiguous"
            groups.append(gid)
    assert groups == [f"{q}-{p}" for q, p in unique_pairs()]
    assert ("13-101", "dt", passage("dt", "101")) in rows and not any(g == "11-103" and la == "dt" for g, la, _ in rows)
    assert sum(1 for g, _, _ in rows if g == "11-101") == 14
    by_pid = [g for g, _, _ in mmarco_pairs.recipe_rows(weighting="passages")]
    assert list(dict.fromkeys(by_pid)) == ["101", "102", "103", "104", "105"]
    assert list(dict.fromkeys(g for g, _, _ in mmarco_pairs.recipe_rows(limit=2))) == ["11-101", "12-102"]
    assert {la for _, la, _ in mmarco_pairs.recipe_rows(langs=["en", "nl"])} == {"en", "dt"}
    with pytest.raises(MlirkitError, match="weighting"):
        list(mmarco_pairs.recipe_rows(weighting="queries"))


def test_parallel_rows_of_the_multi_id_are_the_recipe(upstream):
    rows = list(mlirkit.datasets.parallel_rows("mlirkit/mmarco-pairs/multi"))
    assert rows == list(mmarco_pairs.recipe_rows())


def recipe_vectors(encoder, weighting: str) -> dict[str, np.ndarray]:
    """The recipe in plain numpy, from the TRIPLES table (not from the code under test)."""
    keys = unique_pairs() if weighting == "pairs" else [(None, p) for p in dict.fromkeys(p for _, p in unique_pairs())]
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for _, pid in keys:
        if missing("en", pid):
            continue
        src = encoder.encode_docs([passage("en", pid)], ["en"]).astype(np.float64)[0]
        for lang in WORDS:
            if lang == "en" or missing(lang, pid):
                continue
            tgt = encoder.encode_docs([passage(lang, pid)], [lang]).astype(np.float64)[0]
            sums[canonical(lang)] = sums.get(canonical(lang), 0.0) + (tgt - src)
            counts[canonical(lang)] = counts.get(canonical(lang), 0) + 1
    return {lang: sums[lang] / counts[lang] for lang in sums}


@pytest.mark.parametrize("alias,weighting", [("mmarco", "pairs"), ("mmarco-passages", "passages")])
def test_shift_fit_pairs_mmarco_equals_numpy_recipe(upstream, tiny_model_dir, tiny_encoder, capsys, alias, weighting):
    from mlirkit.shift.cli import main
    from mlirkit.transforms.io import load_transform

    out = upstream / f"{alias}.safetensors"
    assert main(["fit", "--pairs", alias, "--source-lang", "en", "--encoder", str(tiny_model_dir),
                 "--encoder-class", "hf", "--encoder-option", "max_length=64", "--output", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    n_groups = 5 if weighting == "pairs" else 4  # 104 has no English passage
    assert report["groups_used"] == n_groups and report["skipped_no_source"] == 1
    assert report["pairs"]["nl"] == n_groups - 1 and report["pairs"]["de"] == n_groups
    t = load_transform(out)
    ref = recipe_vectors(tiny_encoder, weighting)
    assert sorted(t.params_) == sorted(ref) and "nl" in t.params_ and "dt" not in t.params_
    for lang, v in ref.items():
        np.testing.assert_allclose(t.params_[lang], v, rtol=1e-5, atol=1e-6)
    # the Dutch vector applies to documents tagged with either code
    embs = np.ones((2, t.dim), dtype=np.float32)
    shifted = t.transform(embs, ["dt", "nl"], "doc")
    np.testing.assert_allclose(shifted[0], 1.0 - t.params_["nl"], rtol=1e-6)
    np.testing.assert_array_equal(shifted[0], shifted[1])


def test_weightings_differ_when_a_passage_has_several_queries(upstream, tiny_encoder):
    a, b = recipe_vectors(tiny_encoder, "pairs"), recipe_vectors(tiny_encoder, "passages")
    assert not np.allclose(a["de"], b["de"])


def test_dcl_reader_consumes_the_recipe(upstream):
    from mlirkit.train.data import read_parallel

    pairs = list(read_parallel("mlirkit/mmarco-pairs/multi", pivot="en"))
    expected = [(passage("en", p), passage(la, p), la) for _, p in unique_pairs() if not missing("en", p)
                for la in sorted(WORDS) if la != "en" and not missing(la, p)]
    assert [(x.src, x.tgt, x.tgt_lang) for x in pairs] == expected
    assert {x.src_lang for x in pairs} == {"en"}
    only_dutch = list(read_parallel("mlirkit/mmarco-pairs/multi/10k", pivot="en", langs=["dt"]))
    assert len(only_dutch) == 4


def test_missing_upstream_file_is_named(upstream):
    (upstream / "data" / "mmarco" / "data" / "google" / "collections" / "dutch_collection.tsv").unlink()
    with pytest.raises(mlirkit.datasets.MissingDataError, match="dutch_collection"):
        list(mmarco_pairs.recipe_rows())
