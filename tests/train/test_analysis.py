"""Figure 3 of the DCL paper: base / semantic / language components and their projection plot."""
from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.helpers import no_dropout  # noqa: E402
from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.encoders.dcl_model import DisentangledEncoder  # noqa: E402
from mlirkit.eval.plots import plot_projection_panels  # noqa: E402
from mlirkit.train.analysis import dcl_components, plot_dcl_components  # noqa: E402
from mlirkit.train.feature_cache import TextInput, build_feature_cache  # noqa: E402


def test_components_cached_equal_uncached_and_heads_apply(tiny_model_dir, tmp_path):
    model = DisentangledEncoder.from_backbone(str(tiny_model_dir), head_dim=8, doc_prefix="passage: ", max_length=32, seed=0)
    no_dropout(model)
    texts = ["hello world", "Hallo Welt", "bonjour le monde", "こんにちは世界"]
    direct = dcl_components(model, texts)
    assert set(direct) == {"base", "semantic", "language"}
    assert direct["base"].shape == (4, 32) and direct["language"].shape == (4, 8)
    w_l = model.language.weight.detach().numpy()
    np.testing.assert_allclose(direct["language"], direct["base"] @ w_l.T, rtol=1e-5, atol=1e-6)
    cache = build_feature_cache(model, [TextInput(t, "passage: ", 32) for t in texts], tmp_path, layer=1,
                                dtype="float32")
    cached = dcl_components(model, texts, cache=cache)
    for k in direct:
        np.testing.assert_allclose(cached[k], direct[k], rtol=1e-4, atol=1e-5)
    plain = DisentangledEncoder.from_backbone(str(tiny_model_dir), use_disentangler=False, max_length=32)
    assert set(dcl_components(plain, texts)) == {"base"}


def test_projection_panels_show_the_language_head(tmp_path):
    rng = np.random.default_rng(0)
    langs = ["en"] * 40 + ["de"] * 40 + ["ja"] * 40
    lang_dir = np.repeat(np.eye(3) * 4.0, 40, axis=0)
    comps = {"base": np.concatenate([rng.normal(size=(120, 5)), lang_dir], 1),
             "semantic": rng.normal(size=(120, 6)), "language": lang_dir + 0.1 * rng.normal(size=(120, 3))}
    paths = plot_dcl_components(comps, langs, tmp_path / "fig3", max_points=100,
                                extra=[("untrained", rng.normal(size=(120, 4)))])
    assert paths[0].read_bytes()[:4] == b"\x89PNG" and paths[1].suffix == ".svg"
    with pytest.raises(MlirkitError, match="do not match"):
        plot_projection_panels([("a", np.zeros((3, 2)))], ["en"] * 4, tmp_path / "x")
    with pytest.raises(MlirkitError, match="no panels"):
        plot_projection_panels([], [], tmp_path / "x")
