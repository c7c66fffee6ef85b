"""``fit --langs``: a comma list is the same as a space list, and every fit path refuses a language its data
does not hold with the languages present and a did-you-mean (the parallel-text fit used to drop it silently)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.cli import run_cli
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import load_transform
from mlirkit.shift.cli import main
from mlirkit.testing.fake_encoder import FakeEncoder
from tests.helpers import fit_from_groups
from mlirkit.transforms.parallel import read_parallel_jsonl

ENC = {"class": "test", "model": "toy"}


def _index(tmp_path):
    from mlirkit.index import IndexWriter

    rng = np.random.default_rng(0)
    langs = [l for l in ("en", "de", "fr", "ja") for _ in range(25)]
    embs = (rng.normal(size=(len(langs), 8)) + np.repeat(np.arange(4), 25)[:, None]).astype(np.float32)
    with IndexWriter(tmp_path / "idx", dim=8, encoder=ENC, normalized=False, save_embeddings=True) as w:
        w.add([f"d{i}" for i in range(len(langs))], langs, embs)
    return tmp_path / "idx"


def test_fit_from_index_comma_list_equals_space_list_and_unknown_is_an_error(tmp_path, capsys):
    idx = _index(tmp_path)
    outs = {}
    for name, langs in (("space", ["de", "fr"]), ("comma", ["de,fr"]), ("mixed", ["de,", " fr"])):
        outs[name] = tmp_path / f"{name}.safetensors"
        assert main(["fit", "--from-index", str(idx), "--source-lang", "en", "--langs", *langs,
                     "--output", str(outs[name])]) == 0
    capsys.readouterr()
    ts = {k: load_transform(v) for k, v in outs.items()}
    assert ts["space"].languages == ["de", "fr"]  # ja left out
    for k in ("comma", "mixed"):
        assert ts[k].languages == ts["space"].languages
        for lang in ts[k].languages:
            np.testing.assert_array_equal(ts[k].params_[lang], ts["space"].params_[lang])
        assert {m: v for m, v in ts[k].meta.items() if m != "created"} == \
            {m: v for m, v in ts["space"].meta.items() if m != "created"}
    for extra in ([], ["--vectors", "corpus"]):  # the mined recipe (default) and corpus vectors
        assert run_cli(main, ["fit", "--from-index", str(idx), "--source-lang", "en", "--langs", "de,xx,kat,jpn",
                              "--output", str(tmp_path / "x.safetensors"), *extra]) == 2
        err = capsys.readouterr().err  # (jpn is ja, present: ISO 639-3 codes meet their two-letter code)
        assert err.startswith(f"error: {idx}: no documents of ka, xx ")
        assert "(languages present: de, en, fr, ja)" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as e:  # argparse's own error
        main(["fit", "--from-index", str(idx), "--source-lang", "en", "--langs", "de,en_US",
              "--output", str(tmp_path / "x.safetensors")])
    assert e.value.code == 2
    assert "invalid language 'en_US'" in capsys.readouterr().err
    assert not (tmp_path / "x.safetensors").exists()


ROWS = [{"id": i, "lang": l, "text": f"{l} text {i}"} for i in ("a", "b") for l in ("en", "de", "fr")]


def _jsonl(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return p


def test_fit_from_parallel_text_refuses_a_language_it_does_not_hold(tmp_path):
    p = _jsonl(tmp_path)
    t, _ = fit_from_groups(FakeEncoder(dim=8), read_parallel_jsonl(p), method="shift", source_lang="en",
                           langs=["de", "fr"])
    assert t.languages == ["de", "fr"]
    with pytest.raises(MlirkitError, match=r"^no parallel text of xx, frr \(did you mean: fr\?\) in .*p\.jsonl "
                                           r"\(languages present: de, en, fr\)$"):
        fit_from_groups(FakeEncoder(dim=8), read_parallel_jsonl(p), method="shift", source_lang="en",
                        langs=["de", "xx", "frr"], source_name=str(p))
    # pt-BR asked for, pt text held: fitted as pt (pt-BR documents use it: mlirkit.base.langs.lookup); fre is fr
    pt = tmp_path / "pt.jsonl"
    pt.write_text("".join(json.dumps({**r, "lang": "pt" if r["lang"] == "de" else r["lang"]}) + "\n" for r in ROWS))
    t, _ = fit_from_groups(FakeEncoder(dim=8), read_parallel_jsonl(pt), method="shift", source_lang="en",
                           langs=["pt-BR", "fre"])
    assert t.languages == ["fr", "pt"] and t.vector_lang("pt-BR") == "pt"
    with pytest.raises(MlirkitError, match=r"no parallel text of ja in .* \(the first 2 ids read\)"):
        fit_from_groups(FakeEncoder(dim=8), read_parallel_jsonl(p), method="shift", source_lang="en",
                        langs=["ja"], max_pairs=1, source_name=str(p))
    # the alias dt names nl's rows, and asking for the source language itself is not an error
    nl = tmp_path / "nl.jsonl"
    nl.write_text("".join(json.dumps({**r, "lang": "nl" if r["lang"] == "de" else r["lang"]}) + "\n" for r in ROWS))
    t, _ = fit_from_groups(FakeEncoder(dim=8), read_parallel_jsonl(nl), method="shift", source_lang="en",
                           langs=["dt", "en"])
    assert t.languages == ["nl"]


def test_import_pt_refuses_a_language_the_file_does_not_hold(tmp_path):
    import torch

    from mlirkit.transforms.import_pt import import_shift_pt

    torch.save({"source_lang": "en", "v_de": torch.ones(4), "v_fr": torch.zeros(4)}, tmp_path / "v.pt")
    t = import_shift_pt(tmp_path / "v.pt", FakeEncoder(dim=4), encoder_name="m", langs=["de", "en"])
    assert t.languages == ["de"]
    with pytest.raises(MlirkitError, match=r"no vectors of xx in .*v\.pt \(languages present: de, fr\)"):
        import_shift_pt(tmp_path / "v.pt", FakeEncoder(dim=4), encoder_name="m", langs=["de", "xx"])
    with pytest.raises(MlirkitError, match="keep no target-language vector"):  # was a StopIteration
        import_shift_pt(tmp_path / "v.pt", FakeEncoder(dim=4), encoder_name="m", langs=["en"])
