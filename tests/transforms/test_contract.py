"""The estimator contract every registered transform method keeps (as scikit-learn's ``check_estimator``): the
constructor stores the recipe, ``fit`` learns from arrays and returns the estimator, ``partial_fit`` in blocks
gives the fit, ``transform`` is row-wise (bit-identical however the rows are split), leaves its input alone and
the sides it does not touch unchanged, and files round-trip exactly. A method added to
``mlirkit.transforms.registry.TRANSFORMS`` is checked here with nothing else to do."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import TRANSFORMS, LanguageTransform, NotFittedError, load_transform, save_transform
from mlirkit.transforms.registry import METHODS

LANGS = ("en", "de", "fr", "ja")


def data(seed: int = 0, groups: int = 40, d: int = 16):
    """``groups`` translation groups in 4 languages (some missing), each language its own offset."""
    rng = np.random.default_rng(seed)
    offsets = {la: 2.0 * rng.normal(size=d) for la in LANGS}
    x, langs, ids = [], [], []
    for g in range(groups):
        topic = rng.normal(size=d)
        for la in LANGS:
            if la != "en" and rng.random() < 0.2:
                continue
            x.append(topic + offsets[la] + 0.1 * rng.normal(size=d))
            langs.append(la)
            ids.append(g)
    return np.asarray(x, dtype=np.float32), langs, ids


def fitted(method: str, seed: int = 0) -> LanguageTransform:
    x, langs, ids = data(seed)
    t = TRANSFORMS.get(method)("en")
    return t.fit(x, langs, ids if t.needs_groups else None)


@pytest.fixture(params=list(METHODS))
def method(request) -> str:
    return request.param


def test_every_product_method_is_registered_by_its_name(method):
    cls = TRANSFORMS.get(method)
    assert issubclass(cls, LanguageTransform) and cls.method == method
    assert len({TRANSFORMS.get(m).tensor_prefix for m in METHODS}) == len(METHODS)  # one file format per method


def test_the_constructor_stores_the_recipe_and_nothing_is_learned(method):
    cls = TRANSFORMS.get(method)
    t = cls("de")
    params = t.get_params()
    assert params["source_lang"] == "de" and cls(**params).get_params() == params
    assert repr(t).startswith(f"{cls.__name__}(source_lang='de'")
    x, langs, _ = data()
    with pytest.raises(NotFittedError, match="not fitted"):
        t.transform(x, langs, t.sides[0])
    with pytest.raises(NotFittedError):
        t.languages  # noqa: B018
    with pytest.raises(MlirkitError):  # a bad recipe is stored as given, and refused by fit
        cls("English").fit(x, langs, _)


def test_fit_returns_the_estimator_learns_from_arrays_and_a_refit_starts_afresh(method):
    x, langs, ids = data()
    t = TRANSFORMS.get(method)("en")
    if t.needs_groups:
        with pytest.raises(MlirkitError, match="needs groups"):
            t.fit(x, langs)
    assert t.fit(x, langs, ids if t.needs_groups else None) is t
    first = t.transform(x, langs, "doc" if "doc" in t.sides else "query")
    x2, langs2, ids2 = data(seed=1)
    t.fit(x2, langs2, ids2 if t.needs_groups else None)
    fresh = fitted(method, seed=1)
    side = "doc" if "doc" in t.sides else "query"
    assert t.transform(x, langs, side).tobytes() == fresh.transform(x, langs, side).tobytes()
    assert t.transform(x, langs, side).tobytes() != first.tobytes()
    with pytest.raises(MlirkitError, match="languages for"):
        TRANSFORMS.get(method)("en").fit(x, langs[:-1], ids[:-1] if t.needs_groups else None)
    with pytest.raises(MlirkitError, match="NaN or inf"):
        bad = x.copy()
        bad[0, 0] = np.nan
        TRANSFORMS.get(method)("en").fit(bad, langs, ids)


def test_partial_fit_in_blocks_gives_the_fit(method):
    x, langs, ids = data()
    whole = fitted(method)
    t = TRANSFORMS.get(method)("en")
    blocks = np.flatnonzero(np.diff(ids)) + 1  # cut between groups (a group's rows come in one call)
    for a, b in zip([0, *blocks[::7]], [*blocks[::7], len(ids)]):
        t.partial_fit(x[a:b], langs[a:b], ids[a:b] if t.needs_groups else None)
    side = t.sides[0]
    np.testing.assert_allclose(t.transform(x, langs, side), whole.transform(x, langs, side), atol=1e-5)
    assert t.languages == whole.languages


def test_transform_is_row_wise_leaves_its_input_alone_and_untouched_sides_unchanged(method):
    x, langs, _ = data()
    langs = [*langs[:-3], "und", "", "ko"]  # unknown languages and one never fitted
    t = fitted(method)
    for side in ("doc", "query"):
        before = x.copy()
        out = t.transform(x, langs, side, 0.7)
        assert out.dtype == np.float32 and out.shape == x.shape and x.tobytes() == before.tobytes()
        if side not in t.sides:
            assert out.tobytes() == x.tobytes()
            continue
        assert not np.array_equal(out, x)
        parts = np.concatenate([t.transform(x[a:a + 13], langs[a:a + 13], side, 0.7) for a in range(0, len(x), 13)])
        single = np.concatenate([t.transform(x[i:i + 1], langs[i:i + 1], side, 0.7) for i in range(len(x))])
        order = np.random.default_rng(0).permutation(len(x))
        shuffled = t.transform(x[order], [langs[i] for i in order], side, 0.7)
        assert parts.tobytes() == single.tobytes() == out.tobytes() == shuffled[np.argsort(order)].tobytes()
        small = type(t).from_tensors(t.learned_tensors(), source_lang="en", meta=dict(t.meta))  # tiny chunks, same bits
        small.chunk_rows, small.sub_rows = 5, 3
        assert small.transform(x, langs, side, 0.7).tobytes() == out.tobytes()
        buf = x.copy()
        assert t.transform(buf, langs, side, 0.7, out=buf) is buf and buf.tobytes() == out.tobytes()
        assert t.transform(x, langs, side, 0.0).tobytes() == x.tobytes()  # alpha 0: the identity, bit for bit
        if t.per_language:  # rows of unknown or unfitted languages stay as they are
            assert out[-3:].tobytes() == x[-3:].tobytes()


def test_alpha_overrides_name_fitted_languages(method):
    x, langs, _ = data()
    t = fitted(method)
    side = t.sides[0]
    np.testing.assert_array_equal(t.transform(x, langs, side, {"*": 0.5, "de": 1.0})[[i for i, l in enumerate(langs) if l == "de"]],
                                  t.transform(x, langs, side, 1.0)[[i for i, l in enumerate(langs) if l == "de"]])
    with pytest.raises(MlirkitError, match="'zz'"):
        t.transform(x, langs, side, {"zz": 0.5})


def test_files_round_trip_exactly(method, tmp_path):
    x, langs, _ = data()
    t = fitted(method)
    t.encoder = {"class": "toy", "model": "toy"}
    path = save_transform(t, tmp_path / f"{method}.safetensors")
    back = load_transform(path)
    assert type(back) is type(t) and back.languages == t.languages and back.source_lang == "en"
    assert back.get_params() == t.get_params() and back.encoder == t.encoder and back.sha256 == t.sha256
    assert {k: v.tobytes() for k, v in back.tensors().items()} == {k: v.tobytes() for k, v in t.tensors().items()}
    for side in t.sides:
        assert back.transform(x, langs, side, 0.8).tobytes() == t.transform(x, langs, side, 0.8).tobytes()
    json.dumps(back.describe(0.8))
    assert back.describe(0.8)["method"] == method


def test_a_method_registered_outside_the_package_is_a_first_class_citizen(tmp_path, capsys):
    """experiments/ registers shift-overall (one class, one registry entry): fit, file, CLI choices."""
    from experiments.corpus_variants import OverallShiftTransform
    from mlirkit.shift.cli import build_parser

    x, langs, _ = data()
    t = OverallShiftTransform("en", min_docs=5).fit(x, langs)
    back = load_transform(save_transform(t, tmp_path / "o.safetensors"))
    assert back.method == "shift-overall" and back.transform(x, langs, "doc").tobytes() == t.transform(x, langs, "doc").tobytes()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "--method", "help-me", "--output", "x"])
    assert "shift-overall" in capsys.readouterr().err


def test_the_public_fitting_surface_is_the_estimators_and_three_array_builders():
    """Every public fitting name of ``mlirkit``, ``mlirkit.transforms`` and ``mlirkit.shift`` is one of the three
    array builders (pairs, index, ``.pt``) or a registered estimator, and docs/python.md lists them all."""
    from pathlib import Path

    import mlirkit
    import mlirkit.shift
    import mlirkit.transforms

    builders = {"fit_from_pairs", "fit_from_index", "import_shift_pt"}
    modules = (mlirkit, mlirkit.transforms, mlirkit.shift)
    fitting = {n for m in modules for n in m.__all__ if n.startswith(("fit", "import_"))}
    assert fitting == builders
    estimators = {path.partition(":")[2] for path in METHODS.values()}
    contract = {"LanguageTransform", "OffsetTransform", "PerLanguageTransform", "ProjectionTransform"}
    assert {n for n in mlirkit.transforms.__all__ if n.endswith("Transform")} == estimators | contract
    doc = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text(encoding="utf-8")
    section = doc.split("## Fitting a transform")[1].split("\n## ")[0]
    assert [n for n in sorted(builders | estimators) if f"{n}(" not in section] == []
