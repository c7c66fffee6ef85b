"""Each DCL loss against a direct numpy computation on small tensors."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mlirkit.train.losses import (  # noqa: E402
    DCLObjective, DCLOutputs, LossWeights, OrthogonalityLoss, consistency_loss, hard_negative_mask,
    orthogonality_loss, retrieval_infonce, rho, sentence_contrastive_loss, supervised_contrastive_loss,
    token_contrastive_loss, weighted_total,
)


def _norm(x):
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _cos(a, b):
    return _norm(a) @ _norm(b).T


def _cl(pos, negs, tau):
    """-log e^{pos/tau} / (e^{pos/tau} + sum e^{neg/tau})"""
    num = math.exp(pos / tau)
    return -math.log(num / (num + sum(math.exp(n / tau) for n in negs)))


def _t(x):
    return torch.tensor(np.asarray(x), dtype=torch.float64)


RNG = np.random.default_rng(0)


# ---------------------------------------------------------------- orthogonality
def test_orthogonality_matches_numpy():
    zs, zl = RNG.normal(size=(5, 4)), RNG.normal(size=(5, 4))
    expected = ((_norm(zs).T @ _norm(zl)) ** 2).sum() / 5
    assert float(orthogonality_loss(_t(zs), _t(zl))) == pytest.approx(expected, rel=1e-10)
    assert float(OrthogonalityLoss()(_t(zs), _t(zl))) == pytest.approx(expected, rel=1e-10)


def test_orthogonality_zero_for_orthogonal_reps():
    # semantic features live on items whose language features cancel: Z_s^T Z_l = 0 exactly
    zs = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    zl = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    assert float(orthogonality_loss(_t(zs), _t(zl))) == pytest.approx(0.0, abs=1e-12)
    # and it is positive as soon as they share a direction
    assert float(orthogonality_loss(_t(zs), _t(zs))) > 0.5


# ---------------------------------------------------------------- sentence level
def _sentence_reference(s, pairs, tau, k):
    sim = _cos(s, s)
    vals = []
    for i, j in pairs:
        for a, b in ((i, j), (j, i)):
            others = [m for m in range(len(s)) if m not in (a, b)]
            others.sort(key=lambda m: -sim[a, m])
            negs = others[:k] if k > 0 else others
            vals.append(_cl(sim[a, b], [sim[a, m] for m in negs], tau))
    return float(np.mean(vals))


@pytest.mark.parametrize("k", [0, 1, 2, 3, 10])
def test_sentence_loss_matches_reference(k):
    s = RNG.normal(size=(8, 5))
    pairs = [(0, 4), (1, 5), (2, 6), (3, 7)]
    got = sentence_contrastive_loss(_t(s), torch.tensor(pairs), tau=0.1, top_k=k)
    assert float(got) == pytest.approx(_sentence_reference(s, pairs, 0.1, k), rel=1e-9)


def test_hard_negatives_exclude_the_pair_itself():
    # item 1 is the translation of 0 and the closest to it; 2 is an exact copy of 0 (most similar)
    s = np.array([[1.0, 0.0, 0.0], [0.99, 0.1, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.1], [0.0, 0.0, 1.0]])
    pairs = torch.tensor([[0, 1], [3, 5]])
    sim = torch.tensor(_cos(s, s))
    mask = hard_negative_mask(sim, pairs, top_k=2)
    # anchor 0 (row 0): never 0 or 1; the top-2 of the rest are 2 (cos 1) and 4
    assert mask[0].nonzero().flatten().tolist() == [2, 4]
    # anchor 1 (row 2, second direction of pair 0): never 0 or 1
    assert not mask[2, 0] and not mask[2, 1] and int(mask[2].sum()) == 2
    # anchor 3 / 5: never 3 and 5
    for row in (1, 3):
        assert not mask[row, 3] and not mask[row, 5] and int(mask[row].sum()) == 2


def test_sentence_loss_without_pairs_is_zero_and_differentiable():
    s = _t(RNG.normal(size=(3, 4))).requires_grad_()
    out = sentence_contrastive_loss(s, torch.zeros((0, 2), dtype=torch.long), tau=0.1, top_k=2)
    assert float(out.detach()) == 0.0
    out.backward()
    assert s.grad is not None


# ---------------------------------------------------------------- token level
def test_token_loss_matches_reference():
    u, v = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    pool = np.concatenate([u, v])
    sim = _cos(pool, pool)
    tau, vals = 0.2, []
    for t in range(4):
        for a, b in ((t, 4 + t), (4 + t, t)):
            negs = [sim[a, m] for m in range(8) if m not in (t, 4 + t)]
            vals.append(_cl(sim[a, b], negs, tau))
    got = token_contrastive_loss(_t(u), _t(v), tau=tau)
    assert float(got) == pytest.approx(np.mean(vals), rel=1e-9)


def test_token_loss_empty_is_zero():
    e = torch.zeros((0, 3), dtype=torch.float64)
    assert float(token_contrastive_loss(e, e, tau=0.1)) == 0.0


# ---------------------------------------------------------------- rho consistency
def test_rho_is_the_delta_ratio():
    x, a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    tau = 0.3
    da, db = np.exp(_cos(x, a) / tau), np.exp(_cos(x, b) / tau)
    np.testing.assert_allclose(rho(_t(x), _t(a), _t(b), tau=tau).numpy(), da / (da + db), rtol=1e-10)


def test_consistency_minimum_zero_at_one_half():
    # x equidistant from a and b: rho = 1/2 and the loss is exactly 0
    a, b = np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]])
    x = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert float(consistency_loss(_t(x), _t(a), _t(b), tau=0.05)) == pytest.approx(0.0, abs=1e-12)


def test_consistency_matches_reference_and_is_positive_elsewhere():
    x, a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4))
    tau = 0.1
    r = 1.0 / (1.0 + np.exp(-(_cos(x, a) - _cos(x, b)) / tau))
    expected = np.mean(-0.5 * np.log(r) - 0.5 * np.log(1 - r) - math.log(2))
    got = float(consistency_loss(_t(x), _t(a), _t(b), tau=tau))
    assert got == pytest.approx(expected, rel=1e-9)
    assert got > 0


def test_consistency_empty_monolingual_is_zero():
    assert float(consistency_loss(torch.zeros((0, 3)), torch.ones((2, 3)), torch.ones((2, 3)), tau=0.1)) == 0.0


# ---------------------------------------------------------------- language debiasing (SupCon)
def _supcon_reference(z, labels, tau):
    sim = _cos(z, z) / tau
    vals = []
    for a in range(len(z)):
        pos = [p for p in range(len(z)) if p != a and labels[p] == labels[a]]
        if not pos:
            continue
        denom = sum(math.exp(sim[a, k]) for k in range(len(z)) if k != a)
        vals.append(-np.mean([math.log(math.exp(sim[a, p]) / denom) for p in pos]))
    return float(np.mean(vals)) if vals else 0.0


def test_supcon_matches_reference_and_skips_anchors_without_positive():
    z = RNG.normal(size=(6, 4))
    labels = [0, 0, 1, 1, 1, 2]  # anchor 5 has no positive
    got = supervised_contrastive_loss(_t(z), torch.tensor(labels), tau=0.5)
    assert float(got) == pytest.approx(_supcon_reference(z, labels, 0.5), rel=1e-9)
    # including anchor 5 as a zero term would lower the mean: make sure it is not counted
    with_five = _supcon_reference(z, labels, 0.5) * 5 / 6
    assert float(got) != pytest.approx(with_five, rel=1e-6)


def test_supcon_zero_when_no_anchor_has_a_positive():
    z = _t(RNG.normal(size=(3, 4))).requires_grad_()
    out = supervised_contrastive_loss(z, torch.tensor([0, 1, 2]), tau=0.1)
    assert float(out.detach()) == 0.0
    out.backward()


# ---------------------------------------------------------------- retrieval InfoNCE
def _retrieval_reference(q, pos, hard, tau, in_batch):
    b, h = len(q), hard.shape[1]
    docs = np.concatenate([pos, hard.reshape(b * h, -1)])
    owner = list(range(b)) + [i // h for i in range(b * h)]
    sim = _cos(q, docs)
    vals = []
    for i in range(b):
        negs = [sim[i, c] for c in range(len(docs)) if c != i and (in_batch or owner[c] == i)]
        vals.append(_cl(sim[i, i], negs, tau))
    return float(np.mean(vals))


@pytest.mark.parametrize("in_batch", [True, False])
def test_retrieval_infonce_matches_reference(in_batch):
    q, pos, hard = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 2, 4))
    got = retrieval_infonce(_t(q), _t(pos), _t(hard), tau=0.05, in_batch=in_batch)
    assert float(got) == pytest.approx(_retrieval_reference(q, pos, hard, 0.05, in_batch), rel=1e-9)


def test_retrieval_query_offset_selects_own_positive_in_gathered_documents():
    q, pos, hard = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=(4, 1, 3))
    full = retrieval_infonce(_t(q), _t(pos), _t(hard), tau=0.1)
    first = retrieval_infonce(_t(q[:2]), _t(pos), _t(hard), tau=0.1, query_offset=0)
    second = retrieval_infonce(_t(q[2:]), _t(pos), _t(hard), tau=0.1, query_offset=2)
    assert float(full) == pytest.approx((float(first) + float(second)) / 2, rel=1e-10)


# ---------------------------------------------------------------- total
def test_weighted_total_formula():
    w = LossWeights(ret=1.0, sent_p=2.0, lambda_t=0.5, lambda_q=0.25, ldcl=3.0, orth=0.1, lambda_d=0.2)
    losses = {k: torch.tensor(v) for k, v in
              {"ret": 1.0, "sent_p": 2.0, "tok_p": 3.0, "sent_q": 4.0, "tok_q": 5.0, "ldcl": 6.0, "orth": 7.0}.items()}
    hsa = (2.0 * 2.0 + 0.5 * 3.0) + 0.25 * (4.0 + 0.5 * 5.0)
    expected = 1.0 + 0.2 * (hsa + 3.0 * 6.0 + 0.1 * 7.0)
    assert float(weighted_total(losses, w)) == pytest.approx(expected)


def test_objective_skips_switched_off_terms():
    n = 4
    z = _t(RNG.normal(size=(n, 3)))
    out = DCLOutputs(q=z[:2], pos=z[2:], hard=None, s_par=z, pairs=torch.tensor([[0, 2], [1, 3]]),
                     s_mono=z[:1], tok_u=z[:2], tok_v=z[2:], tok_mono=z[:1], z_s=z, z_l=z.flip(0),
                     labels=torch.tensor([0, 0, 1, 1]))
    full = DCLObjective(LossWeights())(out)
    assert set(full) == {"ret", "sent_p", "tok_p", "sent_q", "tok_q", "ldcl", "orth", "total"}
    off = DCLObjective(LossWeights(ldcl=0.0, orth=0.0, lambda_t=0.0))(out)
    assert set(off) == {"ret", "sent_p", "sent_q", "total"}
    expected = float(off["ret"]) + float(off["sent_p"]) + float(off["sent_q"])
    assert float(off["total"]) == pytest.approx(expected)
