"""The two forms of L_LDCL (other-language negatives, as in the paper's text; SupCon) and of L^Q (paired one to
one, as in the paper's batches; every pair) against numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mlirkit.train.losses import (  # noqa: E402
    DCLObjective, DCLOutputs, LossWeights, consistency_loss, other_language_contrastive_loss,
    paired_consistency_loss, supervised_contrastive_loss,
)

RNG = np.random.default_rng(7)


def _cos(a, b):
    a = np.asarray(a, float) / np.linalg.norm(a, axis=-1, keepdims=True)
    b = np.asarray(b, float) / np.linalg.norm(b, axis=-1, keepdims=True)
    return a @ b.T


def _t(x):
    return torch.tensor(np.asarray(x), dtype=torch.float64)


def _ldcl_reference(z, labels, tau):
    """mean over (k, p) same language, p != k, of CL(l_k, l_p, {l_r : lang r != lang k})."""
    sim = _cos(z, z)
    vals = []
    for k in range(len(z)):
        negs = [r for r in range(len(z)) if labels[r] != labels[k]]
        for p in range(len(z)):
            if p == k or labels[p] != labels[k]:
                continue
            num = math.exp(sim[k, p] / tau)
            den = num + sum(math.exp(sim[k, r] / tau) for r in negs)
            vals.append(-math.log(num / den))
    return float(np.mean(vals)) if vals else 0.0


@pytest.mark.parametrize("labels", [[0, 0, 1, 1, 1, 2], [0, 0, 0, 0, 1, 1], [3, 3, 3, 3, 3, 3]])
def test_other_language_loss_matches_reference(labels):
    z = RNG.normal(size=(6, 4))
    got = other_language_contrastive_loss(_t(z), torch.tensor(labels), tau=0.3)
    assert float(got) == pytest.approx(_ldcl_reference(z, labels, 0.3), rel=1e-9)


def test_other_language_loss_differs_from_supcon_and_ignores_same_language_items_in_denominator():
    z = RNG.normal(size=(6, 4))
    labels = torch.tensor([0, 0, 0, 1, 1, 2])
    paper = float(other_language_contrastive_loss(_t(z), labels, tau=0.3))
    assert paper != pytest.approx(float(supervised_contrastive_loss(_t(z), labels, tau=0.3)), rel=1e-6)
    # moving a *third* same-language item leaves the (0, 1) term unchanged: only other-language items count
    z2 = z.copy()
    z2[2] = RNG.normal(size=4)
    sim, sim2 = _cos(z, z), _cos(z2, z2)
    negs = [3, 4, 5]
    term = lambda s: -s[0, 1] / 0.3 + math.log(math.exp(s[0, 1] / 0.3) + sum(math.exp(s[0, r] / 0.3) for r in negs))  # noqa: E731
    assert term(sim) == pytest.approx(term(sim2), rel=1e-12)


def test_other_language_loss_zero_without_positives_and_differentiable():
    z = _t(RNG.normal(size=(3, 4))).requires_grad_()
    out = other_language_contrastive_loss(z, torch.tensor([0, 1, 2]), tau=0.1)
    assert float(out.detach()) == 0.0
    out.backward()
    assert z.grad is not None
    # one language only: positives but no negatives -> every term is -log 1 = 0
    z = _t(RNG.normal(size=(3, 4)))
    assert float(other_language_contrastive_loss(z, torch.tensor([5, 5, 5]), tau=0.1)) == pytest.approx(0.0, abs=1e-12)


def _paired_reference(x, a, b, tau):
    vals = []
    for k in range(len(x)):
        p = k % len(a)
        r = 1.0 / (1.0 + math.exp(-(_cos(x[k:k + 1], a[p:p + 1])[0, 0] - _cos(x[k:k + 1], b[p:p + 1])[0, 0]) / tau))
        vals.append(-0.5 * math.log(r) - 0.5 * math.log(1 - r) - math.log(2))
    return float(np.mean(vals))


@pytest.mark.parametrize("m,p", [(4, 4), (5, 3), (2, 4)])
def test_paired_consistency_matches_reference(m, p):
    x, a, b = RNG.normal(size=(m, 5)), RNG.normal(size=(p, 5)), RNG.normal(size=(p, 5))
    got = paired_consistency_loss(_t(x), _t(a), _t(b), tau=0.2)
    assert float(got) == pytest.approx(_paired_reference(x, a, b, 0.2), rel=1e-9)
    # the all-pairs form averages over every (item, pair) combination: a different number in general
    assert float(got) != pytest.approx(float(consistency_loss(_t(x), _t(a), _t(b), tau=0.2)), rel=1e-6)


def test_paired_consistency_equals_all_pairs_diagonal():
    x, a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    diag = np.mean([float(consistency_loss(_t(x[k:k + 1]), _t(a[k:k + 1]), _t(b[k:k + 1]), tau=0.1)) for k in range(3)])
    assert float(paired_consistency_loss(_t(x), _t(a), _t(b), tau=0.1)) == pytest.approx(diag, rel=1e-10)


def test_paired_consistency_empty_is_zero():
    assert float(paired_consistency_loss(torch.zeros((0, 3)), torch.ones((2, 3)), torch.ones((2, 3)), tau=0.1)) == 0.0
    assert float(paired_consistency_loss(torch.ones((2, 3)), torch.zeros((0, 3)), torch.zeros((0, 3)), tau=0.1)) == 0.0


def _outputs():
    z = _t(RNG.normal(size=(6, 3)))
    return DCLOutputs(q=z[:2], pos=z[2:4], hard=None, s_par=z[:4], pairs=torch.tensor([[0, 2], [1, 3]]),
                      s_mono=z[4:], tok_u=z[:2], tok_v=z[2:4], tok_mono=z[3:6], z_s=z, z_l=z.flip(0),
                      labels=torch.tensor([0, 0, 1, 1, 2, 2]))


def test_objective_uses_the_paper_forms_by_default_and_the_old_ones_on_request():
    o = _outputs()
    paper = DCLObjective(LossWeights())(o)
    old = DCLObjective(LossWeights(), ldcl_negatives="all", consistency_pairing="all_pairs")(o)
    a, b = o.s_par[o.pairs[:, 0]], o.s_par[o.pairs[:, 1]]
    assert float(paper["ldcl"]) == pytest.approx(float(other_language_contrastive_loss(o.z_l, o.labels, tau=0.1)))
    assert float(paper["sent_q"]) == pytest.approx(float(paired_consistency_loss(o.s_mono, a, b, tau=0.05)))
    assert float(paper["tok_q"]) == pytest.approx(float(paired_consistency_loss(o.tok_mono, o.tok_u, o.tok_v, tau=0.05)))
    assert float(old["ldcl"]) == pytest.approx(float(supervised_contrastive_loss(o.z_l, o.labels, tau=0.1)))
    assert float(old["sent_q"]) == pytest.approx(float(consistency_loss(o.s_mono, a, b, tau=0.05)))
    with pytest.raises(ValueError):
        DCLObjective(LossWeights(), ldcl_negatives="nope")
