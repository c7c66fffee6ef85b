"""The held-out split of the language classifier's evaluation (experiments/langid_eval.py)."""
from __future__ import annotations

import pytest

from experiments.langid_eval import fit_with_heldout, is_heldout
from mlirkit.base.errors import MlirkitError
from mlirkit.transforms.parallel import ParallelGroup
from tests.helpers import ClusterEncoder


def test_fit_with_langid_and_heldout():
    groups = [ParallelGroup(str(i), {"en": f"e{i}", "de": f"d{i}", "fr": f"f{i}"}) for i in range(300)]
    t = fit_with_heldout(ClusterEncoder(), groups, method="shift", source_lang="en", langid=True, heldout=0.2,
                         batch_size=30)
    n_held = sum(is_heldout(g.id, 0.2) for g in groups)
    assert 30 < n_held < 90 and t.meta["fit"]["heldout_groups"] == n_held
    assert t.meta["fit"]["groups_used"] == 300 - n_held
    assert t.meta["pairs"] == {"de": 300 - n_held, "fr": 300 - n_held}
    held = t.langid.info["heldout"]
    assert held["n"] == 3 * n_held and held["accuracy"] > 0.95 and held["fraction"] == 0.2
    assert sum(t.langid.info["train_per_language"].values()) == 3 * (300 - n_held)
    # without --langid the held-out ids are simply kept out (and not encoded)
    t2 = fit_with_heldout(ClusterEncoder(), groups, method="shift", source_lang="en", heldout=0.2, batch_size=30)
    assert t2.meta["fit"]["heldout_groups"] == n_held and t2.meta["fit"]["texts_encoded"] == 3 * (300 - n_held)
    assert t2.meta["pairs"] == t.meta["pairs"] and t2.langid is None
    with pytest.raises(MlirkitError, match="outside"):
        fit_with_heldout(ClusterEncoder(), groups, method="shift", source_lang="en", heldout=1.0)
