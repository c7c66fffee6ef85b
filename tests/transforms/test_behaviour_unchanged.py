"""SHIFT, centering and LIR give the vectors they gave before they became estimators, bit for bit, on real
e5-small embeddings of the bundled XQuAD-R and DDTP data; files written by that code still load and give
the same vectors (tests/transforms/data/README.md)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from mlirkit.transforms import (CenteringTransform, LIRTransform, ShiftTransform, derive_source, load_transform)
from mlirkit.transforms.hybrid import fill_missing_from_corpus

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "before-digests.json").read_text())
ALPHAS = {"1": 1.0, "0.6": 0.6, "mixed": {"*": 0.6, "de": 1.2, "en": 0.4}}


def fixture(name: str):
    with safe_open(str(DATA / f"{name}-e5.safetensors"), "np") as f:
        m = f.metadata()
        return (f.get_tensor("embeddings").astype(np.float32), json.loads(m["langs"]), json.loads(m["groups"]),
                json.loads(m["encoder"]))


def digest(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    return f"{a.dtype}{list(a.shape)}:" + hashlib.sha256(a.tobytes()).hexdigest()


def outputs(t, x, langs) -> dict[str, str]:
    out = {"params": {la: digest(v) for la, v in t.params_.items()}}
    for side in t.sides:
        for name, alpha in ALPHAS.items():
            if isinstance(alpha, dict) and any(k not in t.params_ and k not in ("*", t.source_lang) for k in alpha):
                continue
            out[f"{side}@{name}"] = digest(t.transform(x, langs, side, alpha))
    return out


def fitted(name: str) -> dict[str, object]:
    x, langs, groups, fp = fixture(name)
    ts = {"shift": ShiftTransform("en").fit(x, langs, groups),
          "centering": CenteringTransform("en").fit(x, langs, groups),
          "lir": LIRTransform("en", rank=1).fit(x, langs, groups),
          "lir2": LIRTransform("en", rank=2).fit(x, langs, groups)}
    ts["shift-de"] = derive_source(ts["shift"], "de")
    if name == "xquad-r":
        ts["corpus"] = ShiftTransform("en", vectors="corpus").fit(x, langs)
        ts["mined"] = ShiftTransform("en", vectors="mined").fit(x, langs)
        part = [i for i, la in enumerate(langs) if la in ("en", "de", "es", "ru", "zh")]
        partial = ShiftTransform("en").fit(x[part], [langs[i] for i in part], [groups[i] for i in part])
        ts["filled"] = fill_missing_from_corpus(partial, x, langs)
    return ts


@pytest.mark.parametrize("name", ["xquad-r", "ddtp"])
def test_the_estimators_give_the_vectors_of_before_bit_for_bit(name):
    x, langs, _, _ = fixture(name)
    for key, t in fitted(name).items():
        assert outputs(t, x, langs) == REFERENCE[f"{name}-{key}"], key


@pytest.mark.parametrize("path", sorted((DATA / "before").glob("*.safetensors")), ids=lambda p: p.stem)
def test_files_written_before_load_and_give_the_same_vectors(path):
    name = "ddtp" if path.stem.startswith("ddtp") else "xquad-r"
    x, langs, _, fp = fixture(name)
    t = load_transform(path)
    assert t.encoder == fp and t.source_lang == ("de" if path.stem.endswith("-de") else "en")
    assert outputs(t, x, langs) == REFERENCE[path.stem]
