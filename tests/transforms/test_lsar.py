"""LSAR equals an independent numpy transcription of the authors' computation (Xie et al., EMNLP 2022; the
repository "LSAR: Low-rank Subspaces for language-Agnostic Representations", ``src/alignment``:
``build_aligner("lsar+r", lan_emb)``, ``lsar`` and ``lir``) on the same inputs: real e5-small embeddings of
XQuAD-R paragraphs in 8 languages (tests/transforms/data)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import LSARTransform, load_transform, save_transform

DATA = Path(__file__).parent / "data"


def xquad():
    with safe_open(str(DATA / "xquad-r-e5.safetensors"), "np") as f:
        return f.get_tensor("embeddings").astype(np.float32), json.loads(f.metadata()["langs"])


# ---------------------------------------------------------------- the authors' code, transcribed
def authors_lsar(W, k):
    """``lsar(W, k, returns_all=True)`` of ``src/alignment/_low_rank.py``: ``(wc_new, prod, Ws_new, Gamma_new)``."""
    d, D = W.shape
    wc = W @ np.ones(D) / D
    u, s, vh = np.linalg.svd(W - wc.reshape(-1, 1) @ np.ones((1, D)))
    Ws, Gamma = u[:, :k], vh.T[:, :k] @ np.diag(s[:k])
    best_fit_W = wc.reshape(-1, 1) @ np.ones((1, D)) + Ws @ Gamma.T
    wc_new = np.linalg.pinv(best_fit_W).T @ np.ones(D)
    wc_new /= (wc_new ** 2).sum()
    prod = best_fit_W - wc_new.reshape(-1, 1) @ np.ones((1, D))
    u, s, vh = np.linalg.svd(prod)
    return wc_new, prod, u[:, :k], vh.T[:, :k] @ np.diag(s[:k])


def authors_lir(embed, c, r=1):
    """``lir`` of ``src/alignment/_lir.py``."""
    c = c / np.linalg.norm(c, axis=0, keepdims=True)
    proj = np.matmul(embed, c[:, :r])
    return embed - np.matmul(proj, np.transpose(c[:, :r]))


def authors_aligner(align_method, lan_emb):
    """The ``lsar+`` branch of ``build_aligner`` (``lsar+r`` or ``lsar+n_removed/rank``); ``lan`` is unused."""
    rank = align_method.split("+")[-1].split("/")
    n_removed, rank = (int(rank[0]), int(rank[0])) if len(rank) == 1 else (int(rank[0]), int(rank[1]))
    lan_mean_emb = {lan: np.mean(emb, axis=0) for lan, emb in lan_emb.items()}
    _, _, Ws, _ = authors_lsar(np.stack(list(lan_mean_emb.values())).T, rank)
    return lambda embed, lan: authors_lir(embed, Ws, r=n_removed)


# ---------------------------------------------------------------- the comparison
def by_language(x, langs):
    return {la: x[[i for i, l in enumerate(langs) if l == la]] for la in ["ar", "de", "el", "en", "es", "hi", "ru", "th",
                                                                            "tr", "vi", "zh"] if la in langs}


@pytest.mark.parametrize("rank", [1, 3, 7])
def test_lsar_equals_the_authors_computation(rank):
    x, langs = xquad()
    ours = LSARTransform("en", rank=rank).fit(x, langs)
    theirs = authors_aligner(f"lsar+{rank}", by_language(x, langs))
    assert ours.rank_ == rank and ours.meta["directions"] == rank
    for side in ("doc", "query"):  # documents and queries alike, whatever their language
        np.testing.assert_allclose(ours.transform(x, langs, side), theirs(x, None), atol=2e-6)
    # the subspace itself: the projectors agree
    _, _, ws, _ = authors_lsar(np.stack([e.mean(axis=0) for e in by_language(x, langs).values()]).T, rank)
    np.testing.assert_allclose(ours.left_ @ ours.right_, ws @ ws.T, atol=1e-6)


def test_the_published_rank_is_the_number_of_languages_and_its_last_direction_is_null():
    """lsar+11 on XQuAD-R's 11 languages, lsar+7 on MLQA-R's 7: r = D. The centred means span D - 1 dimensions,
    so the authors' D-th direction has singular value 0 up to rounding (an arbitrary direction of the noise):
    mlirkit removes the D - 1 others, which is the authors' lsar+(D-1)/D."""
    x, langs = xquad()
    groups = by_language(x, langs)
    D = len(groups)
    ours = LSARTransform("en").fit(x, langs)  # rank None: the number of languages
    assert ours.meta["rank"] is None and ours.meta["subspace_rank"] == D == 8
    assert ours.meta["directions"] == D - 1 and ours.rank_ == D - 1
    _, prod, _, _ = authors_lsar(np.stack([e.mean(axis=0) for e in groups.values()]).T, D)
    s = np.linalg.svd(prod, compute_uv=False)
    assert s[D - 1] < 1e-10 * s[0] and s[D - 2] > 1e-4 * s[0]
    assert ours.meta["singular_values"][-1] < 1e-10 * ours.meta["singular_values"][0]
    theirs = authors_aligner(f"lsar+{D - 1}/{D}", groups)
    np.testing.assert_allclose(ours.transform(x, langs, "doc"), theirs(x, None), atol=2e-6)


def test_lsar_needs_no_parallel_text_and_refuses_what_the_authors_cannot_do(tmp_path):
    x, langs = xquad()
    t = LSARTransform("en", rank=5)
    assert not t.needs_groups
    t.fit(x, langs)  # no groups: language means only
    back = load_transform(save_transform(t, tmp_path / "lsar.safetensors"))
    assert back.get_params() == {"source_lang": "en", "rank": 5}
    assert back.transform(x, langs, "query").tobytes() == t.transform(x, langs, "query").tobytes()
    unknown = t.transform(x[:3], ["und", "", None], "doc")  # the map does not depend on the language
    assert unknown.tobytes() == t.transform(x[:3], ["de", "de", "de"], "doc").tobytes()
    with pytest.raises(MlirkitError, match="rank 9 is larger than the number of languages fitted on \\(8"):
        LSARTransform("en", rank=9).fit(x, langs)
    with pytest.raises(MlirkitError, match="at least two languages"):
        LSARTransform("en").fit(x[:5], ["en"] * 5)
    with pytest.raises(MlirkitError, match="rank"):  # stored as given, refused by fit
        LSARTransform("en", rank=0).fit(x, langs)
