"""Held-out evaluation of language identification (``experiments.langid_eval``): the figures come from
``mlirkit.eval`` (hand-computed cases, including the worked example of docs/design.md)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.parallel import ParallelGroup
from tests.helpers import ClusterEncoder


def test_rank_metrics_hand_computed():
    from experiments.langid_eval import rank_metrics

    # one query (en, group g1); docs: d_en(g1), d_de(g1), d_fr(g1), x_en(g2); top-2 = d_en, x_en
    scores = np.array([[0.9, 0.1, 0.2, 0.8]])
    m = rank_metrics(scores, ["g1", "g1", "g1", "g2"], ["en", "de", "fr", "en"], ["g1"], "en", k=2)
    assert m["tlr@2"] == 0.0 and m["recall@2"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["ndcg@2"] == pytest.approx(1.0 / (1 + 1 / np.log2(3)), abs=1e-4)
    # docs/design.md worked example: top-2 = {d_en, d_de} -> TLR@2 = 1/2
    m = rank_metrics(np.array([[0.9, 0.8, 0.1, 0.0]]), ["g1", "g1", "g1", "g2"], ["en", "de", "fr", "en"], ["g1"], "en", k=2)
    assert m["tlr@2"] == 0.5 and m["ndcg@2"] == pytest.approx(1.0) and m["share_query_lang@2"] == 0.5


def test_evaluate_langid_on_heldout_groups():
    from experiments.langid_eval import evaluate_langid, fit_with_heldout

    class Enc(ClusterEncoder):
        def encode_queries(self, texts, langs=None, *, batch_size=None, show_progress=False):
            return self.encode_docs(texts, langs)

    groups = [ParallelGroup(str(i), {"en": f"e{i}", "de": f"d{i}", "fr": f"f{i}"}) for i in range(300)]
    t = fit_with_heldout(Enc(), groups, method="shift", source_lang="en", langid=True, heldout=0.2, batch_size=30)
    res = evaluate_langid(Enc(), t, groups, max_groups=20)
    assert res["groups"] == 20 and res["documents"] == 60 and res["langid"]["accuracy"] > 0.9
    assert set(res["retrieval"]) == {"no transform", "true labels", "predicted labels", "predicted labels, no threshold"}
    assert res["retrieval"]["true labels"] == res["retrieval"]["predicted labels, no threshold"]  # perfect classifier
    with pytest.raises(MlirkitError, match="held-out"):
        t.langid.info.pop("heldout")
        evaluate_langid(Enc(), t, groups)


def test_rank_metrics_ties_and_unknown_languages():
    from experiments.langid_eval import rank_metrics

    # equal scores: documents ranked by position; top-2 = d0 (g1, en), d1 (g2, en)
    m = rank_metrics(np.zeros((1, 4)), ["g1", "g2", "g1", "g1"], ["en", "en", "de", "fr"], ["g1"], "en", k=2)
    assert m == {"ndcg@2": pytest.approx(1 / (1 + 1 / np.log2(3)), abs=1e-4), "recall@2": pytest.approx(1 / 3, abs=1e-4),
                 "tlr@2": 0.0, "tlr_queries": 1, "share_query_lang@2": 1.0}
    # a relevant document of unknown language is not a TLR target; a query without targets is not counted
    m = rank_metrics(np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]), ["g1", "g1", "g2"], ["en", "und", "de"],
                     ["g1", "g2"], "en", k=3)
    assert m["tlr_queries"] == 1 and m["tlr@3"] == 1.0  # g2's only relevant document is German: found
    m = rank_metrics(np.array([[0.1, 0.2]]), ["g1", "g1"], ["en", "und"], ["g1"], "en", k=2)
    assert m["tlr_queries"] == 0 and m["tlr@2"] is None
