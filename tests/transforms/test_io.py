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
    ({"method": ["shift"]}, "metadata field 'method' has the wrong type (list)"),
    ({"encoder": "m"}, "metadata field 'encoder' has the wrong type (str)"),
    ({"source_lang": 1}, "metadata field 'source_lang' has the wrong type (int)"),
    ({"dim": "4"}, "metadata field 'dim' has the wrong type (str)"),
    ({"dim": True}, "metadata field 'dim' has the wrong type (bool)"),
    ({"languages": "de"}, "metadata field 'languages' has the wrong type (str)"),
    ({"languages": [1]}, "metadata field 'languages' must be a list of strings"),
    ({"langid": [1]}, "metadata field 'langid' has the wrong type (list)"),
])
def test_wrong_metadata_types(tmp_path, change, message):
    path = _write(tmp_path / "t.st", {**GOOD, **change})
    with pytest.raises(MlirkitError, match=rf"t\.st: {re.escape(message)}") as info:
        load_transform(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("raw", ["[1, 2]", "{", "[" * 100000, "1" * 5000])
def test_metadata_that_is_not_an_object(tmp_path, raw):
    with pytest.raises(MlirkitError, match=r"t\.st: (metadata must be a JSON object|missing or invalid JSON metadata)"):
        load_transform(_write(tmp_path / "t.st", None, raw))
