"""Parallel-text readers, streaming fit with an encoder, the fit CLI and the .pt import."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import load_transform
from mlirkit.shift.cli import main
from mlirkit.transforms.fit import fit_from_pairs
from tests.helpers import fit_from_groups
from mlirkit.transforms.parallel import ParallelGroup, group_rows, open_parallel, read_parallel_jsonl, read_pairs_table

ROWS = [
    {"id": "a", "lang": "de", "text": "Hallo Welt"},
    {"id": "a", "lang": "en", "text": "Hello world"},
    {"id": "a", "lang": "fr", "text": "Bonjour le monde"},
    {"id": "b", "lang": "de", "text": "Nur Deutsch"},           # no English row: skipped, counted
    {"id": "c", "lang": "en", "text": "Good morning"},
    {"id": "c", "lang": "fr", "text": "Bonjour"},
    {"id": "d", "lang": "en", "text": "English only"},          # no translation: skipped
]


def write_jsonl(path, rows, gz=False):
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


class FakeEncoder:
    """Deterministic toy encoder: a hash embedding of the text plus a fixed offset per language word."""

    dim = 8
    normalized = False
    fingerprint = {"class": "fake", "model": "fake", "doc_prefix": "passage: ", "normalize": False}

    def __init__(self):
        self.calls = 0
        self.lang_offset = {"en": 0.0, "de": 1.0, "fr": -2.0, "ja": 3.0}

    def encode_docs(self, texts, langs=None, *, batch_size=None, show_progress=False):
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, (t, l) in enumerate(zip(texts, langs)):
            r = np.random.default_rng(abs(hash(t.split("|")[0])) % 2**32)
            out[i] = r.normal(size=self.dim) + self.lang_offset[l]
        return out


def test_read_parallel_jsonl_groups_plain_and_gzip(tmp_path):
    for gz in (False, True):
        p = write_jsonl(tmp_path / f"p{gz}.data", ROWS, gz=gz)
        groups = list(open_parallel(str(p)))
        assert [g.id for g in groups] == ["a", "b", "c", "d"]
        assert groups[0].texts == {"de": "Hallo Welt", "en": "Hello world", "fr": "Bonjour le monde"}


def test_text_field_option(tmp_path):
    p = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "lang": "en", "short": "S", "long": "L"},
                                           {"id": 1, "lang": "de", "short": "K", "long": ""}])
    (g,) = read_parallel_jsonl(p, "short,long")
    assert g.texts == {"en": "S L", "de": "K"}
    with pytest.raises(MlirkitError, match=r"d.jsonl:1: missing text field 'text'.*choose one with text_fields\)"):
        list(read_parallel_jsonl(p))


@pytest.mark.parametrize("lines,msg", [
    (['{"id": "a", "lang": "en", "text": "x"}', "{not json"], ":2: invalid JSON"),
    (['{"lang": "en", "text": "x"}'], ":1: missing field 'id'"),
    (['{"id": "a", "text": "x"}'], ":1: missing field 'lang'"),
    (['{"id": "a", "lang": "en", "text": "x"}', '{"id": "b", "lang": "en", "text": "y"}',
      '{"id": "a", "lang": "de", "text": "z"}'], ":3: rows of id 'a' are not contiguous"),
    (['{"id": "a", "lang": "en", "text": "x"}', '{"id": "a", "lang": "en", "text": "y"}'], ":2: second 'en' row"),
    (['[1, 2]'], ":1: expected a JSON object"),
])
def test_parallel_jsonl_errors_name_file_and_line(tmp_path, lines, msg):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(MlirkitError, match=msg.replace("(", r"\(")):
        list(read_parallel_jsonl(p))


def test_group_rows_tuples_and_objects():
    from mlirkit.io.records import Doc
    groups = list(group_rows([("1", "en", "a"), ("1", "de", "b"), Doc("2", "c", "en")], "src"))
    assert groups == [ParallelGroup("1", {"en": "a", "de": "b"}), ParallelGroup("2", {"en": "c"})]
    with pytest.raises(MlirkitError, match="not contiguous"):
        list(group_rows([("1", "en", "a"), ("2", "en", "b"), ("1", "de", "c")], "src"))


def test_group_rows_canonical_language_codes():
    """Rows from a dataset id (Tatoeba, mMARCO) enter through the canonicaliser like every reader's."""
    groups = list(group_rows([("1", "EN", "a"), ("1", "zh-hans", "b"), ("1", "pt-br", "c")], "src"))
    assert groups == [ParallelGroup("1", {"en": "a", "zh-Hans": "b", "pt-BR": "c"})]
    for bad in ("english", "de\n", ""):
        with pytest.raises(MlirkitError, match="src: id '1'"):
            list(group_rows([("1", "en", "a"), ("1", bad, "b")], "src"))


def test_pairs_table_directory(tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"query_en": ["q1", "q2"], "positive_en": ["p1", "p2"],
                                     "query_dt": ["v1", "v2"], "positive_dt": ["d1", ""],
                                     "positive_ZH": ["z1", "z2"]})
    ds.save_to_disk(str(tmp_path / "pairs"))
    groups = list(open_parallel(str(tmp_path / "pairs")))
    assert groups == [ParallelGroup("0", {"en": "p1", "dt": "d1", "zh": "z1"}), ParallelGroup("1", {"en": "p2", "zh": "z2"})]
    assert list(read_pairs_table(tmp_path / "pairs", ["en", "zh"]))[0].texts == {"en": "p1", "zh": "z1"}


def test_fit_from_groups_streams_skips_and_counts(tmp_path):
    enc = FakeEncoder()
    groups = list(read_parallel_jsonl(write_jsonl(tmp_path / "p.jsonl", ROWS)))
    t, report = fit_from_groups(enc, groups, method="shift", source_lang="en", batch_size=3)
    assert report.skipped_no_source == 1 and report.skipped_no_target == 1 and report.groups_used == 2
    assert t.meta["pairs"] == {"de": 1, "fr": 2}
    # exact: V_l = mean of f(l) - f(en) over ids having both
    e = {(g.id, l): enc.encode_docs([x], [l])[0].astype(np.float64) for g in groups for l, x in g.texts.items()}
    np.testing.assert_allclose(t.params_["de"], e["a", "de"] - e["a", "en"], rtol=1e-6)
    np.testing.assert_allclose(t.params_["fr"], ((e["a", "fr"] - e["a", "en"]) + (e["c", "fr"] - e["c", "en"])) / 2, rtol=1e-6)
    assert t.encoder == enc.fingerprint and t.meta["prefix"] == "passage: " and t.meta["encoded_as"] == "documents"


def test_fit_from_groups_matches_a_fit_on_the_arrays_for_every_method():
    from mlirkit.transforms import CenteringTransform, LIRTransform, ShiftTransform
    enc = FakeEncoder()
    r = np.random.default_rng(0)
    groups = [ParallelGroup(str(i), {l: f"t{i}{l}" for l in ["en", "de", "fr", "ja"] if l == "en" or r.random() < 0.7})
              for i in range(60)]
    used = [g for g in groups if len(g.texts) > 1]
    rows = [(g.id, l, enc.encode_docs([x], [l])[0]) for g in used for l, x in g.texts.items()]
    x, langs, ids = np.stack([r[2] for r in rows]), [r[1] for r in rows], [r[0] for r in rows]
    for method, ref in [("shift", ShiftTransform("en").fit(x, langs, ids)),
                        ("centering", CenteringTransform("en").fit(x, langs)),
                        ("lir", LIRTransform("en", rank=2).fit(x, langs))]:
        t, _ = fit_from_groups(enc, groups, method=method, source_lang="en", batch_size=7, rank=2)
        assert sorted(t.params_) == sorted(ref.params_)
        for lang in ref.params_:
            a, b = t.params_[lang], ref.params_[lang]
            if method == "lir":
                a, b = a.T @ a, b.T @ b
            np.testing.assert_allclose(a, b, atol=1e-5)


def test_fit_langs_and_max_pairs(tmp_path):
    enc = FakeEncoder()
    groups = read_parallel_jsonl(write_jsonl(tmp_path / "p.jsonl", ROWS))
    t, report = fit_from_groups(enc, groups, method="centering", source_lang="en", langs=["fr"], max_pairs=1)
    assert report.groups_used == 1 and t.meta["pairs"] == {"en": 1, "fr": 1}
    with pytest.raises(MlirkitError, match="no usable ids.*without a 'ko' row"):
        fit_from_groups(enc, read_parallel_jsonl(tmp_path / "p.jsonl"), method="shift", source_lang="ko")


def test_fit_from_pairs_equals_the_streaming_fit_of_the_same_source(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", ROWS)
    for method in ("shift", "centering"):
        ref, report = fit_from_groups(FakeEncoder(), read_parallel_jsonl(path), method=method, source_lang="en",
                                      source_name=str(path))
        for pairs in (path, str(path), read_parallel_jsonl(path)):
            t = fit_from_pairs(FakeEncoder(), pairs, method=method, source_lang="en")
            assert sorted(t.params_) == sorted(ref.params_) and t.meta["pairs"] == ref.meta["pairs"]
            for lang in ref.params_:
                np.testing.assert_array_equal(t.params_[lang], ref.params_[lang])
        assert t.meta["fit"]["skipped_no_source"] == report.skipped_no_source == 1
    limited = fit_from_pairs(FakeEncoder(), path, source_lang="en", langs=["fr"], max_pairs=1)
    assert limited.meta["pairs"] == {"fr": 1} and limited.meta["source"] == str(path)


def test_fit_from_pairs_fails_before_loading_the_encoder(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(MlirkitError, match="empty.jsonl: not an aligned JSONL file"):
        fit_from_pairs("no-such-encoder", tmp_path / "empty.jsonl", source_lang="en")
    with pytest.raises(MlirkitError, match="^pairs: no parallel rows"):
        fit_from_pairs("no-such-encoder", [], source_lang="en")
    with pytest.raises(MlirkitError, match="missing.jsonl.* is neither a registered parallel set nor an aligned JSONL"):
        fit_from_pairs("no-such-encoder", tmp_path / "missing.jsonl", source_lang="en")


def test_fit_from_pairs_loads_an_encoder_by_name(tmp_path, tiny_model_dir):
    from mlirkit.encoders import load_encoder

    path = write_jsonl(tmp_path / "p.jsonl", ROWS)
    t = fit_from_pairs(str(tiny_model_dir), path, source_lang="en")
    encoder = load_encoder(str(tiny_model_dir))
    ref, _ = fit_from_groups(encoder, read_parallel_jsonl(path), method="shift", source_lang="en")
    assert t.encoder == encoder.fingerprint and t.meta["encoder_name"] == str(tiny_model_dir)
    for lang in ref.params_:
        np.testing.assert_allclose(t.params_[lang], ref.params_[lang], atol=1e-5)


def _pairs_grouped_by_language(n: int) -> list[dict]:
    """Pair rows as Tatoeba ships them: every de pair, then every fr pair (the English side differs per language)."""
    return [r for lang in ("de", "fr") for i in range(n)
            for r in ({"id": f"{lang}-{i}", "lang": "en", "text": f"english {lang} {i}"},
                      {"id": f"{lang}-{i}", "lang": lang, "text": f"{lang} text {i}"})]


def test_max_pairs_gives_every_language_its_share(tmp_path):
    """--max-pairs N caps each language at N pairs: on rows grouped by language the later languages are
    not starved (they were: the first N ids, all German, were the whole fit)."""
    path = write_jsonl(tmp_path / "grouped.jsonl", _pairs_grouped_by_language(5))
    t, report = fit_from_groups(FakeEncoder(), read_parallel_jsonl(path), method="shift", source_lang="en",
                                max_pairs=3)
    assert t.meta["pairs"] == {"de": 3, "fr": 3} and report.groups_used == 6
    assert report.groups_read == 10  # a file says which languages it holds only when read to its end
    # the vectors are those of the first 3 pairs of each language, computed by hand
    enc = FakeEncoder()
    for lang in ("de", "fr"):
        tgt = enc.encode_docs([f"{lang} text {i}" for i in range(3)], [lang] * 3).astype(np.float64)
        src = enc.encode_docs([f"english {lang} {i}" for i in range(3)], ["en"] * 3).astype(np.float64)
        np.testing.assert_allclose(t.params_[lang], (tgt - src).mean(axis=0), atol=1e-6)
    # languages known in advance (--langs, or a registered set's languages): reading stops once each is full
    _, report = fit_from_groups(FakeEncoder(), read_parallel_jsonl(path), method="shift", source_lang="en",
                                max_pairs=3, source_langs=["en", "de", "fr"])
    assert report.groups_read == 8 and report.pairs == {"de": 3, "fr": 3}  # 5 de ids read, 3 fr
    # an N-way set whose ids hold every language: the first N ids, as before
    t, report = fit_from_groups(FakeEncoder(), read_parallel_jsonl(write_jsonl(tmp_path / "nway.jsonl", ROWS[:3])),
                                method="shift", source_lang="en", max_pairs=1)
    assert report.groups_used == 1 and t.meta["pairs"] == {"de": 1, "fr": 1}


def test_fit_cli_max_pairs_on_rows_grouped_by_language(tmp_path, tiny_model_dir, capsys):
    path = write_jsonl(tmp_path / "grouped.jsonl", _pairs_grouped_by_language(4))
    out = tmp_path / "t.safetensors"
    assert main(["fit", "--pairs", str(path), "--max-pairs", "2", "--encoder", str(tiny_model_dir),
                 "--encoder-class", "hf", "--encoder-option", "max_length=32", "--source-lang", "en", "--output", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == {"de": 2, "fr": 2}
    assert sorted(load_transform(out).params_) == ["de", "fr"]


def test_fit_cli_with_tiny_encoder(tmp_path, tiny_model_dir, capsys):
    p = write_jsonl(tmp_path / "p.jsonl.gz", ROWS, gz=True)
    out = tmp_path / "transforms" / "shift-tiny.bin"
    argv = ["fit", "--method", "shift", "--pairs", str(p), "--encoder", str(tiny_model_dir), "--encoder-class", "hf",
            "--encoder-option", "max_length=32", "--source-lang", "en", "--output", str(out)]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skipped_no_source"] == 1 and report["pairs"] == {"de": 1, "fr": 2}
    t = load_transform(out)
    assert t.method == "shift" and t.meta["pairs"] == {"de": 1, "fr": 2} and t.meta["mlirkit_version"]
    assert t.encoder["model"] and t.meta["normalized"] in (True, False) and "created" in t.meta
    with pytest.raises(MlirkitError, match="already exists"):
        main(argv)
    assert main(argv + ["--overwrite", "--method", "lir", "--rank", "2"]) == 0
    assert load_transform(out).params_["en"].shape[0] == 2


def test_fit_cli_imports_shift_pt(tmp_path, tiny_model_dir, tiny_encoder, capsys):
    import torch
    d = tiny_encoder.dim
    torch.save({"model_name": "intfloat/multilingual-e5-large", "source_lang": "en",
                **{f"v_{l}": torch.full((d,), float(i)) for i, l in enumerate(["ar", "de", "dt"])}}, tmp_path / "v.pt")
    out = tmp_path / "imported"
    args = ["fit", "--pairs", str(tmp_path / "v.pt"), "--encoder", str(tiny_model_dir), "--encoder-class", "hf",
            "--encoder-option", "max_length=64", "--output", str(out)]
    with pytest.raises(MlirkitError, match="made with model 'intfloat/multilingual-e5-large'.*--force"):
        main(args)  # the tiny model is not e5-large
    assert main(args + ["--force"]) == 0
    t = load_transform(out)
    # the authors' v_dt (mMARCO's code for Dutch) is stored under the canonical code nl (mlirkit.langs.ALIASES)
    assert t.method == "shift" and t.source_lang == "en" and t.languages == ["ar", "de", "nl"]
    np.testing.assert_array_equal(t.params_["nl"], np.full(d, 2.0, np.float32))
    np.testing.assert_array_equal(t.vector("dt"), t.params_["nl"])
    assert t.encoder == tiny_encoder.fingerprint
    assert t.meta["imported_from"]["model_name"] == "intfloat/multilingual-e5-large"
    torch.save({"model_name": "m", "source_lang": "en", "v_de": torch.ones(d + 1)}, tmp_path / "w.pt")
    with pytest.raises(MlirkitError, match="-d vectors but encoder"):
        main(["fit", "--pairs", str(tmp_path / "w.pt"), "--encoder", str(tiny_model_dir), "--encoder-class", "hf",
              "--output", str(tmp_path / "w")])
    with pytest.raises(MlirkitError, match="source language 'en', not 'zh'"):
        main(args[:-1] + [str(tmp_path / "x"), "--source-lang", "zh", "--force"])


def test_cli_errors_exit_2(tmp_path, capsys):
    from mlirkit.base.cli import run_cli
    assert run_cli(main, ["inspect", str(tmp_path / "nope")]) == 2
    assert "no such transform file" in capsys.readouterr().err


def test_fit_cli_bad_input_fails_before_loading_model(tmp_path, monkeypatch):
    import mlirkit.encoders.options as options

    def boom(*a, **k):
        raise AssertionError("the encoder must not be loaded for bad input")
    monkeypatch.setattr(options, "encoder_from_args", boom)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "lang": "en"}\n')
    with pytest.raises(MlirkitError, match="bad.jsonl:1: missing text field"):
        main(["fit", "--pairs", str(bad), "--source-lang", "en", "--output", str(tmp_path / "o")])
    empty = tmp_path / "empty.jsonl.gz"
    empty.write_bytes(gzip.compress(b"\n"))
    with pytest.raises(MlirkitError, match="no parallel rows"):
        main(["fit", "--pairs", str(empty), "--source-lang", "en", "--output", str(tmp_path / "o")])
    with pytest.raises(MlirkitError, match="--source-lang"):
        main(["fit", "--pairs", str(empty), "--output", str(tmp_path / "o")])


def test_parallel_languages_known_without_reading(tmp_path):
    from mlirkit.transforms.parallel import parallel_languages

    langs = parallel_languages("mlirkit/parallel/gettext")
    assert langs is not None and "en" in langs and "ko" not in langs  # gettext has no Korean
    assert "nl" in parallel_languages("mmarco") and "dt" not in parallel_languages("mmarco")  # canonical codes
    assert parallel_languages(str(write_jsonl(tmp_path / "p.jsonl", ROWS))) is None  # a file: only reading tells
