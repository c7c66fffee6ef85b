"""The one matching rule for language tags (mlirkit.base.langs.lookup) where vectors, documents and queries meet."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from mlirkit.base import langs as langs_module
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, lookup, meeting_codes, meets
from mlirkit.eval import evaluate
from mlirkit.search.query_shift import QueryTimeShift
from mlirkit.transforms.hybrid import fill_missing_from_corpus, missing_languages
from mlirkit.transforms.shift_transform import ShiftTransform


@pytest.mark.parametrize("tag, available, expected", [
    ("pt-BR", ["en", "pt"], "pt"), ("zh-CN", ["zh"], "zh"), ("es-419", ["es"], "es"),
    ("eng", ["en"], "en"), ("EN-us", ["en"], "en"), ("cmn", ["zh"], "zh"), ("deu-DE", ["de"], "de"),
    ("dt", ["nl"], "nl"), ("zh-Hant-TW", ["zh", "zh-Hant"], "zh-Hant"), ("pt-BR", ["pt", "pt-BR"], "pt-BR"),
    ("zh-Hant", ["zh"], None),  # a script is never dropped
    ("pt", ["pt-BR"], None),  # lookup only truncates the tag asked about
    ("und", ["und", "en"], None), (None, ["en"], None), ("fr", ["en"], None),
])
def test_lookup_table(tag, available, expected):
    assert lookup(tag, available) == expected


def test_canonical_meets_and_meeting_codes():
    assert [canonical(x) for x in ("eng", "zho", "iw", "dt", "zh-hans", "pt-br")] == ["en", "zh", "he", "nl", "zh-Hans", "pt-BR"]
    assert meets("zh", "zh-CN") and meets("zh-CN", "zh") and meets("eng", "en")
    assert not meets("zh-CN", "zh-TW") and not meets("zh", "zh-Hant") and not meets("und", "und")
    assert meeting_codes(["zh"], ["zh-CN", "en"]) == {"zh-CN": "zh"}
    assert meeting_codes(["zh-CN", "eng"], ["zh", "en"]) == {"zh-CN": "zh"}  # eng is en already (canonical)


RNG = np.random.default_rng(5)
DIM = 8
DOC_LANGS = ["en"] * 25 + ["pt-BR"] * 25 + ["zh-CN"] * 25
EMBS = RNG.normal(size=(len(DOC_LANGS), DIM)).astype(np.float32)
VECTORS = {"pt": RNG.normal(size=DIM), "zh": RNG.normal(size=DIM)}


def bundled() -> ShiftTransform:
    return ShiftTransform.from_tensors(VECTORS, encoder={"model": "toy"}, source_lang="en", meta={"pairs": {"pt": 9, "zh": 9}})


def test_pt_br_and_zh_cn_documents_use_the_bundled_pt_and_zh_vectors(monkeypatch, caplog):
    """Index time and post hoc (fill, then transform) and query time (QueryTimeShift) give pt-BR/zh-CN the
    bundled pt/zh vectors, none filled from the corpus, each fallback logged once."""
    monkeypatch.setattr(langs_module, "_LOGGED", set())
    t = bundled()
    with caplog.at_level(logging.INFO, logger="mlirkit.base.langs"):
        assert missing_languages(t, {"en": 25, "pt-BR": 25, "zh-CN": 25}) == {}
        filled = fill_missing_from_corpus(t, EMBS, DOC_LANGS, origin="idx")
        assert filled is t  # nothing to fill: the tags meet the vectors
        out = t.transform(EMBS, DOC_LANGS, "doc", 1.0)
        again = t.transform(EMBS, DOC_LANGS, "doc", 1.0)
        shift = QueryTimeShift(EMBS, DOC_LANGS, t, metric="ip")
    np.testing.assert_array_equal(out, again)
    plain = t.transform(EMBS, ["en"] * 25 + ["pt"] * 25 + ["zh"] * 25, "doc", 1.0)
    np.testing.assert_array_equal(out, plain)  # the same vectors as documents tagged pt / zh
    assert not np.array_equal(out[25:], EMBS[25:])  # and they did move
    assert shift.source_code("pt-BR") == shift.source_code("pt") > 0 and shift.source_code("zh") > 0
    assert list(shift.doc_codes[25:50]) == [shift.langs.index("pt")] * 25
    assert list(shift.doc_codes[50:]) == [shift.langs.index("zh")] * 25
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("pt-BR documents use the pt vector") == 1
    assert messages.count("zh-CN documents use the zh vector") == 1
    assert not shift.fallback_langs(["pt-BR", "zh-Hans-CN", "zh"]).get("pt-BR")


QRELS = {"q1": {"a": 1, "b": 1}, "q2": {"a": 1, "c": 1}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "a": 1.0}}


def test_a_zh_query_meets_zh_cn_documents_in_samelang_and_tlr():
    same = evaluate(QRELS, {"r": RUN}, ["samelang@1", "tlr@1"], doc_langs={"a": "zh", "b": "en", "c": "en"},
                    query_langs="zh", significance=None)
    for docs, query in ((("zh-CN", "en"), "zh"), (("zh", "en"), "zh-CN"), (("en", "zh"), "eng")):
        doc_langs = {"a": docs[0], "b": docs[1], "c": docs[1]}
        ref = same if query != "eng" else evaluate(QRELS, {"r": RUN}, ["samelang@1", "tlr@1"],
                                                   doc_langs={"a": "en", "b": "zh", "c": "zh"}, query_langs="en",
                                                   significance=None)
        r = evaluate(QRELS, {"r": RUN}, ["samelang@1", "tlr@1"], doc_langs=doc_langs, query_langs=query,
                     significance=None)
        assert r.value("r", "samelang@1") == ref.value("r", "samelang@1") == 0.5
        assert r.value("r", "tlr@1") == ref.value("r", "tlr@1")


def test_a_query_language_no_document_has_is_refused():
    with pytest.raises(MlirkitError, match=r"^query language 'ja' \(query_langs\) meets no document language: "
                                           r"the documents' languages are en, zh-CN$"):
        evaluate(QRELS, {"r": RUN}, ["samelang@1"], doc_langs={"a": "zh-CN", "b": "en"}, query_langs="ja")
    with pytest.raises(MlirkitError, match=r"languages are en, zh-CN \(did you mean: zh-CN\?\)$"):
        evaluate(QRELS, {"r": RUN}, ["tlr@1"], doc_langs={"a": "zh-CN", "b": "en"}, query_langs="zh-TW")
    # metrics that do not compare the query's language with the documents' still run
    r = evaluate(QRELS, {"r": RUN}, ["ndcg@2"], doc_langs={"a": "zh-CN", "b": "en"}, query_langs="ja",
                 significance=None)
    assert r.value("r", "ndcg@2") > 0


def test_index_time_gives_pt_br_documents_the_pt_vector_as_post_hoc_does(tmp_path):
    """The Indexer with the transform (index time) writes the vectors that transforming afterwards gives."""
    from mlirkit.encode import Indexer
    from mlirkit.index.reader import DenseIndex
    from mlirkit.io.records import Doc
    from mlirkit.testing.fake_encoder import FakeEncoder

    encoder = FakeEncoder()
    rng = np.random.default_rng(3)
    t = ShiftTransform.from_tensors({"pt": rng.normal(size=encoder.dim)}, encoder=encoder.fingerprint,
                                    source_lang="en", meta={"pairs": {"pt": 9}})
    from mlirkit.transforms import save_transform

    save_transform(t, tmp_path / "t.shift")
    docs = [Doc(f"d{i}", f"text {i}", "pt-BR" if i % 2 else "en") for i in range(8)]
    Indexer(tmp_path / "idx", encoder, transform=t, save_embeddings=True, show_progress=False).index(docs)
    index = DenseIndex(tmp_path / "idx")
    moved = t.transform(index.embeddings(), index.langs, "doc")
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    np.testing.assert_allclose(index.indexed_vectors(), moved, atol=1e-6)
    assert not np.allclose(moved[1::2], index.embeddings()[1::2] / np.linalg.norm(index.embeddings()[1::2], axis=1,
                                                                                   keepdims=True))
    assert "missing_languages" not in (t.describe(1.0) or {})
