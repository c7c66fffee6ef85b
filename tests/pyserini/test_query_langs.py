"""Per-query languages in the Pyserini search wrapper (no JVM: the query encoder and the topics map)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.testing.fake_encoder import FakeEncoder


def centering(dim):
    from mlirkit.transforms.centering import CenteringTransform

    rng = np.random.default_rng(3)
    enc = FakeEncoder(dim)
    return enc, CenteringTransform.from_tensors({la: rng.normal(size=dim) for la in ("en", "de", "fr")},
                                   encoder=enc.fingerprint, source_lang="en")


def test_query_encoder_uses_each_query_language(tmp_path):
    from mlirkit.pyserini.encoders import MlirkitQueryEncoder
    from mlirkit.pyserini.search.cli import topic_langs

    enc, t = centering(16)
    topics = tmp_path / "q.jsonl"
    rows = [("q1", "the ferry", "en"), ("q2", "die Fähre", "de"), ("q3", "le ferry", "fr"), ("q4", "ferry?", None)]
    topics.write_text("".join(json.dumps({"_id": i, "text": x, **({"lang": la} if la else {})}) + "\n"
                              for i, x, la in rows))
    langs = topic_langs(str(topics), default_lang="de")
    assert langs == {"the ferry": "en", "die Fähre": "de", "le ferry": "fr", "ferry?": "de"}
    assert topic_langs("msmarco-passage-dev-subset") is None
    multi = MlirkitQueryEncoder(encoder=enc, transform=t, query_langs=langs)
    got = multi.encode_batch([x for _, x, _ in rows])
    for (_, text, lang), vec in zip(rows, got):
        one = MlirkitQueryEncoder(encoder=enc, transform=t, query_lang=lang or "de").encode(text)
        np.testing.assert_allclose(vec, one, rtol=1e-6)
    assert not np.allclose(got[0], MlirkitQueryEncoder(encoder=enc, transform=t, query_lang="de").encode("the ferry"))


def test_topic_langs_refuses_one_text_in_two_languages(tmp_path):
    from mlirkit.pyserini.search.cli import topic_langs

    topics = tmp_path / "q.tsv"
    topics.write_text("q1\tinternet\ten\nq2\tinternet\tde\n")
    with pytest.raises(MlirkitError, match="cannot be told apart"):
        topic_langs(str(topics))
