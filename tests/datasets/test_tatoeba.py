"""mlirkit/parallel/tatoeba: the bundled LASER Tatoeba pairs, ISO 639-1 codes, one group per pair, and a
fit that estimates each language from its own pairs."""
from __future__ import annotations

import json
from collections import Counter

import ir_datasets
import numpy as np

import mlirkit.datasets  # noqa: F401
from mlirkit.base.iso639 import to_iso639_1
from mlirkit.datasets import parallel_rows, tatoeba
from mlirkit.testing.fake_encoder import FakeEncoder
from tests.helpers import fit_from_groups
from mlirkit.transforms.parallel import open_parallel


def test_codes_are_iso639_1_where_they_exist():
    assert [to_iso639_1(c) for c in ("deu", "cmn", "ara", "nob", "zsm", "swh", "pes", "lvs", "yue", "gsw", "ber")] == \
        ["de", "zh", "ar", "nb", "ms", "sw", "fa", "lv", "yue", "gsw", "ber"]
    assert to_iso639_1("de") == "de" and to_iso639_1("ger") == "de" and to_iso639_1("deu-CH") == "de-CH"
    langs = tatoeba.langs()
    assert len(langs) == len(set(langs)) == 112  # no two files map to one code
    assert sum(len(la) == 2 for la in langs) == 84 and "en" not in langs


def test_rows_are_pairs_grouped_per_language():
    rows = list(parallel_rows("mlirkit/parallel/tatoeba"))
    assert len(rows) == 2 * 88_877
    groups: dict[str, list[tuple[str, str]]] = {}
    for gid, lang, text in rows:
        groups.setdefault(gid, []).append((lang, text))
    assert all(len(g) == 2 and g[0][0] == "en" and gid.split("/")[0] == g[1][0] for gid, g in groups.items())
    per_lang = Counter(gid.split("/")[0] for gid in groups)
    assert per_lang["de"] == 1000 and per_lang["zh"] == 1000 and per_lang["tzl"] == 104 and len(per_lang) == 112
    assert groups["de/0"] == [("en", groups["de/0"][0][1]), ("de", "Maria sagte, sie wisse nicht, wo Tom sei.")]
    ds = ir_datasets.load("mlirkit/parallel/tatoeba")
    first = next(iter(ds.docs_iter()))
    assert (first.doc_id, first.lang, first.group_id) == ("af/0/en", "en", "af/0")


def test_fit_uses_each_languages_own_pairs():
    """V_l = mean over l's pairs of f(text_l) - f(its English): the English differs per language."""
    enc = FakeEncoder()
    groups = open_parallel("mlirkit/parallel/tatoeba", langs=["ar", "de"], source_lang="en")
    t, report = fit_from_groups(enc, groups, method="shift", source_lang="en", langs=["ar", "de"])
    assert t.meta["pairs"] == {"ar": 1000, "de": 1000} and report.skipped_no_target == 88_877 - 2000
    rows = [r for r in parallel_rows("mlirkit/parallel/tatoeba") if r[0].split("/")[0] in ("ar", "de")]
    for lang in ("ar", "de"):
        pairs = [(rows[k][2], rows[k + 1][2]) for k in range(0, len(rows), 2) if rows[k + 1][1] == lang]
        en = enc.encode_docs([e for e, _ in pairs], ["en"] * len(pairs)).astype(np.float64)
        xx = enc.encode_docs([x for _, x in pairs], [lang] * len(pairs)).astype(np.float64)
        np.testing.assert_allclose(t.params_[lang], (xx - en).mean(axis=0), rtol=1e-5, atol=1e-6)


def test_fit_cli_on_tatoeba(tmp_path, tiny_model_dir, capsys):
    from mlirkit.shift.cli import main

    out = tmp_path / "tatoeba.shift"
    assert main(["fit", "--method", "shift", "--pairs", "mlirkit/parallel/tatoeba", "--langs", "tzl", "swg",
                 "--encoder", str(tiny_model_dir), "--encoder-class", "hf", "--encoder-option", "max_length=32",
                 "--source-lang", "en", "--output", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pairs"] == {"swg": 112, "tzl": 104}
