"""transforms/io.py: wrong types in a transform file's metadata are one error naming file and field (issue 13)."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.io import FORMAT, FORMAT_VERSION, load_transform

GOOD = {"method": "shift", "encoder": {"model": "m"}, "source_lang": "en", "dim": 4, "languages": ["de"]}


def _write(path, meta, raw: str | None = None):
    from safetensors.numpy import save

    blob = save({"vector.de": np.ones(4, dtype=np.float32)},
                metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION),
                          "meta": raw if raw is not None else json.dumps(meta)})
    path.write_bytes(blob)
    return path


def test_good_metadata_loads(tmp_path):
    assert load_transform(_write(tmp_path / "t.st", GOOD)).languages == ["de"]


@pytest.mark.parametrize("change, message", [
    ({"method": ["shift"]}, "metadata field 'method' must be a string, got a list"),
    ({"method": "shfit"}, "metadata field 'method': unknown transform method 'shfit' (did you mean: shift"),
    ({"encoder": "m"}, "metadata field 'encoder' must be a JSON object, got a string"),
    ({"source_lang": 1}, "metadata field 'source_lang' must be a language code, got a whole number"),
    ({"source_lang": "English"}, "metadata field 'source_lang' must be a language code, got 'English'"),
    ({"dim": "4"}, "metadata field 'dim' must be a whole number >= 1, got '4'"),
    ({"dim": True}, "metadata field 'dim' must be a whole number >= 1, got True"),
    ({"dim": 0}, "metadata field 'dim' must be a whole number >= 1, got 0"),
    ({"languages": "de"}, "metadata field 'languages' must be a list of language codes, got a string"),
    ({"languages": [1]}, "metadata field 'languages' must be a list of language codes, got 1"),
    ({"langid": [1]}, "metadata field 'langid' must be a JSON object or null, got a list"),
    ({"pairs": [120, 80, 60]}, "metadata field 'pairs' must be null or a JSON object of counts per language, got a list"),
    ({"pairs": {"de": -3}}, "metadata field 'pairs' entry 'de' must be a whole number >= 0 or null, got -3"),
    ({"pairs": {"xx-": 3}}, "metadata field 'pairs' entry 'xx-' must be a language code"),
    ({"rank": 0}, "metadata field 'rank' must be a whole number >= 1 or null, got 0"),
    ({"normalized": "yes"}, "metadata field 'normalized' must be true or false or null, got a string"),
    ({"provenance": {"de": 1}}, "metadata field 'provenance' must map language codes to JSON objects (entry 'de')"),
    ({"missing_languages": {"policy": "fill"}}, "metadata field 'missing_languages' field 'policy' must be one of corpus, keep"),
    ({"derived_from": {"source_lang": 5}}, "metadata field 'derived_from' field 'source_lang' must be a language code"),
])
def test_wrong_metadata_types(tmp_path, change, message):
    path = _write(tmp_path / "t.st", {**GOOD, **change})
    with pytest.raises(MlirkitError, match=rf"t\.st: {re.escape(message)}") as info:
        load_transform(path)
    assert "\n" not in str(info.value)


def test_a_bad_metadata_field_is_one_line_and_exit_2_in_the_cli(tmp_path, capsys):
    """``"pairs": [120, 80, 60]`` made ``shift derive`` crash with an AttributeError; it is refused at load."""
    from mlirkit.base.cli import run_cli
    from mlirkit.shift.cli import main

    path = _write(tmp_path / "t.st", {**GOOD, "languages": ["de"], "pairs": [120, 80, 60]})
    assert run_cli(main, ["derive", "--transform", str(path), "--source-lang", "de", "--output",
                          str(tmp_path / "d.st")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "t.st: metadata field 'pairs' must be null or a JSON object" in err
    assert not (tmp_path / "d.st").exists()


@pytest.mark.parametrize("raw", ["[1, 2]", "{", "[" * 100000, "1" * 5000])
def test_metadata_that_is_not_an_object(tmp_path, raw):
    with pytest.raises(MlirkitError, match=r"t\.st: (metadata must be a JSON object|missing or invalid JSON metadata)"):
        load_transform(_write(tmp_path / "t.st", None, raw))


# ---------------------------------------------------------------- what the method implies
def _projection_file(path, method, left, right, languages=("de", "en")):
    from safetensors.numpy import save

    meta = {"method": method, "encoder": {"model": "m"}, "source_lang": "en", "dim": left.shape[0],
            "languages": list(languages)}
    blob = save({f"{method}.left": np.ascontiguousarray(left, dtype=np.float32),
                 f"{method}.right": np.ascontiguousarray(right, dtype=np.float32)},
                metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION), "meta": json.dumps(meta)})
    path.write_bytes(blob)
    return path


_U = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 2)))[0]


@pytest.mark.parametrize("method", ["lsar", "leace"])
@pytest.mark.parametrize("left, right, message", [
    (_U, _U.T, None),  # an orthogonal projection: loads
    (_U, 1.5 * _U.T, "not a projection"),  # removes 1.5 of each direction: overshoots
    (_U, np.zeros((2, 6)), "not a projection"),
    (_U, _U.T[:1], "must be (d, k) and (k, d)"),
])
def test_a_projection_file_must_hold_a_projection(tmp_path, method, left, right, message):
    path = _projection_file(tmp_path / "p.st", method, left, right)
    if message is None:
        assert load_transform(path).rank_ == 2
        return
    with pytest.raises(MlirkitError, match=re.escape(message)) as info:
        load_transform(path)
    assert "p.st" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("method", ["lsar", "leace"])
@pytest.mark.parametrize("labels", [[0, 1], np.array([0, 1]), [1.0, 2.0]])
def test_fit_refuses_labels_that_are_not_language_tags(method, labels):
    from mlirkit.transforms import TRANSFORMS

    x = np.random.default_rng(0).standard_normal((20, 6)).astype(np.float32)
    langs = [labels[i % 2] for i in range(20)]
    with pytest.raises(MlirkitError, match="languages must be language tags"):
        TRANSFORMS.get(method)(source_lang="en").fit(x, langs)


def test_save_refuses_what_load_would_refuse(tmp_path):
    from mlirkit.transforms import save_transform
    from mlirkit.transforms.lsar import LSARTransform

    x = np.random.default_rng(0).standard_normal((20, 6)).astype(np.float32)
    t = LSARTransform(source_lang="en").fit(x, ["en", "de"] * 10)
    save_transform(t, tmp_path / "ok.st")
    assert load_transform(tmp_path / "ok.st").languages == ["de", "en"]
    t.right_ = 2 * t.right_  # not a projection any more
    with pytest.raises(MlirkitError, match="refusing to write a transform that would not load: .*not a projection"):
        save_transform(t, tmp_path / "bad.st")
    assert not (tmp_path / "bad.st").exists()
