"""Language codes as BCP 47 tags (mlirkit.base.langs): one canonical case wherever a code enters (readers, index
``langs`` files, transforms, ``.pt`` keys, CLI options, alpha overrides), so comparisons are exact after it;
codes that are no codes (``de\\n``, ``""``, ``English``) are refused where they enter, with file and position."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, canonical, check_lang


@pytest.mark.parametrize("given, expected", [
    ("en", "en"), ("EN", "en"), ("En", "en"), ("zh-Hans", "zh-Hans"), ("zh-hans", "zh-Hans"), ("ZH-HANS", "zh-Hans"),
    ("pt-BR", "pt-BR"), ("pt-br", "pt-BR"), ("PT-br", "pt-BR"), ("sr-latn-rs", "sr-Latn-RS"), ("es-419", "es-419"),
    ("de-1996", "de-1996"), ("yue", "yue"), ("DT", "dt"), ("UND", UNKNOWN), ("Unknown", UNKNOWN),
])
def test_check_lang_gives_the_bcp47_case(given, expected):
    assert check_lang(given, "f:1") == expected


def test_canonical_is_case_and_alias():
    from mlirkit.base.langs import bcp47_case

    assert canonical("EN") == "en" and canonical("DT") == "nl" and canonical("zh-hant") == "zh-Hant"
    assert canonical("und") == canonical("UNKNOWN") == UNKNOWN
    assert canonical(None) is None and canonical("") == ""
    assert bcp47_case("SR-LATN-RS") == "sr-Latn-RS"


@pytest.mark.parametrize("value", ["de\n", "English", "english", "en_US", " en"])
def test_invalid_codes_name_where(value):
    with pytest.raises(MlirkitError, match=r"^file\.tsv:7: invalid language"):
        check_lang(value, "file.tsv:7")


@pytest.mark.parametrize("value", ["", None, "und", "unknown"])
def test_known_refuses_unknown_names(value):
    with pytest.raises(MlirkitError, match=r"^where: (missing|unknown) language"):
        check_lang(value, "where", known=True)


def test_samelang_and_tlr_compare_case_insensitively():
    """``EN`` queries against ``en`` documents: the same figures as all lower case."""
    from mlirkit.eval import evaluate

    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    run = {"q1": {"d1": 3.0, "d4": 2.0, "d2": 1.0}, "q2": {"d4": 2.0, "d3": 1.0}}
    lower = evaluate(qrels, {"r": run}, ["tlr@2", "samelang@2"], significance=None, doc_langs={"d1": "en", "d2": "de", "d3": "zh-hant",
                     "d4": "en"}, query_langs={"q1": "en", "q2": "zh-Hant"})
    mixed = evaluate(qrels, {"r": run}, ["tlr@2", "samelang@2"], significance=None, doc_langs={"d1": "EN", "d2": "DE", "d3": "zh-Hant",
                     "d4": "en"}, query_langs={"q1": "En", "q2": "ZH-HANT"})
    assert lower.to_dict(per_query=True) == mixed.to_dict(per_query=True)
    assert mixed.value("r", "tlr@2") == 0.0 and mixed.value("r", "samelang@2") == 0.75


def test_readers_give_canonical_codes(tmp_path):
    from mlirkit.io.corpus import read_corpus
    from mlirkit.io.doc_langs import read_doc_langs
    from mlirkit.io.topics import read_topics

    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": "t", "lang": la}) + "\n"
                                              for i, la in enumerate(["EN", "zh-hans", "pt-br"])), "utf-8")
    assert [d.lang for d in read_corpus(tmp_path / "c.jsonl")] == ["en", "zh-Hans", "pt-BR"]
    assert read_doc_langs(tmp_path / "c.jsonl") == {"d0": "en", "d1": "zh-Hans", "d2": "pt-BR"}
    (tmp_path / "q.tsv").write_text("q1\thello\tEN\nq2\thi\n", "utf-8")
    assert [q.lang for q in read_topics(tmp_path / "q.tsv", default_lang="ZH-hans")] == ["en", "zh-Hans"]
    (tmp_path / "bad.tsv").write_text("d1\ten\nd2\tEnglish\n", "utf-8")
    with pytest.raises(MlirkitError, match=r"bad\.tsv:2: invalid language 'English'"):
        read_doc_langs(tmp_path / "bad.tsv")


def _index(tmp_path, langs: list[str]):
    import faiss

    d = tmp_path / "index"
    d.mkdir()
    index = faiss.IndexFlatIP(4)
    index.add(np.eye(4, dtype=np.float32)[: len(langs)])
    faiss.write_index(index, str(d / "index"))
    (d / "docid").write_text("".join(f"d{i}\n" for i in range(len(langs))), "utf-8")
    (d / "langs").write_text("".join(f"{la}\n" for la in langs), "utf-8")
    np.save(d / "embeddings.npy", np.eye(4, dtype=np.float32)[: len(langs)])
    return d


def test_index_langs_file_is_canonicalised_and_checked(tmp_path):
    from mlirkit.index import DenseIndex
    from mlirkit.io.doc_langs import read_doc_langs

    d = _index(tmp_path, ["EN", "zh-hans", "de"])
    assert DenseIndex(d).langs == ["en", "zh-Hans", "de"]
    assert read_doc_langs(d) == {"d0": "en", "d1": "zh-Hans", "d2": "de"}
    (d / "langs").write_text("en\nenglish\nde\n", "utf-8")
    with pytest.raises(MlirkitError, match=r"langs:2: invalid language 'english'"):
        DenseIndex(d).langs


def test_an_invalid_langs_file_is_not_carried_into_a_new_index(tmp_path):
    """``shift apply`` on an index whose ``langs`` file holds ``english`` stops; no new index appears."""
    from mlirkit.shift.posthoc import apply_to_index
    from mlirkit.transforms.io import save_transform
    from mlirkit.transforms.shift_transform import ShiftTransform

    d = _index(tmp_path, ["en", "english", "de"])
    t = ShiftTransform.from_tensors({"de": np.full(4, 0.1, np.float32)}, encoder={}, source_lang="en")
    save_transform(t, tmp_path / "t.safetensors")
    with pytest.raises(MlirkitError, match=r"langs:2: invalid language 'english'"):
        apply_to_index(d, t, tmp_path / "out", alpha=1.0)
    assert not (tmp_path / "out").exists()


def test_index_writer_writes_canonical_codes(tmp_path):
    from mlirkit.index import DenseIndex
    from mlirkit.index.writer import IndexWriter

    with IndexWriter(tmp_path / "ix", dim=4, encoder={}, normalized=True) as w:
        w.add(["a", "b"], ["EN", "PT-br"], np.eye(4, dtype=np.float32)[:2])
    assert (tmp_path / "ix" / "langs").read_text("utf-8") == "en\npt-BR\n"
    assert DenseIndex(tmp_path / "ix").langs == ["en", "pt-BR"]
    with pytest.raises(MlirkitError, match=r"document 'c': invalid language 'english'"):
        with IndexWriter(tmp_path / "iy", dim=4, encoder={}, normalized=True) as w:
            w.add(["c"], ["english"], np.eye(4, dtype=np.float32)[:1])
    assert not (tmp_path / "iy").exists()


@pytest.mark.parametrize("key", ["v_de\n", "v_", "v_English", "v_de fr"])
def test_pt_keys_that_are_no_codes_are_refused(tmp_path, key):
    import torch

    from mlirkit.transforms.io import read_shift_pt

    torch.save({"source_lang": "en", key: torch.ones(4), "v_fr": torch.ones(4)}, tmp_path / "v.pt")
    with pytest.raises(MlirkitError, match=r"v\.pt: key "):
        read_shift_pt(tmp_path / "v.pt")


def test_pt_keys_and_source_are_canonical(tmp_path):
    import torch

    from mlirkit.transforms.io import read_shift_pt

    torch.save({"source_lang": "EN", "v_DE": torch.ones(4), "v_zh-hans": torch.ones(4)}, tmp_path / "v.pt")
    _, source, vectors = read_shift_pt(tmp_path / "v.pt")
    assert source == "en" and sorted(vectors) == ["de", "zh-Hans"]
    torch.save({"source_lang": "English", "v_de": torch.ones(4)}, tmp_path / "w.pt")
    with pytest.raises(MlirkitError, match=r"w\.pt: 'source_lang': invalid language 'English'"):
        read_shift_pt(tmp_path / "w.pt")
    torch.save({"source_lang": "en", "v_DE": torch.ones(4), "v_de": torch.ones(4)}, tmp_path / "x.pt")
    with pytest.raises(MlirkitError, match="another key too"):
        read_shift_pt(tmp_path / "x.pt")


def test_transform_languages_are_checked_on_load(tmp_path):
    """A transform file whose source language is ``English`` or whose tensor names ``de\\n`` is refused."""
    from safetensors.numpy import save

    from mlirkit.transforms.io import FORMAT, load_transform

    def write(name, source, tensors):
        meta = {"method": "shift", "encoder": {}, "source_lang": source, "dim": 4, "languages": sorted(tensors)}
        blob = save({f"vector.{k}": np.ones(4, np.float32) for k in tensors},
                    metadata={"format": FORMAT, "format_version": "1", "meta": json.dumps(meta)})
        (tmp_path / name).write_bytes(blob)
        return tmp_path / name

    t = load_transform(write("ok.safetensors", "EN", ["DE", "zh-hant"]))
    assert t.source_lang == "en" and t.languages == ["de", "zh-Hant"]
    with pytest.raises(MlirkitError, match=r"src\.safetensors: metadata field 'source_lang' must be a language code, got 'English'"):
        load_transform(write("src.safetensors", "English", ["de"]))
    with pytest.raises(MlirkitError, match=r"key\.safetensors: metadata field 'languages' must be a list of language codes, got 'de\\n'"):
        load_transform(write("key.safetensors", "en", ["de\n"]))
    with pytest.raises(MlirkitError, match=r"empty\.safetensors: metadata field 'languages' must be a list of language codes, got ''"):
        load_transform(write("empty.safetensors", "en", [""]))


def test_alpha_overrides_are_canonical():
    from mlirkit.transforms.alpha import Alpha

    a = Alpha.from_text("0.5,DE=1.0,dt=0.2")
    assert a.overrides == {"de": 1.0, "nl": 0.2} and a.for_lang("De") == 1.0 and a.for_lang("dt") == 0.2
    with pytest.raises(MlirkitError, match="given twice"):
        Alpha.from_text("0.5,de=1.0,DE=0.3")
    with pytest.raises(MlirkitError, match="invalid language 'english'"):
        Alpha.from_text("0.5,english=1.0")


def test_cli_language_options_are_canonical():
    from mlirkit.search.cli import build_parser

    p = build_parser()
    assert p.parse_args(["--index", "i", "--topics", "t", "--output", "o", "--default-lang", "EN"]).default_lang == "en"
    with pytest.raises(SystemExit) as e:
        p.parse_args(["--index", "i", "--topics", "t", "--output", "o", "--default-lang", "English"])
    assert e.value.code == 2
