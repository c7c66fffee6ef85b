"""Every registered transform method is a scikit-learn estimator: scikit-learn's own checks that apply to an
estimator whose ``fit`` takes languages (not numeric targets) pass, and the checks that need a fit (parameters
untouched by fit, fit idempotence, ``check_is_fitted``) are made here the way scikit-learn makes them, on
embeddings with languages. ``transform`` is pure: it writes nothing on the estimator, and a planted
``transform`` that does fails the same check."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError as SklearnNotFittedError
from sklearn.utils import estimator_checks
from sklearn.utils.validation import check_is_fitted

from mlirkit.transforms import TRANSFORMS, NotFittedError, ShiftTransform, load_transform, save_transform
from mlirkit.transforms.registry import METHODS
from tests.transforms.test_contract import data

#: scikit-learn's checks that need no numeric fit (the rest feed fit(X, y) integers as languages)
SKLEARN_CHECKS = ("check_no_attributes_set_in_init", "check_parameters_default_constructible",
                  "check_get_params_invariance", "check_set_params", "check_estimator_cloneable",
                  "check_estimator_repr", "check_do_not_raise_errors_in_init_or_set_params")

#: a recipe other than the defaults, per method (what clone and set_params must carry over)
RECIPES = {"shift": {"vectors": "corpus", "min_docs": 3, "missing": "keep", "langs": ["de", "fr"]},
           "centering": {}, "lir": {"rank": 2}, "lsar": {"rank": 2}, "leace": {}}


@pytest.fixture(params=list(METHODS))
def method(request) -> str:
    return request.param


def fit_args(t, seed: int = 0):
    x, langs, ids = data(seed)
    return x, langs, ids if t.needs_groups else None


@pytest.mark.parametrize("check", SKLEARN_CHECKS)
def test_scikit_learns_checks_pass(method, check):
    cls = TRANSFORMS.get(method)
    getattr(estimator_checks, check)(cls.__name__, cls("de", **RECIPES[method]))


def test_clone_and_the_params_round_trip_keep_the_recipe_as_given(method):
    cls = TRANSFORMS.get(method)
    t = cls("DE", **RECIPES[method])  # stored as given: fit canonicalises into source_lang_
    params = t.get_params(deep=True)
    assert params == {"source_lang": "DE", **RECIPES[method]} == clone(t).get_params(deep=False)
    assert cls(**params).get_params() == params and repr(t).startswith(f"{cls.__name__}(")
    assert vars(t) == params  # the constructor stores its arguments and nothing else
    other = cls().set_params(**params)
    assert other.get_params() == params
    t.fit(*fit_args(t))
    assert t.get_params() == params and t.source_lang_ == "de"  # fit leaves the parameters alone
    fresh = clone(t)
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(fresh)
    assert not [k for k in vars(fresh) if k.endswith("_")]


def test_check_is_fitted_after_fit_and_after_load(method, tmp_path):
    t = TRANSFORMS.get(method)("en")
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(t)
    with pytest.raises(SklearnNotFittedError):  # mlirkit's own NotFittedError is scikit-learn's too
        t.transform(*data()[:2], "query")
    assert issubclass(NotFittedError, SklearnNotFittedError)
    t.fit(*fit_args(t))
    check_is_fitted(t)
    save_transform(t, tmp_path / "t.safetensors")
    check_is_fitted(load_transform(tmp_path / "t.safetensors"))


def test_fit_is_idempotent_and_a_clone_fits_the_same(method):
    t = TRANSFORMS.get(method)("en", **RECIPES[method])
    args = fit_args(t)
    x = args[0]
    side = t.sides[0]
    first = {k: v.tobytes() for k, v in t.fit(*args).tensors().items()}
    out = t.transform(x, args[1], side).tobytes()
    assert {k: v.tobytes() for k, v in t.fit(*args).tensors().items()} == first
    assert t.transform(x, args[1], side).tobytes() == out
    twin = clone(t).fit(*args)
    assert {k: v.tobytes() for k, v in twin.tensors().items()} == first


def state(t) -> bytes:
    """Everything the estimator holds (parameters, learned state, file layer), byte for byte."""
    return pickle.dumps(vars(t), protocol=5)


def assert_transform_is_pure(t, x, langs) -> None:
    before = state(t)
    for side in ("doc", "query"):
        t.transform(x, langs, side, 0.7)
        t.transform(x, langs, side, {"*": 0.5, "de": 1.0}, counts=None)
    assert state(t) == before, f"{type(t).__name__}.transform changed the estimator's state"


def test_transform_writes_nothing_on_the_estimator(method):
    x, langs, _ = data()
    langs = [*langs[:-3], "und", "", "ko"]  # unknown languages and one never fitted: counted, not stored
    t = TRANSFORMS.get(method)("en")
    t.fit(*fit_args(t))
    assert_transform_is_pure(t, x, langs)


def test_a_planted_transform_that_writes_state_fails_the_purity_check():
    class Counting(ShiftTransform):
        def transform(self, embeddings, langs, side, alpha=1.0, strict=False, **options):
            self.rows_seen_ = getattr(self, "rows_seen_", 0) + len(langs)  # what the contract forbids
            return super().transform(embeddings, langs, side, alpha, strict, **options)

    x, langs, ids = data()
    planted = Counting("en").fit(x, langs, ids)
    with pytest.raises(AssertionError, match="Counting.transform changed the estimator's state"):
        assert_transform_is_pure(planted, x, langs)
    assert_transform_is_pure(ShiftTransform("en").fit(x, langs, ids), x, langs)


def test_the_file_layer_is_not_a_parameter_and_clone_starts_without_it(tmp_path):
    x, langs, ids = data()
    t = ShiftTransform("en").fit(x, langs, ids)
    t.encoder = {"class": "toy", "model": "toy"}
    save_transform(t, tmp_path / "t.safetensors")
    back = load_transform(tmp_path / "t.safetensors")
    assert back.path == tmp_path / "t.safetensors" and back.sha256 and back.encoder == t.encoder
    assert set(back.get_params()) == {"source_lang", "vectors", "missing", "min_docs", "langs"}
    fresh = clone(back)
    assert fresh.path is None and fresh.sha256 is None and fresh.encoder == {} and fresh.meta == {}
