from __future__ import annotations

import random

import pytest

from mlirkit.eval import tlr_at_k
from mlirkit.eval.tlr import TLRResult

LANGS = {"d_en": "en", "d_de": "de", "d_fr": "fr", "e_en": "en", "x_it": "it", "y_und": "und", "z_es": "es"}


def test_authors_worked_example():
    qrels = {"q1": {"d_en": 1, "d_de": 1, "d_fr": 1}}
    run = {"q1": {"d_en": 0.9, "d_de": 0.8, "d_fr": 0.1}}
    assert tlr_at_k(qrels, run, 2, LANGS, "en") == TLRResult(0.5, {"q1": 0.5}, 1)


def test_query_with_only_same_language_relevant_is_excluded_not_zero():
    qrels = {"q1": {"d_en": 1, "d_de": 1, "d_fr": 1}, "q2": {"e_en": 1}}
    run = {"q1": {"d_en": 0.9, "d_de": 0.8}, "q2": {"z_es": 0.5}}
    res = tlr_at_k(qrels, run, 2, LANGS, "en")
    assert res.mean == 0.5 and res.counted == 1 and "q2" not in res.per_query


def test_unknown_language_relevant_docs_are_not_targets():
    # y_und is declared unknown, "missing" has no language at all: neither is a target
    qrels = {"q": {"y_und": 1, "missing": 1, "x_it": 1}}
    run = {"q": {"y_und": 3.0, "missing": 2.0, "x_it": 1.0}}
    assert tlr_at_k(qrels, run, 2, LANGS, "en") == TLRResult(0.0, {"q": 0.0}, 1)
    assert tlr_at_k(qrels, run, 3, LANGS, "en") == TLRResult(1.0, {"q": 1.0}, 1)
    only_unknown = {"q": {"y_und": 1, "missing": 1}}
    assert tlr_at_k(only_unknown, run, 3, LANGS, "en") == TLRResult(None, {}, 0)


def test_undefined_when_no_query_counted():
    res = tlr_at_k({"q": {"e_en": 1, "d_en": 1}}, {"q": {"e_en": 1.0}}, 10, LANGS, "en")
    assert res.mean is None and res.counted == 0 and res.per_query == {}


def test_non_relevant_judgements_and_retrieved_non_relevant_do_not_count():
    qrels = {"q": {"d_de": 0, "d_fr": 1, "x_it": 2}}
    run = {"q": {"d_de": 5.0, "z_es": 4.0, "d_fr": 3.0, "x_it": 1.0}}
    # R = {d_fr, x_it}; top-3 = d_de (rel 0), z_es (unjudged), d_fr -> 1/2
    assert tlr_at_k(qrels, run, 3, LANGS, "en").mean == 0.5


def test_missing_query_in_run_counts_as_zero_and_extra_run_queries_ignored():
    qrels = {"q1": {"d_de": 1}, "q2": {"d_fr": 1}}
    run = {"q1": {"d_de": 1.0}, "other": {"d_fr": 1.0}}
    res = tlr_at_k(qrels, run, 5, LANGS, "en")
    assert res == TLRResult(0.5, {"q1": 1.0, "q2": 0.0}, 2)


def test_ties_broken_by_docid():
    qrels = {"q": {"d_de": 1, "d_fr": 1}}
    run = {"q": {"d_fr": 1.0, "d_en": 1.0, "d_de": 1.0}}  # order: d_de, d_en, d_fr
    assert tlr_at_k(qrels, run, 1, LANGS, "en").mean == 0.5
    assert tlr_at_k(qrels, run, 2, LANGS, "en").mean == 0.5
    assert tlr_at_k(qrels, run, 3, LANGS, "en").mean == 1.0


def test_per_query_languages_and_unknown_query_language():
    qrels = {"q_en": {"d_en": 1, "d_de": 1}, "q_de": {"d_en": 1, "d_de": 1}, "q_und": {"d_de": 1}}
    run = {q: {"d_de": 2.0, "d_en": 1.0} for q in qrels}
    res = tlr_at_k(qrels, run, 1, LANGS, {"q_en": "en", "q_de": "de", "q_und": "und"})
    # q_en: target {d_de} found; q_de: target {d_en} not in top 1; q_und excluded
    assert res.per_query == {"q_en": 1.0, "q_de": 0.0} and res.counted == 2 and res.mean == 0.5


def test_missing_query_language_and_bad_k():
    from mlirkit.base.errors import MlirkitError

    with pytest.raises(MlirkitError, match="no language for 1 of 2 evaluated queries"):
        tlr_at_k({"a": {"d_de": 1}, "b": {"d_de": 1}}, {}, 1, LANGS, {"a": "en"})
    with pytest.raises(ValueError):
        tlr_at_k({"a": {"d_de": 1}}, {}, 0, LANGS, "en")


def _reference_tlr(qrels, run, k, doc_langs, qlang):
    """Straight transcription of the definition, for the randomized comparison."""
    values = {}
    for q, judged in qrels.items():
        target = {d for d, r in judged.items() if r > 0 and doc_langs.get(d, "und") not in (qlang[q], "und")}
        if not target or qlang[q] == "und":
            continue
        top = [d for d, _ in sorted(run.get(q, {}).items(), key=lambda x: (-x[1], x[0]))[:k]]
        values[q] = len(set(top) & target) / len(target)
    return (sum(values.values()) / len(values) if values else None), values


@pytest.mark.parametrize("seed", range(5))
def test_matches_reference_on_random_data(seed):
    rng = random.Random(seed)
    langs = ["en", "de", "fr", "ja", "und"]
    docs = [f"d{i}" for i in range(60)]
    doc_langs = {d: rng.choice(langs) for d in docs if rng.random() > 0.1}
    qrels = {f"q{i}": {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, rng.randint(1, 8))} for i in range(40)}
    run = {q: {d: float(rng.randint(0, 5)) for d in rng.sample(docs, rng.randint(0, 30))} for q in qrels}
    qlang = {q: rng.choice(langs) for q in qrels}
    for k in (1, 3, 10, 100):
        mean, per_query = _reference_tlr(qrels, run, k, doc_langs, qlang)
        res = tlr_at_k(qrels, run, k, doc_langs, qlang)
        assert res.counted == len(per_query)
        assert res.per_query == pytest.approx(per_query)
        assert (res.mean is None and mean is None) or res.mean == pytest.approx(mean)
